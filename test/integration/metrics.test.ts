import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrationSource } from "../../src/db/migrations/index.js";
import { databases } from "../helpers/databases.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

const NOW = Date.parse("2026-11-21T10:30:00Z");
const HOUR = 3_600_000;
const DAY = 86_400_000;

type Counts = Record<string, number | null>;
interface Metrics {
  object: string;
  environment: string;
  granularity: string;
  from: string;
  to: string;
  tag: string | null;
  template: string | null;
  totals: Counts;
  buckets: Array<Counts & { start: string }>;
}

const ZERO = {
  accepted: 0,
  delivered: 0,
  deferred: 0,
  bounced: 0,
  hard_bounced: 0,
  soft_bounced: 0,
  failed: 0,
  suppressed: 0,
  canceled: 0,
  opened: 0,
  unique_opened: 0,
  machine_opened: 0,
  clicked: 0,
  unique_clicked: 0,
  machine_clicked: 0,
  complained: 0,
  unsubscribed: 0,
  replied: 0,
  delivery_rate: null,
  bounce_rate: null,
  complaint_rate: null,
  open_rate: null,
  click_rate: null,
};

describe.each(databases)("Metrics ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(database);
    t.clock.set(NOW);
  });
  afterEach(async () => t.close());

  const metrics = async (query = "", key?: string): Promise<Metrics> => {
    const res = await t.call({ method: "GET", url: `/v1/metrics${query}`, ...(key ? { key } : {}) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Metrics;
  };
  const send = async (to: string, overrides: Record<string, unknown> = {}, key?: string) => {
    const res = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ to, ...overrides }), ...(key ? { key } : {}) });
    expect(res.statusCode, res.body).toBe(202);
    return res.json().id as string;
  };
  /** An open as the tracking routes record one: a person's, or an image proxy's (flagged, not counted on the message). */
  const open = (messageId: string, machine: boolean) =>
    t.runtime.services.engagement.record({ messageId, recipient: { position: 0 }, type: "message.opened", data: { machine_open: machine }, at: t.clock.now(), human: !machine });

  describe("getMetrics", () => {
    it("counts every simulated outcome of the sandbox, with the rates derived from them", async () => {
      for (const outcome of ["delivered", "bounced", "opened", "clicked", "complained", "replied", "unsubscribed"]) await send(`${outcome}@simulator.test`);
      const suppressed = await t.call({ method: "POST", url: "/v1/suppressions", payload: { email: "gone@example.com" } });
      expect(suppressed.statusCode, suppressed.body).toBe(201);
      await send("gone@example.com");
      const scheduled = await send("later@example.com", { scheduled_at: new Date(NOW + DAY).toISOString() });
      expect((await t.call({ method: "POST", url: `/v1/messages/${scheduled}/cancel` })).statusCode).toBe(200);
      await t.drain();

      const body = await metrics();
      expect(body).toMatchObject({ object: "metrics", environment: "sandbox", granularity: "day", from: "2026-11-15T00:00:00.000Z", to: "2026-11-22T00:00:00.000Z", tag: null, template: null });
      const totals = {
        ...ZERO,
        accepted: 9,
        delivered: 6,
        bounced: 1,
        hard_bounced: 1,
        suppressed: 1,
        canceled: 1,
        // opened@ opens twice; clicked@, complained@, replied@ and unsubscribed@ open once first.
        opened: 6,
        unique_opened: 5,
        clicked: 1,
        unique_clicked: 1,
        complained: 1,
        unsubscribed: 1,
        replied: 1,
        delivery_rate: 0.8571,
        bounce_rate: 0.1429,
        complaint_rate: 0.1667,
        open_rate: 0.8333,
        click_rate: 0.1667,
      };
      expect(body.totals).toEqual(totals);
      expect(body.buckets.map((b) => b.start)).toEqual(Array.from({ length: 7 }, (_, i) => new Date(Date.parse("2026-11-15") + i * DAY).toISOString()));
      expect(body.buckets[6]).toEqual({ start: "2026-11-21T00:00:00.000Z", ...totals });
      for (const bucket of body.buckets.slice(0, 6)) expect(bucket).toEqual({ start: bucket.start, ...ZERO });
    });

    it("counts deferrals and a message accepted once, however often it is rescheduled or comes due", async () => {
      const deferred = await send("deferred@simulator.test");
      const scheduled = await send("ada@example.com", { scheduled_at: new Date(NOW + HOUR).toISOString() });
      const moved = await t.call({ method: "POST", url: `/v1/messages/${scheduled}/reschedule`, payload: { scheduled_at: new Date(NOW + 2 * HOUR).toISOString() } });
      expect(moved.statusCode, moved.body).toBe(200);
      await t.drain();
      t.clock.advance(3 * HOUR);
      await t.drain();
      expect((await t.call({ method: "GET", url: `/v1/messages/${deferred}` })).json().status).toBe("delivered");
      expect((await t.call({ method: "GET", url: `/v1/messages/${scheduled}` })).json().status).toBe("delivered");

      expect((await metrics()).totals).toMatchObject({ accepted: 2, deferred: 1, delivered: 2, delivery_rate: 1, bounce_rate: 0 });
    });

    it("puts each event in the bucket of its time, rounding the range out to whole buckets", async () => {
      const first = await send("ada@example.com");
      await t.drain();
      t.clock.set(NOW + 2 * HOUR); // 12:30
      await open(first, false);
      await send("grace@example.com");
      await t.drain();

      const body = await metrics(`?granularity=hour&from=2026-11-21T09:15:00Z&to=2026-11-21T12:31:00Z`);
      expect(body).toMatchObject({ granularity: "hour", from: "2026-11-21T09:00:00.000Z", to: "2026-11-21T13:00:00.000Z" });
      expect(body.buckets.map((b) => [b.start.slice(11, 16), b.accepted, b.delivered, b.opened])).toEqual([
        ["09:00", 0, 0, 0],
        ["10:00", 1, 1, 0],
        ["11:00", 0, 0, 0],
        ["12:00", 1, 1, 1],
      ]);
      expect(body.buckets[0]!.delivery_rate).toBeNull();
      expect(body.totals).toMatchObject({ accepted: 2, delivered: 2, opened: 1, unique_opened: 1, open_rate: 0.5 });

      // A range that ends before the second message leaves it out.
      expect((await metrics(`?granularity=hour&from=2026-11-21T10:00:00Z&to=2026-11-21T11:00:00Z`)).totals).toMatchObject({ accepted: 1, opened: 0 });
      // The default hourly range is the last 24 hours, the current one included.
      const recent = await metrics("?granularity=hour");
      expect(recent).toMatchObject({ from: "2026-11-20T13:00:00.000Z", to: "2026-11-21T13:00:00.000Z" });
      expect(recent.buckets).toHaveLength(24);
    });

    it("counts a recipient once per bucket in unique opens, and once over the range in the totals", async () => {
      const id = await send("ada@example.com");
      await t.drain();
      await open(id, false);
      t.clock.advance(DAY);
      await open(id, false);
      await open(id, false);

      const body = await metrics();
      expect(body.buckets.slice(-2).map((b) => [b.opened, b.unique_opened])).toEqual([
        [1, 1],
        [2, 1],
      ]);
      expect(body.totals).toMatchObject({ opened: 3, unique_opened: 1, delivered: 1, open_rate: 1 });
    });

    it("counts opens by image proxies apart from people's, and not in the unique opens", async () => {
      const id = await send("ada@example.com");
      await t.drain();
      await open(id, true);
      await open(id, true);
      expect((await metrics()).totals).toMatchObject({ opened: 0, unique_opened: 0, machine_opened: 2, open_rate: 0 });
      await open(id, false);
      expect((await metrics()).totals).toMatchObject({ opened: 1, unique_opened: 1, machine_opened: 2, open_rate: 1 });
    });

    it("flags proxy opens written before the automated column existed when the migration adds it", async () => {
      const id = await send("ada@example.com");
      await t.drain();
      await open(id, true);
      await open(id, false);
      const knex = t.runtime.db.knex;
      await knex.migrate.down({ migrationSource, name: "014-automated-events" }); // 014 drops the column...
      await knex.migrate.latest({ migrationSource }); // ...and sets it again from the events' data
      expect((await metrics()).totals).toMatchObject({ opened: 1, machine_opened: 1 });
    });

    it("counts hard and soft bounces apart, also those written before the bounce_type column existed", async () => {
      await send("bounced@simulator.test"); // the simulator's bounce is hard (5.1.1)
      const full = await send("ada@example.com");
      await t.drain();
      // A DSN reporting a full mailbox after the hand-off, as the inbound server records one.
      const dsn = await t.runtime.services.engagement.record({
        messageId: full,
        recipient: { position: 0 },
        type: "message.bounced",
        bounce: { bounceType: "soft", detail: "552 5.2.2 mailbox full" },
        data: { source: "dsn", bounce_type: "soft", enhanced_status: "5.2.2" },
        at: t.clock.now(),
      });
      expect(dsn).not.toBeNull();
      const counts = { delivered: 1, bounced: 2, hard_bounced: 1, soft_bounced: 1 };
      expect((await metrics()).totals).toMatchObject(counts);
      const knex = t.runtime.db.knex;
      await knex.migrate.down({ migrationSource, name: "018-event-bounce-types" }); // 018 drops the column...
      await knex.migrate.latest({ migrationSource }); // ...and sets it again from the events' data
      expect((await metrics()).totals).toMatchObject(counts);
    });

    it("narrows to the messages of one tag or one template", async () => {
      const template = await t.call({ method: "POST", url: "/v1/templates", payload: { slug: "receipt", name: "Receipt", subject: "Your receipt", html: "<p>Thanks</p>", publish: true } });
      expect(template.statusCode, template.body).toBe(201);
      await send("ada@example.com", { tags: ["welcome"] });
      await send("bounced@simulator.test", { tags: ["welcome", "trial"] });
      await send("grace@example.com", { subject: undefined, html: undefined, template: { slug: "receipt" } });
      await t.drain();

      expect(await metrics("?tag=welcome")).toMatchObject({ tag: "welcome", totals: { accepted: 2, delivered: 1, bounced: 1, bounce_rate: 0.5 } });
      expect((await metrics("?tag=trial")).totals).toMatchObject({ accepted: 1, delivered: 0, bounced: 1 });
      expect(await metrics("?template=receipt")).toMatchObject({ template: "receipt", totals: { accepted: 1, delivered: 1, bounced: 0 } });
      expect((await metrics("?tag=welcome&template=receipt")).totals).toMatchObject({ accepted: 0 });
      expect((await metrics("?tag=nothing")).totals).toEqual(ZERO);
    });

    it("shows each environment its own mail, and no other workspace's", async () => {
      await send("ada@example.com");
      await send("grace@example.com", {}, t.other.sandboxKey);
      await t.drain();
      expect((await metrics()).totals).toMatchObject({ accepted: 1, delivered: 1 });
      expect(await metrics("", t.workspace.liveKey)).toMatchObject({ environment: "live", totals: ZERO });
      expect((await metrics("", t.other.sandboxKey)).totals).toMatchObject({ accepted: 1, delivered: 1 });
      expect((await metrics("", t.other.liveKey)).totals).toEqual(ZERO);
    });

    it("accepts the longest ranges: 366 days, or 744 hours", async () => {
      expect((await metrics("?from=2025-11-21T00:00:00Z&to=2026-11-22T00:00:00Z")).buckets).toHaveLength(366);
      expect((await metrics("?granularity=hour&from=2026-10-21T00:00:00Z&to=2026-11-21T00:00:00Z")).buckets).toHaveLength(744);
    });

    it("reads every date-time the contract admits: an offset without minutes or colon, a space separator, a leap second", async () => {
      const expected = await metrics("?granularity=hour&from=2026-11-20T23:00:00Z&to=2026-11-21T11:00:00Z");
      for (const query of [
        "?granularity=hour&from=2026-11-21T00:00:00%2B01&to=2026-11-21T12:00:00%2B01",
        "?granularity=hour&from=2026-11-20T21:00:00-0200&to=2026-11-21%2011:00:00Z",
        "?granularity=hour&from=2026-11-20%2023:59:60Z&to=2026-11-21T11:00:00Z",
      ]) {
        expect(await metrics(query), query).toEqual(expected);
      }
    });

    it.each([
      ["?from=2016-12-31T24:59:60%2B01:00", "/from"],
      ["?to=2016-12-31T24:59:60%2B01:00", "/to"],
    ])("refuses %s (hour 24, which the format checker lets through) with 422 naming %s", async (query, pointer) => {
      const res = await t.call({ method: "GET", url: `/v1/metrics${query}` });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ location: "query", pointer }] });
    });

    it.each([
      ["?from=2026-11-21T00:00:00Z&to=2026-11-20T00:00:00Z", "/from"],
      ["?from=2026-11-21T10:00:00Z&to=2026-11-21T10:00:00Z", "/from"],
      ["?from=2025-11-20T00:00:00Z&to=2026-11-22T00:00:00Z", "/to"],
      ["?granularity=hour&from=2026-10-20T00:00:00Z&to=2026-11-21T00:00:00Z", "/to"],
    ])("refuses %s with 422 naming the query parameter", async (query, pointer) => {
      const res = await t.call({ method: "GET", url: `/v1/metrics${query}` });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ pointer }] });
    });

    it.each([
      ["?granularity=week", "/granularity"],
      ["?from=yesterday", "/from"],
      ["?to=2026-11-21", "/to"],
      ["?tag=", "/tag"],
      // A tag or slug that no message can carry, refused as listMessages refuses it, not read as "no traffic".
      ["?tag=a%20b", "/tag"],
      ["?template=Welcome", "/template"],
    ])("refuses %s as the contract does, naming %s", async (query, pointer) => {
      const res = await t.call({ method: "GET", url: `/v1/metrics${query}` });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ location: "query", pointer }] });
    });

    it("needs a full_access key: a sending_access key is refused", async () => {
      const created = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "sender", permission: "sending_access" } });
      expect(created.statusCode, created.body).toBe(201);
      const res = await t.call({ method: "GET", url: "/v1/metrics", key: created.json().secret });
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json()).toMatchObject({ code: "insufficient_permission" });
    });
  });
});
