import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { databases } from "../helpers/databases.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

const HOUR = 3600 * 1000;

interface Event {
  id: string;
  object: string;
  type: string;
  created_at: string;
  environment: string;
  message_id: string;
  recipient: string | null;
  sequence: number;
  from_status: string | null;
  to_status: string | null;
  tags: string[];
  metadata: Record<string, string>;
  idempotency_key: string | null;
  data: Record<string, unknown>;
}

interface EventPage {
  data: Event[];
  has_more: boolean;
  next_cursor: string | null;
}

describe.each(databases)("events ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(database);
  });
  afterEach(async () => t.close());

  const sendOk = async (body: Record<string, unknown> = aMessage(), options: { key?: string; headers?: Record<string, string> } = {}) => {
    const res = await t.call({ method: "POST", url: "/v1/messages", payload: body, ...options });
    expect(res.statusCode, res.body).toBe(202);
    return res.json() as { id: string };
  };

  const page = async (url: string, key?: string): Promise<EventPage> => {
    const res = await t.call({ method: "GET", url, ...(key ? { key } : {}) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  /** Follows next_cursor to the end, checking the page shape on the way. */
  const allPages = async (url: string, limit: number): Promise<{ events: Event[]; sizes: number[] }> => {
    const events: Event[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    const sep = url.includes("?") ? "&" : "?";
    do {
      const p = await page(`${url}${sep}limit=${limit}${cursor === null ? "" : `&after=${encodeURIComponent(cursor)}`}`);
      events.push(...p.data);
      sizes.push(p.data.length);
      expect(p.next_cursor === null).toBe(!p.has_more);
      cursor = p.next_cursor;
    } while (cursor !== null);
    return { events, sizes };
  };

  describe("listMessageEvents", () => {
    it("lists a message's events in the order they happened, numbered 1 to n", async () => {
      const { id } = await sendOk(aMessage({ to: "clicked@simulator.test" }));
      await t.drain();
      const { data, has_more, next_cursor } = await page(`/v1/messages/${id}/events`);
      expect(has_more).toBe(false);
      expect(next_cursor).toBeNull();
      expect(data.map((e) => [e.sequence, e.type, e.from_status, e.to_status, e.recipient])).toEqual([
        [1, "message.queued", null, "queued", null],
        [2, "message.delivered", "queued", "delivered", "clicked@simulator.test"],
        [3, "message.opened", null, null, "clicked@simulator.test"],
        [4, "message.clicked", null, null, "clicked@simulator.test"],
      ]);
      for (const event of data) {
        expect(event).toMatchObject({ object: "event", environment: "sandbox", message_id: id });
        expect(event.id).toMatch(/^evt_[0-9a-z]{26}$/);
      }
    });

    it("pages by sequence number without duplicates or gaps", async () => {
      const { id } = await sendOk(aMessage({ to: ["clicked@simulator.test", "replied@simulator.test", "deferred@simulator.test"] }));
      await t.drain();
      t.clock.advance(t.runtime.config.sandbox.deferSeconds * 1000);
      await t.drain();
      const whole = await page(`/v1/messages/${id}/events?limit=100`);
      const n = whole.data.length;
      expect(whole.data.map((e) => e.sequence)).toEqual(Array.from({ length: n }, (_, i) => i + 1));

      const first = await page(`/v1/messages/${id}/events?limit=3`);
      expect(first).toMatchObject({ has_more: true, next_cursor: "3" });
      const { events, sizes } = await allPages(`/v1/messages/${id}/events`, 3);
      expect(events.map((e) => e.id)).toEqual(whole.data.map((e) => e.id));
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(n);
      expect(sizes.slice(0, -1).every((s) => s === 3)).toBe(true);
    });

    it("refuses a cursor that is not a sequence number with 422", async () => {
      const { id } = await sendOk(aMessage());
      const res = await t.call({ method: "GET", url: `/v1/messages/${id}/events?after=evt_abc` });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ location: "query", pointer: "/after" }] });
    });

    it("answers 404 for a message of another workspace or environment", async () => {
      const { id } = await sendOk();
      for (const key of [t.other.sandboxKey, t.workspace.liveKey]) {
        const res = await t.call({ method: "GET", url: `/v1/messages/${id}/events`, key });
        expect(res.statusCode).toBe(404);
        expect(res.json()).toMatchObject({ code: "not_found" });
      }
    });

    it("carries the message's tags, metadata and Idempotency-Key on every event", async () => {
      const { id } = await sendOk(aMessage({ to: "opened@simulator.test", tags: ["receipt", "eu"], metadata: { order_id: "1234" } }), { headers: { "idempotency-key": "order-1234-receipt" } });
      await t.drain();
      const { data } = await page(`/v1/messages/${id}/events`);
      expect(data.map((e) => e.type)).toEqual(["message.queued", "message.delivered", "message.opened", "message.opened"]);
      for (const event of data) {
        expect(event).toMatchObject({ tags: ["receipt", "eu"], metadata: { order_id: "1234" }, idempotency_key: "order-1234-receipt" });
      }
    });
  });

  describe("listEvents", () => {
    it("lists the environment's events newest first", async () => {
      const a = await sendOk(aMessage({ to: "delivered@simulator.test" }));
      t.clock.advance(1000);
      const b = await sendOk(aMessage({ to: "bounced@simulator.test" }));
      t.clock.advance(1000);
      await t.drain();
      const { data } = await page("/v1/events");
      expect(data.map((e) => [e.type, e.message_id])).toEqual([
        ["message.bounced", b.id],
        ["message.delivered", a.id],
        ["message.queued", b.id],
        ["message.queued", a.id],
      ]);
      const ids = data.map((e) => e.id);
      expect(ids).toEqual([...ids].sort().reverse());
      const times = data.map((e) => Date.parse(e.created_at));
      expect(times).toEqual([...times].sort((x, y) => y - x));
    });

    it("filters by type", async () => {
      await sendOk(aMessage({ to: ["ada@example.com", "bounced@simulator.test"] }));
      await sendOk(aMessage({ to: "bounced+second@simulator.test" }));
      await t.drain();
      const { data } = await page("/v1/events?type=message.bounced");
      expect(data.map((e) => e.recipient)).toEqual(["bounced+second@simulator.test", "bounced@simulator.test"]);
      expect(data.every((e) => e.type === "message.bounced")).toBe(true);
      expect((await page("/v1/events?type=message.complained")).data).toEqual([]);
    });

    it("filters by recipient: that address's events and the message-wide events of its messages, not another recipient's", async () => {
      const both = await sendOk(aMessage({ to: ["Ada@Example.com", "bounced@simulator.test"] }));
      t.clock.advance(1000);
      await sendOk(aMessage({ to: "bob@example.com" }));
      t.clock.advance(1000);
      const copied = await sendOk(aMessage({ to: "bob@example.com", cc: "ada@example.com" }));
      t.clock.advance(1000);
      const later = await sendOk(aMessage({ to: "ada@example.com", scheduled_at: new Date(t.clock.now() + HOUR).toISOString() }));
      expect((await t.call({ method: "POST", url: `/v1/messages/${later.id}/cancel` })).statusCode).toBe(200);
      await sendOk(aMessage({ to: "ada@example.com" }), { key: t.other.sandboxKey });
      await t.drain();
      const { data } = await page("/v1/events?recipient=ADA%40example.com");
      // Newest first: the deliveries happened at the drain, after the cancel.
      expect(data.map((e) => [e.message_id, e.type, e.recipient])).toEqual([
        [copied.id, "message.delivered", "ada@example.com"],
        [both.id, "message.delivered", "Ada@example.com"],
        [later.id, "message.canceled", null],
        [later.id, "message.scheduled", null],
        [copied.id, "message.queued", null],
        [both.id, "message.queued", null],
      ]);
      const bounces = await page("/v1/events?recipient=bounced%40simulator.test&type=message.bounced");
      expect(bounces.data.map((e) => [e.message_id, e.recipient])).toEqual([[both.id, "bounced@simulator.test"]]);
    });

    it("filters by a recipient whose domain is an IDN, written in Unicode or in ASCII", async () => {
      const sent = await sendOk(aMessage({ to: "joerg@bücher.example" }));
      await sendOk(aMessage({ to: "joerg@example.com" }));
      await t.drain();
      const expected = [[sent.id, "message.delivered"], [sent.id, "message.queued"]];
      const unicode = await page(`/v1/events?recipient=${encodeURIComponent("JOERG@BÜCHER.example")}`);
      expect(unicode.data.map((e) => [e.message_id, e.type])).toEqual(expected);
      const ascii = await page("/v1/events?recipient=joerg%40xn--bcher-kva.example");
      expect(ascii.data.map((e) => [e.message_id, e.type])).toEqual(expected);
    });

    it("answers an empty page for a recipient no message was sent to, or a string that is no address", async () => {
      await sendOk(aMessage({ to: "ada@example.com" }));
      await t.drain();
      expect((await page("/v1/events?recipient=grace%40example.com")).data).toEqual([]);
      expect((await page("/v1/events?recipient=ada")).data).toEqual([]);
    });

    it("pages through a recipient's events without duplicates or gaps", async () => {
      for (let i = 0; i < 3; i++) {
        await sendOk(aMessage({ to: ["ada@example.com", `other+${i}@example.com`] }));
        t.clock.advance(1000);
      }
      await t.drain();
      const { events, sizes } = await allPages("/v1/events?recipient=ada%40example.com", 4);
      expect(sizes).toEqual([4, 2]);
      expect(events.map((e) => e.type)).toEqual(["message.delivered", "message.delivered", "message.delivered", "message.queued", "message.queued", "message.queued"]);
    });

    it("refuses an unknown event type", async () => {
      const res = await t.call({ method: "GET", url: "/v1/events?type=message.exploded" });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ location: "query", pointer: "/type" }] });
    });

    it("filters by creation time: created_after is inclusive, created_before exclusive", async () => {
      const start = t.clock.now();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        ids.push((await sendOk()).id);
        t.clock.advance(HOUR);
      }
      const at = (ms: number) => encodeURIComponent(new Date(ms).toISOString());
      const messageIds = (p: EventPage) => p.data.map((e) => e.message_id);
      expect(messageIds(await page(`/v1/events?created_after=${at(start + HOUR)}`))).toEqual([ids[2], ids[1]]);
      expect(messageIds(await page(`/v1/events?created_before=${at(start + HOUR)}`))).toEqual([ids[0]]);
      expect(messageIds(await page(`/v1/events?created_after=${at(start + HOUR)}&created_before=${at(start + 2 * HOUR)}`))).toEqual([ids[1]]);

      // The worker's events carry the time they happened, not the time the message was sent.
      await t.drain();
      const delivered = await page(`/v1/events?type=message.delivered&created_after=${at(start + 3 * HOUR)}`);
      expect(delivered.data).toHaveLength(3);
    });

    it("reads a leap second (23:59:60 UTC, which RFC 3339 and the contract admit) as the last millisecond of its minute", async () => {
      const sent = await sendOk();
      for (const url of ["/v1/events?created_after=2016-12-31T23:59:60Z", "/v1/messages?created_after=2016-12-31T23:59:60.5Z&created_before=2099-12-31T23:59:60Z"]) {
        const res = await t.call({ method: "GET", url });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json().data.map((e: { message_id?: string; id: string }) => e.message_id ?? e.id)).toEqual([sent.id]);
      }
      const before = await t.call({ method: "GET", url: "/v1/events?created_before=2016-12-31T23:59:60Z" });
      expect(before.statusCode, before.body).toBe(200);
      expect(before.json().data).toEqual([]);
    });

    it("reads every date-time the contract admits: an offset without minutes or colon, a space or lower-case separator, a leap second after a space", async () => {
      await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Audited" } }); // an audit event
      const sent = await sendOk();
      await t.runtime.services.requestLogs.flush();
      const sentAt = t.clock.now();
      // The same instant (to the second, rounded down) in every admitted form.
      const forms = (ms: number): string[] => {
        const local = (offsetHours: number) => new Date(ms + offsetHours * HOUR).toISOString().slice(0, 19);
        return [`${local(1)}+01`, `${local(-2)}-0200`, `${local(0).replace("T", " ")}Z`, `${local(0).toLowerCase()}z`, `${local(1)}+01:00`];
      };
      // Request logs grow with every request, so each check only asks "some" or "none".
      const some = async (path: string, query: string): Promise<boolean> => {
        const res = await t.call({ method: "GET", url: `${path}?${query}` });
        expect(res.statusCode, `${path}?${query}: ${res.body}`).toBe(200);
        return res.json().data.length > 0;
      };
      for (const path of ["/v1/events", "/v1/messages", "/v1/audit-events", "/v1/request-logs"]) {
        expect(await some(path, ""), path).toBe(true);
        for (const earlier of forms(sentAt - 1000)) {
          expect(await some(path, `created_after=${encodeURIComponent(earlier)}`), `${path} after ${earlier}`).toBe(true);
          expect(await some(path, `created_before=${encodeURIComponent(earlier)}`), `${path} before ${earlier}`).toBe(false);
        }
        for (const later of forms(sentAt + 1000)) {
          expect(await some(path, `created_after=${encodeURIComponent(later)}`), `${path} after ${later}`).toBe(false);
          expect(await some(path, `created_before=${encodeURIComponent(later)}`), `${path} before ${later}`).toBe(true);
        }
        expect(await some(path, `created_after=${encodeURIComponent("2016-12-31 23:59:60Z")}`), path).toBe(true);
        expect(await some(path, `created_before=${encodeURIComponent("2016-12-31 23:59:60Z")}`), path).toBe(false);
      }
      expect((await page(`/v1/events?created_after=${encodeURIComponent(forms(sentAt)[0]!)}`)).data.map((e) => e.message_id)).toEqual([sent.id]);
    });

    it("refuses with 422 at the parameter a date-time the format checker lets through but names no instant (hour 24)", async () => {
      for (const path of ["/v1/events", "/v1/messages", "/v1/audit-events", "/v1/request-logs"]) {
        for (const name of ["created_after", "created_before"]) {
          const res = await t.call({ method: "GET", url: `${path}?${name}=${encodeURIComponent("2016-12-31T24:59:60+01:00")}` });
          expect(res.statusCode, `${path} ${name}: ${res.body}`).toBe(422);
          expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ location: "query", pointer: `/${name}` }] });
        }
      }
    });

    it("pages through every event without duplicates or gaps", async () => {
      for (let i = 0; i < 4; i++) {
        await sendOk(aMessage({ to: i % 2 === 0 ? "opened@simulator.test" : "ada@example.com" }));
        if (i === 1) t.clock.advance(1000);
      }
      await t.drain();
      const whole = await page("/v1/events?limit=100");
      expect(whole.data).toHaveLength(4 + 4 + 2 + 2); // opened@: queued, delivered, two opens
      const { events, sizes } = await allPages("/v1/events", 5);
      expect(sizes).toEqual([5, 5, 2]);
      expect(events.map((e) => e.id)).toEqual(whole.data.map((e) => e.id));
      expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    });

    it("pages through filtered events too", async () => {
      for (let i = 0; i < 5; i++) await sendOk(aMessage({ to: `bounced+${i}@simulator.test` }));
      await t.drain();
      const { events, sizes } = await allPages("/v1/events?type=message.bounced", 2);
      expect(sizes).toEqual([2, 2, 1]);
      expect(events.map((e) => e.recipient)).toEqual([4, 3, 2, 1, 0].map((i) => `bounced+${i}@simulator.test`));
    });

    it("carries the message's tags, metadata and Idempotency-Key on every event", async () => {
      await sendOk(aMessage({ to: "complained@simulator.test", tags: ["welcome"], metadata: { user_id: "u_1", plan: "pro" } }), { headers: { "idempotency-key": '"welcome-u_1"' } });
      await sendOk(aMessage({ to: "ada@example.com" }));
      await t.drain();
      const { data } = await page("/v1/events");
      expect(data).toHaveLength(6);
      const keyed = data.filter((e) => e.idempotency_key === "welcome-u_1");
      expect(keyed.map((e) => e.type)).toEqual(["message.complained", "message.opened", "message.delivered", "message.queued"]);
      for (const event of keyed) expect(event).toMatchObject({ tags: ["welcome"], metadata: { user_id: "u_1", plan: "pro" } });
      for (const event of data.filter((e) => e.idempotency_key === null)) expect(event).toMatchObject({ tags: [], metadata: {} });
    });

    it("lists only the calling workspace's and environment's events", async () => {
      await t.verifiedDomain("acme.example");
      const mine = await sendOk();
      await sendOk(aMessage(), { key: t.workspace.liveKey });
      await sendOk(aMessage(), { key: t.other.sandboxKey });
      await t.drain();
      const { data } = await page("/v1/events");
      expect(data.map((e) => e.message_id)).toEqual([mine.id, mine.id]);
      // The live message was attempted too (and deferred: no test reaches a real resolver).
      const live = await page("/v1/events", t.workspace.liveKey);
      expect(live.data.map((e) => [e.type, e.environment])).toEqual([
        ["message.deferred", "live"],
        ["message.queued", "live"],
      ]);
    });
  });
});
