import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runMaintenance } from "../../src/maintenance.js";
import { databases } from "../helpers/databases.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

const DAY = 24 * 3600 * 1000;
const ATTACHMENT = { filename: "receipt.txt", content: Buffer.from("Thank you!").toString("base64"), content_type: "text/plain" };

type Message = {
  id: string;
  status: string;
  subject: string;
  html: string | null;
  text: string | null;
  mime: string | null;
  attachments: Array<{ filename: string; content_type: string; size: number }>;
  content_removed_at: string | null;
  recipients: Array<{ email: string; status: string }>;
};

describe.each(databases)("content retention ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(database);
  });
  afterEach(async () => t.close());

  const setRetention = async (days: number | null, key = t.workspace.sandboxKey) => {
    const res = await t.call({ method: "PATCH", url: "/v1/workspace", payload: { content_retention_days: days }, key });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ content_retention_days: number | null }>();
  };

  const send = async (overrides: Record<string, unknown> = {}, key = t.workspace.sandboxKey) => {
    const res = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ attachments: [ATTACHMENT], ...overrides }), key });
    expect(res.statusCode, res.body).toBe(202);
    return res.json<Message>().id;
  };

  const get = async (id: string, key = t.workspace.sandboxKey) => {
    const res = await t.call({ method: "GET", url: `/v1/messages/${id}`, key });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Message>();
  };

  const maintain = () => runMaintenance(t.runtime, { info() {}, warn() {}, error: (obj, msg) => expect.fail(`${msg}: ${JSON.stringify(obj)}`) });

  describe("updateWorkspace content_retention_days", () => {
    it("is null by default, set in days, shared by both environments, and cleared with null", async () => {
      const workspace = await t.call({ method: "GET", url: "/v1/workspace" });
      expect(workspace.json()).toMatchObject({ content_retention_days: null });
      expect(await setRetention(30)).toMatchObject({ content_retention_days: 30 });
      const live = await t.call({ method: "GET", url: "/v1/workspace", key: t.workspace.liveKey });
      expect(live.json()).toMatchObject({ environment: "live", content_retention_days: 30 });
      expect(await setRetention(null)).toMatchObject({ content_retention_days: null });
    });

    it.each([0, 3651, 1.5, "7", -1])("refuses %j with a problem pointing at the field", async (days) => {
      const res = await t.call({ method: "PATCH", url: "/v1/workspace", payload: { content_retention_days: days } });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().errors.map((e: { pointer: string }) => e.pointer)).toContain("/content_retention_days");
      expect((await t.call({ method: "GET", url: "/v1/workspace" })).json()).toMatchObject({ content_retention_days: null });
    });
  });

  describe("the maintenance round", () => {
    it("removes the bodies, source and attachment bytes of settled messages past the retention, and keeps everything else", async () => {
      await setRetention(7);
      const old = await send({ to: ["ada@example.com", "bounced@simulator.test"] });
      await t.drain();
      const before = await get(old);
      expect(before.mime).toContain("receipt.txt");
      const stored = await t.runtime.db.knex("messages").where({ id: old }).first();

      t.clock.advance(6 * DAY);
      const recent = await send();
      await t.drain();
      t.clock.advance(1 * DAY + 1);
      await maintain();

      const after = await get(old);
      expect(after).toMatchObject({ html: null, text: null, mime: null, content_removed_at: new Date(t.clock.now()).toISOString() });
      // What accounts for the message stays: subject, addresses, statuses, attachment metadata.
      expect(after.subject).toBe(before.subject);
      expect(after.status).toBe(before.status);
      expect(after.recipients).toEqual(before.recipients);
      expect(after.attachments).toEqual(before.attachments);
      expect(after.attachments).toEqual([{ filename: "receipt.txt", content_type: "text/plain", size: 10, content_id: null }]);
      const row = await t.runtime.db.knex("messages").where({ id: old }).first();
      expect(row.attachments).not.toContain(ATTACHMENT.content);
      expect(stored.attachments).toContain(ATTACHMENT.content);
      const events = await t.call({ method: "GET", url: `/v1/messages/${old}/events` });
      expect(events.json().data.map((e: { type: string }) => e.type)).toEqual(expect.arrayContaining(["message.queued", "message.delivered", "message.bounced"]));

      // Six days old, inside the retention: untouched.
      expect(await get(recent)).toMatchObject({ html: "<p>Hello Ada</p>", content_removed_at: null });
      expect((await get(recent)).mime).not.toBeNull();
    });

    it("keeps the content of a message not yet settled, whatever its age, so it can still be sent", async () => {
      await setRetention(1);
      const scheduled = await send({ scheduled_at: new Date(t.clock.now() + 20 * DAY).toISOString() });
      t.clock.advance(2 * DAY);
      await maintain();
      expect(await get(scheduled)).toMatchObject({ status: "scheduled", html: "<p>Hello Ada</p>", content_removed_at: null });
    });

    it("covers both environments, and leaves workspaces without a retention alone", async () => {
      await t.verifiedDomain("acme.example");
      await setRetention(1);
      const sandbox = await send();
      const live = await send({ to: "ada@example.com" }, t.workspace.liveKey);
      await t.call({ method: "POST", url: `/v1/messages/${live}/cancel`, key: t.workspace.liveKey });
      const other = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage(), key: t.other.sandboxKey });
      expect(other.statusCode, other.body).toBe(202);
      await t.drain();
      t.clock.advance(2 * DAY);
      await maintain();

      expect(await get(sandbox)).toMatchObject({ html: null, content_removed_at: expect.any(String) });
      expect(await get(live, t.workspace.liveKey)).toMatchObject({ status: "canceled", html: null, content_removed_at: expect.any(String) });
      const untouched = await t.call({ method: "GET", url: `/v1/messages/${other.json().id}`, key: t.other.sandboxKey });
      expect(untouched.json()).toMatchObject({ html: "<p>Hello Ada</p>", content_removed_at: null });
    });

    it("removes nothing while the retention is null, and nothing twice", async () => {
      const id = await send();
      await t.drain();
      t.clock.advance(400 * DAY);
      await maintain();
      expect(await get(id)).toMatchObject({ content_removed_at: null });

      await setRetention(1);
      await maintain();
      const removedAt = (await get(id)).content_removed_at;
      expect(removedAt).toBe(new Date(t.clock.now()).toISOString());
      t.clock.advance(DAY);
      await maintain();
      expect((await get(id)).content_removed_at).toBe(removedAt);
    });

    it("removes a reply's text, HTML and attachments' bytes, and its event's copy of them, once it is older than the retention", async () => {
      await setRetention(3);
      const id = await send({ to: "ada@example.com", track_replies: true });
      await t.drain();
      const reply = await t.runtime.services.inbound.recordReply(
        id,
        {
          from: "Ada <ada@example.com>",
          fromAddress: "ada@example.com",
          to: ["hello@acme.example"],
          subject: "Re: Welcome",
          text: "My card number is in the picture",
          quotedText: "> Hello Ada",
          html: "<p>My card number is in the picture</p>",
          messageIdHeader: "<reply-1@example.com>",
          inReplyTo: null,
          authentication: { spf: "pass", dkim: "pass", dmarc: "pass" },
          attachments: [{ filename: "card.png", content_type: "image/png", content_id: null, content: Buffer.from("PNG bytes") }],
          receivedAt: t.clock.now() + 2 * DAY,
        },
        "reply_address",
      );
      expect(reply.stored).toBe(true);
      const inboundId = (reply as { inboundId: string }).inboundId;
      const attachmentUrl = `/v1/inbound/${inboundId}/attachments/0`;
      expect((await t.call({ method: "GET", url: attachmentUrl })).rawPayload.toString()).toBe("PNG bytes");

      // Four days on, the message is past the retention, the reply (two days younger) is not.
      t.clock.advance(4 * DAY);
      await maintain();
      expect(await get(id)).toMatchObject({ content_removed_at: expect.any(String) });
      expect((await t.call({ method: "GET", url: `/v1/inbound/${inboundId}` })).json()).toMatchObject({ text: "My card number is in the picture", content_removed_at: null });

      t.clock.advance(2 * DAY);
      await maintain();
      const inbound = (await t.call({ method: "GET", url: `/v1/inbound/${inboundId}` })).json();
      expect(inbound).toMatchObject({ text: null, quoted_text: null, html: null, subject: "Re: Welcome", from: "Ada <ada@example.com>", content_removed_at: new Date(t.clock.now()).toISOString() });
      expect(inbound.attachments).toEqual([{ index: 0, filename: "card.png", content_type: "image/png", size: 9, content_id: null }]);
      const replies = (await t.call({ method: "GET", url: `/v1/messages/${id}/replies` })).json();
      expect(replies.data).toEqual([inbound]);
      const gone = await t.call({ method: "GET", url: attachmentUrl });
      expect(gone.statusCode, gone.body).toBe(410);
      expect(gone.json()).toMatchObject({ status: 410, code: "content_removed" });
      const stored = await t.runtime.db.knex("inbound_attachments").where({ inbound_id: inboundId }).first();
      expect(Buffer.from(stored.content).length).toBe(0);
      const events = (await t.call({ method: "GET", url: `/v1/messages/${id}/events` })).json().data as Array<{ type: string; data: Record<string, unknown> }>;
      const replied = events.find((e) => e.type === "message.replied")!;
      expect(replied.data).toMatchObject({ inbound_id: inboundId, text: null, quoted_text: null, html: null, content_removed: true, subject: "Re: Welcome" });
      expect(JSON.stringify(events)).not.toContain("card number");
    });

    it("removes the content of messages with large attachments a bounded number of bytes at a time", async () => {
      await setRetention(1);
      // 1 MiB of base64 per message, 40 messages: loaded together they would take 40 MiB (and twice that parsed).
      const content = Buffer.alloc(768 * 1024, 7).toString("base64");
      const id = await send({ attachments: [{ filename: "statement.pdf", content, content_type: "application/pdf" }, ATTACHMENT] });
      await t.drain();
      const knex = t.runtime.db.knex;
      const row = await knex("messages").where({ id }).first();
      const clones = Array.from({ length: 39 }, (_, i) => `${id.slice(0, -6)}${String(i).padStart(6, "0")}`);
      for (const clone of clones) await knex("messages").insert({ ...row, id: clone, idempotency_key: null });
      // Plain messages among them still go in one statement.
      const plain = [await send({ attachments: [] }), await send({ attachments: [] })];
      await t.drain();
      t.clock.advance(2 * DAY);

      // What each read brings into memory: the attachments' stored characters.
      let largestRead = 0;
      const measure = (response: unknown) => {
        if (!Array.isArray(response)) return;
        const chars = response.reduce((sum: number, r: { attachments?: unknown }) => sum + (typeof r?.attachments === "string" ? r.attachments.length : 0), 0);
        largestRead = Math.max(largestRead, chars);
      };
      knex.on("query-response", measure);
      try {
        await maintain();
      } finally {
        knex.removeListener("query-response", measure);
      }
      expect(largestRead).toBeGreaterThan(content.length);
      expect(largestRead).toBeLessThanOrEqual(16 * 1024 * 1024);

      const left = await knex("messages").whereNull("content_removed_at").count({ n: "*" }).first();
      expect(Number((left as { n: number | string }).n)).toBe(0);
      for (const removed of [id, clones[0]!, clones[38]!]) {
        expect((await get(removed)).attachments).toEqual([
          { filename: "statement.pdf", content_type: "application/pdf", size: 768 * 1024, content_id: null },
          { filename: "receipt.txt", content_type: "text/plain", size: 10, content_id: null },
        ]);
        const stored = await knex("messages").where({ id: removed }).first();
        expect(JSON.parse(stored.attachments).map((a: { content: string }) => a.content)).toEqual(["", ""]);
      }
      for (const message of plain) expect(await get(message)).toMatchObject({ html: null, attachments: [], content_removed_at: expect.any(String) });
    });

    it("leaves what a round's time budget did not reach to the next round, a workspace's batch at a time in turn", async () => {
      await setRetention(1);
      const res = await t.call({ method: "PATCH", url: "/v1/workspace", payload: { content_retention_days: 1 }, key: t.other.sandboxKey });
      expect(res.statusCode, res.body).toBe(200);
      const mine = await send();
      const theirs = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage(), key: t.other.sandboxKey });
      await t.drain();
      t.clock.advance(2 * DAY);
      const removed = () => t.runtime.db.knex("messages").whereNotNull("content_removed_at").pluck("id");

      // No time at all: each round still removes one batch, then stops; the next starts with the next workspace.
      const first = await t.runtime.services.retention.removeExpiredContent({ budgetMs: 0 });
      expect(first).toMatchObject({ messages: 1, finished: false });
      expect(await removed()).toHaveLength(1);
      expect(await t.runtime.services.retention.removeExpiredContent({ budgetMs: 0 })).toMatchObject({ messages: 1, finished: false });
      expect((await removed()).sort()).toEqual([mine, theirs.json().id].sort());
      // With time enough, a round finds nothing left.
      expect(await t.runtime.services.retention.removeExpiredContent()).toEqual({ messages: 0, replies: 0, finished: true });
    });

    it("runs every step of the round when one fails, logging the failure, and checks due domains before removing content", async () => {
      const { services } = t.runtime;
      const failure = new Error("the idempotency table is locked");
      vi.spyOn(services.idempotency, "prune").mockRejectedValueOnce(failure);
      const order: string[] = [];
      const spies = {
        rateLimits: vi.spyOn(services.rateLimiter, "prune"),
        sessions: vi.spyOn(services.sessions, "prune"),
        webhooks: vi.spyOn(services.webhooks, "prune"),
        requestLogs: vi.spyOn(services.requestLogs, "prune"),
      };
      const recheck = services.domains.recheckDue.bind(services.domains);
      vi.spyOn(services.domains, "recheckDue").mockImplementation(async () => (order.push("domains"), recheck()));
      const retention = services.retention.removeExpiredContent.bind(services.retention);
      vi.spyOn(services.retention, "removeExpiredContent").mockImplementation(async (options) => (order.push("retention"), retention(options)));
      const errors: Array<[object, string]> = [];
      await runMaintenance(t.runtime, { info() {}, warn() {}, error: (obj, msg) => errors.push([obj, msg]) });
      for (const spy of Object.values(spies)) expect(spy).toHaveBeenCalledTimes(1);
      expect(errors).toEqual([[{ err: failure }, expect.stringContaining("idempotency")]]);
      expect(order[0]).toBe("domains");
      expect(order.at(-1)).toBe("retention");
    });

    it("works through more messages than one removal write covers", async () => {
      await setRetention(1);
      const ids: string[] = [];
      for (let i = 0; i < 450; i++) ids.push(await send({ attachments: [] }));
      await t.drain();
      t.clock.advance(2 * DAY);
      await maintain();
      const left = await t.runtime.db.knex("messages").whereNull("content_removed_at").count({ n: "*" }).first();
      expect(Number((left as { n: number | string }).n)).toBe(0);
    });
  });
});
