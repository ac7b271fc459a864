import { afterEach, describe, expect, it } from "vitest";
import { EVENT_TYPES } from "../../src/domain/events.js";
import { SIMULATED_OUTCOMES } from "../../src/domain/simulator.js";
import { loadSpec } from "../../src/http/spec.js";
import { ContractChecker, eventDataSchemaName, jsonPointer } from "../helpers/contract.js";
import { databases } from "../helpers/databases.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

interface Event {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

const HOUR = 3_600_000;

/**
 * The `data` of real events, not samples: each event GET /v1/events lists is its type's webhook
 * payload, and its `data` carries no field that type's EventData schema does not declare. The
 * schemas allow more (`additionalProperties: true`, so adding a field is additive within v1), so
 * validation alone would let a field the code adds without the contract through.
 */
describe.each(databases)("webhook event data ($name)", (database) => {
  const checker = new ContractChecker();
  const spec = loadSpec() as unknown;
  let t: TestApp;
  afterEach(async () => t.close());

  const send = async (payload: Record<string, unknown>) => {
    const res = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage(payload) });
    expect(res.statusCode, res.body).toBe(202);
    return res.json().id as string;
  };
  const post = async (url: string, payload: Record<string, unknown> = {}) => {
    const res = await t.call({ method: "POST", url, payload });
    expect(res.statusCode, res.body).toBeLessThan(300);
  };
  const allEvents = async (): Promise<Event[]> => {
    const events: Event[] = [];
    let after: string | null = null;
    do {
      const res = await t.call({ method: "GET", url: `/v1/events?limit=100${after ? `&after=${after}` : ""}` });
      expect(res.statusCode, res.body).toBe(200);
      const page = res.json() as { data: Event[]; has_more: boolean; next_cursor: string | null };
      events.push(...page.data);
      after = page.has_more ? page.next_cursor : null;
    } while (after !== null);
    return events;
  };
  /** What is wrong with one event's data: invalid for its payload, or carrying undeclared fields. */
  const problems = (event: Event): string[] => {
    const schema = jsonPointer(spec, `/components/schemas/${eventDataSchemaName(event.type)}`) as { properties?: Record<string, unknown> } | undefined;
    if (!schema) return [`no ${eventDataSchemaName(event.type)} in the contract`];
    const declared = Object.keys(schema.properties ?? {});
    return [
      ...checker.checkWebhook(event.type, JSON.stringify(event)),
      ...Object.keys(event.data)
        .filter((key) => !declared.includes(key))
        .map((key) => `data.${key} is not declared by ${eventDataSchemaName(event.type)}`),
    ];
  };
  const expectAllDeclared = (events: Event[]) => {
    const wrong = events.flatMap((event) => problems(event).map((problem) => `${event.type} ${event.id}: ${problem}`));
    expect(wrong).toEqual([]);
  };

  it("sends only declared, valid data for every simulator outcome, a schedule, reschedule and cancel, and a suppression", async () => {
    t = await createTestApp(database);
    for (const outcome of SIMULATED_OUTCOMES) {
      await send({ to: `${outcome}@simulator.test`, html: '<p>Hi <a href="https://acme.example/start">Start</a></p>' });
    }
    // Scheduled, then moved (previous_scheduled_at), then canceled (recipients).
    const scheduled = await send({ to: "ada@example.com", scheduled_at: new Date(t.clock.now() + HOUR).toISOString() });
    await post(`/v1/messages/${scheduled}/reschedule`, { scheduled_at: new Date(t.clock.now() + 2 * HOUR).toISOString() });
    await post(`/v1/messages/${scheduled}/cancel`);
    // A scheduled message that is sent when its time comes: queued by the worker.
    await send({ to: "grace@example.com", scheduled_at: new Date(t.clock.now() + HOUR / 2).toISOString() });
    await post("/v1/suppressions", { email: "kept-out@example.com" });
    await send({ to: ["kept-out@example.com", "ada@example.com"] });
    await t.drain();
    // deferred@simulator.test is delivered on its retry.
    t.clock.advance(HOUR);
    await t.drain();

    const events = await allEvents();
    const seen = new Set(events.map((e) => e.type));
    expect(EVENT_TYPES.filter((type) => type !== "message.failed" && !seen.has(type)), "event types this test did not produce").toEqual([]);
    expect(events.some((e) => e.type === "message.scheduled" && "previous_scheduled_at" in e.data)).toBe(true);
    expectAllDeclared(events);
  });

  it("sends only declared, valid data when a recipient's delivery deadline passes (message.failed)", async () => {
    // Deferred on its first attempt, the retry comes after the deadline: it fails with 4.4.7.
    t = await createTestApp(database, { DELIVERY_LIFETIME_SECONDS: "10", SANDBOX_DEFER_SECONDS: "30" });
    await send({ to: "deferred@simulator.test" });
    await t.drain();
    t.clock.advance(60_000);
    await t.drain();
    const events = await allEvents();
    expect(events.map((e) => e.type)).toContain("message.failed");
    expectAllDeclared(events);
  });
});
