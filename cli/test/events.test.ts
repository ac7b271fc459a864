import { describe, expect, it } from "vitest";
import type { Event, PageBody as Page } from "mailroom";
import type { TestServer } from "../../test/helpers/http-server.js";
import { eventually, type FileServer, interruption, page, problemOf, refusedConnection, runCli, type RunningCli, startCli, stubApi, useTestServer } from "./helpers.js";

let server: TestServer;
let env: Record<string, string>;
let mailroom: FileServer["mailroom"];
useTestServer((started) => ({ server, env, mailroom } = started));

/** Sends a message and runs the sandbox pipeline over it; answers its events, oldest first. */
async function deliver(to: string, tags: string[] = []): Promise<{ id: string; events: Event[] }> {
  const { id } = await mailroom.send({ to, tags });
  // The server's clock only moves when told: a second per step keeps every step's events apart.
  server.testApp.clock.advance(1_000);
  await server.testApp.drain();
  server.testApp.clock.advance(1_000);
  const { data } = await mailroom.get<Page<Event>>(`/v1/messages/${id}/events`);
  return { id, events: data };
}

/** For the cases that check what is sent, or that nothing is: a stand-in API. */
const stubEnv = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };

describe("mailroom events list", () => {
  it("prints the environment's events, newest first", async () => {
    const { events } = await deliver("opened@simulator.test");

    const result = await runCli(["events", "list", "--limit", "2"], { env });

    expect(result.code, result.stderr).toBe(0);
    const page = result.json<Page<Event>>();
    // The simulator's opened@ opens twice (a first open, then a repeat): the two newest events.
    expect(page.data.map((event) => event.type)).toEqual(["message.opened", "message.opened"]);
    expect(page.data.map((event) => event.id)).toEqual(events.slice(-2).map((event) => event.id).reverse());
    expect(page.has_more).toBe(true);
  });

  it("keeps only events of the --type given", async () => {
    const { id } = await deliver("bounced@simulator.test");

    const result = await runCli(["events", "list", "--type", "message.bounced"], { env });

    expect(result.code, result.stderr).toBe(0);
    const { data } = result.json<Page<Event>>();
    expect(data.map((event) => [event.type, event.message_id])).toEqual([["message.bounced", id]]);
  });

  it("keeps only the history of the mail to the --recipient given", async () => {
    const { id } = await deliver("ada@example.com");
    await deliver("grace@example.com");

    const result = await runCli(["events", "list", "--recipient", "Ada@example.com"], { env });

    expect(result.code, result.stderr).toBe(0);
    const { data } = result.json<Page<Event>>();
    expect(data.map((event) => [event.type, event.message_id])).toEqual([
      ["message.delivered", id],
      ["message.queued", id],
    ]);
  });

  it("takes the type as --event-type, --type or --events, as every command that takes event types", async () => {
    const stub = stubApi(200, page([]));

    for (const flag of ["--event-type", "--type", "--events"]) await runCli(["events", "list", flag, "message.bounced"], { env: stubEnv, fetch: stub.fetch });

    expect(stub.seen.map((request) => request.target)).toEqual(Array(3).fill("/v1/events?limit=20&type=message.bounced"));
  });

  it.each([
    [["--type", "message.exploded"], '--event-type: unknown event type "message.exploded"; the types are message.queued, '],
    [["--type", "domain.failed"], '--event-type: "domain.failed" goes to webhook endpoints only, not to the event list'],
    [["--type", "message.bounced,message.delivered"], '--event-type takes one event type here; got "message.bounced", "message.delivered".'],
  ])("exits 2 for %j, as every command that takes event types, asking the API nothing", async (flags, message) => {
    const stub = stubApi(200, page([]));

    const result = await runCli(["events", "list", ...flags], { env: stubEnv, fetch: stub.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toEqual({ error: "usage", message: expect.stringContaining(message) });
    expect(stub.seen).toEqual([]);
  });

  it("prints a table on a terminal", async () => {
    const { id } = await deliver("delivered@simulator.test");

    const result = await runCli(["events", "list", "--limit", "1"], { env, tty: true });

    const [header, row] = result.stdout.split("\n");
    expect(header).toMatch(/^ID\s+TYPE\s+MESSAGE\s+RECIPIENT\s+CREATED$/);
    expect(row?.split(/\s+/).slice(1, 4)).toEqual(["message.delivered", id, "delivered@simulator.test"]);
  });
});

describe("mailroom events tail", () => {
  /**
   * Starts a tail that polls every 0.1 s. On a "terminal" so that it says when it is ready (after
   * its first look at the existing events), with --json so that what it prints is JSON lines.
   */
  async function startTail(...flags: string[]): Promise<{ tail: RunningCli; stop(): Promise<{ code: number; events: Event[] }> }> {
    const ctrlC = interruption();
    const tail = startCli(["events", "tail", "--interval", "0.1", "--json", ...flags], { env, tty: true, interrupted: ctrlC.interrupted });
    await eventually(() => expect(tail.stderr()).toContain("Waiting for events (Ctrl-C to stop)…"));
    return {
      tail,
      async stop() {
        // A few more polls first: a tail that prints an event twice would do it now.
        await new Promise((resolve) => setTimeout(resolve, 350));
        ctrlC.interrupt();
        const { code, stdout } = await tail.done;
        return { code, events: linesOf(stdout) };
      },
    };
  }

  const linesOf = (stdout: string): Event[] =>
    stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Event);

  it("prints each new event once, oldest first, one JSON object per line, and exits 0 when interrupted", async () => {
    const { tail, stop } = await startTail();

    const { events } = await deliver("clicked@simulator.test");
    await eventually(() => expect(linesOf(tail.stdout())).toHaveLength(events.length));
    const { code, events: printed } = await stop();

    expect(code).toBe(0);
    expect(printed.map((event) => event.id)).toEqual(events.map((event) => event.id));
    expect(printed.map((event) => event.type)).toEqual(["message.queued", "message.delivered", "message.opened", "message.clicked"]);
    expect(printed[0]).toEqual(events[0]);
  });

  it("does not print the events from before it started", async () => {
    const earlier = await deliver("delivered@simulator.test");
    const { tail, stop } = await startTail();

    const later = await deliver("delivered@simulator.test");
    await eventually(() => expect(linesOf(tail.stdout())).toHaveLength(later.events.length));
    const { events: printed } = await stop();

    expect(printed.map((event) => event.message_id)).not.toContain(earlier.id);
    expect(printed.map((event) => event.id)).toEqual(later.events.map((event) => event.id));
  });

  it("prints an event from the same millisecond as the newest one before it started", async () => {
    const before = await mailroom.send({ to: "ada@example.com" });
    const { tail, stop } = await startTail();

    // The server's clock has not moved: this message's first event has the same created_at.
    const same = await mailroom.send({ to: "ada@example.com" });
    await eventually(() => expect(linesOf(tail.stdout()).map((event) => event.message_id)).toContain(same.id));
    const { events: printed } = await stop();

    expect(printed.map((event) => [event.type, event.message_id])).toEqual([["message.queued", same.id]]);
    expect(printed.map((event) => event.message_id)).not.toContain(before.id);
  });

  it("starts with the earlier events given --since, then follows new ones", async () => {
    const earlier = await deliver("delivered@simulator.test", ["since"]);
    const { tail, stop } = await startTail("--since", "1h");

    await eventually(() => expect(linesOf(tail.stdout()).map((event) => event.message_id)).toContain(earlier.id));
    const later = await deliver("delivered@simulator.test", ["since"]);
    await eventually(() => expect(linesOf(tail.stdout()).map((event) => event.message_id)).toContain(later.id));
    const { events: printed } = await stop();

    const ours = printed.filter((event) => event.tags.includes("since")).map((event) => event.id);
    expect(ours).toEqual([...earlier.events, ...later.events].map((event) => event.id));
    expect(new Set(printed.map((event) => event.id)).size).toBe(printed.length);
  });

  it("prints only events of the --type given", async () => {
    const { tail, stop } = await startTail("--type", "message.bounced");

    await deliver("delivered@simulator.test");
    const bounced = await deliver("bounced@simulator.test");
    await eventually(() => expect(linesOf(tail.stdout())).toHaveLength(1));
    const { events: printed } = await stop();

    expect(printed.map((event) => [event.type, event.message_id])).toEqual([["message.bounced", bounced.id]]);
  });

  it("prints only the history of the mail to the --recipient given", async () => {
    const { tail, stop } = await startTail("--recipient", "ada+tail@example.com", "--type", "message.delivered");

    await deliver("grace+tail@example.com");
    const ada = await deliver("ADA+tail@example.com");
    await eventually(() => expect(linesOf(tail.stdout())).toHaveLength(1));
    const { events: printed } = await stop();

    expect(printed.map((event) => [event.type, event.message_id])).toEqual([["message.delivered", ada.id]]);
  });

  it("prints only events of the types given, several with --events a,b as listen takes them", async () => {
    const { tail, stop } = await startTail("--events", "message.bounced,message.delivered");

    const delivered = await deliver("delivered@simulator.test");
    const bounced = await deliver("bounced@simulator.test");
    await eventually(() => expect(linesOf(tail.stdout())).toHaveLength(2));
    const { events: printed } = await stop();

    expect(printed.map((event) => [event.type, event.message_id])).toEqual([
      ["message.delivered", delivered.id],
      ["message.bounced", bounced.id],
    ]);
  });

  it("exits 2 for an unknown event type before it starts, asking the API nothing", async () => {
    const stub = stubApi(200, page([]));

    const result = await runCli(["events", "tail", "--type", "message.exploded"], { env: stubEnv, fetch: stub.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result).message).toContain('--event-type: unknown event type "message.exploded"');
    expect(stub.seen).toEqual([]);
  });

  it("prints one line per event on a terminal, and says on stderr that it is waiting", async () => {
    const ctrlC = interruption();
    const tail = startCli(["events", "tail", "--interval", "0.1"], { env, tty: true, interrupted: ctrlC.interrupted });
    await eventually(() => expect(tail.stderr()).toBe("Waiting for events (Ctrl-C to stop)…\n"));

    const { id, events } = await deliver("delivered@simulator.test");
    await eventually(() => expect(tail.stdout().split("\n").filter(Boolean)).toHaveLength(events.length));
    ctrlC.interrupt();
    const { code, stdout } = await tail.done;

    expect(code).toBe(0);
    expect(stdout.split("\n").filter(Boolean)).toEqual([
      // message.queued is the message's, not one recipient's: "(message)" stands for the recipient.
      `${events[0]?.created_at}  message.queued        ${id}  (message)  ∅ → queued`,
      `${events[1]?.created_at}  message.delivered     ${id}  delivered@simulator.test  queued → delivered`,
    ]);
  });

  it("keeps tailing through an outage, warning on stderr, and prints what happened meanwhile", async () => {
    let outage = false;
    let refused = 0;
    const flakyFetch = (request: Request) => {
      if (!outage) return fetch(request);
      refused++;
      return refusedConnection();
    };
    const ctrlC = interruption();
    const tail = startCli(["events", "tail", "--interval", "0.1", "--json"], { env, tty: true, interrupted: ctrlC.interrupted, fetch: flakyFetch });
    await eventually(() => expect(tail.stderr()).toContain("Waiting for events"));

    outage = true;
    // One poll's attempts (the first and the SDK's two retries) all fail, then the server is back.
    await eventually(() => expect(refused).toBeGreaterThanOrEqual(3));
    const { events } = await deliver("delivered@simulator.test", ["outage"]);
    outage = false;
    await eventually(() => expect(linesOf(tail.stdout()).filter((event) => event.tags.includes("outage"))).toHaveLength(events.length));
    ctrlC.interrupt();
    const { code, stderr } = await tail.done;

    expect(code).toBe(0);
    expect(stderr).toMatch(/^warning: Could not reach the Mailroom API: ECONNREFUSED — still tailing/m);
  });

  it("waits out an outage at its start, warning on stderr as through any outage, then tails", async () => {
    let outage = true;
    const flakyFetch = (request: Request) => (outage ? refusedConnection() : fetch(request));
    const ctrlC = interruption();
    const tail = startCli(["events", "tail", "--interval", "0.1", "--json"], { env, tty: true, interrupted: ctrlC.interrupted, fetch: flakyFetch });
    await eventually(() => expect(tail.stderr()).toMatch(/^warning: Could not reach the Mailroom API: ECONNREFUSED — still tailing, next try in 0\.1 s$/m));
    expect(tail.stderr()).not.toContain("Waiting for events");

    outage = false;
    await eventually(() => expect(tail.stderr()).toContain("Waiting for events"));
    const { events } = await deliver("delivered@simulator.test", ["late-start"]);
    await eventually(() => expect(linesOf(tail.stdout()).filter((event) => event.tags.includes("late-start"))).toHaveLength(events.length));
    ctrlC.interrupt();

    expect((await tail.done).code).toBe(0);
  });

  it("stops, exit 0, when interrupted while the API is still out at its start", async () => {
    const ctrlC = interruption();
    const tail = startCli(["events", "tail", "--interval", "60"], { env, interrupted: ctrlC.interrupted, fetch: refusedConnection });
    await eventually(() => expect(tail.stderr()).toContain("still tailing"));

    ctrlC.interrupt();

    expect((await tail.done).code).toBe(0);
  });

  it.each([["soon"], ["0"], ["-1"], ["100000"]])("exits 2 for --interval %s, which is not a number of seconds from 0.1 to 86400", async (interval) => {
    const result = await runCli(["events", "tail", "--interval", interval], { env });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toEqual({ error: "usage", message: expect.stringContaining("--interval takes a number of seconds from 0.1 to 86400") });
  }, 5_000);

  it("ends with exit 1 when the key is refused: that will not fix itself", async () => {
    const result = await runCli(["events", "tail", "--interval", "0.1"], { env: { ...env, MAILROOM_API_KEY: "svc_test_notakey" } });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ code: "invalid_api_key" });
  });

  it("stops at once when interrupted between polls", async () => {
    const ctrlC = interruption();
    const tail = startCli(["events", "tail", "--interval", "60"], { env, tty: true, interrupted: ctrlC.interrupted });
    await eventually(() => expect(tail.stderr()).toContain("Waiting for events"));

    const started = Date.now();
    ctrlC.interrupt();

    expect((await tail.done).code).toBe(0);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
