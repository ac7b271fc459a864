import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { databases } from "../helpers/databases.js";
import { RECORDED_PER_RECIPIENT } from "../../src/domain/engagement.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

/**
 * The engagement core that the tracking routes, the inbound SMTP server and the sandbox share
 * (src/services/engagement.ts): stamps, counters, events, suppressions and late bounces, written
 * in one transaction with the message's lock.
 */
describe.each(databases)("engagement ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(database);
  });
  afterEach(async () => t.close());

  const delivered = async (to: string | string[] = "ada@example.com") => {
    const res = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ to }) });
    expect(res.statusCode, res.body).toBe(202);
    await t.drain();
    return res.json().id as string;
  };
  const message = async (id: string) => (await t.call({ method: "GET", url: `/v1/messages/${id}` })).json();
  const types = async (id: string) => ((await t.call({ method: "GET", url: `/v1/messages/${id}/events?limit=100` })).json().data as Array<{ type: string }>).map((e) => e.type);
  const suppressions = async () => (await t.call({ method: "GET", url: "/v1/suppressions" })).json().data as Array<{ id: string; email: string; reason: string; message_id: string | null }>;
  const record = (input: Partial<Parameters<TestApp["runtime"]["services"]["engagement"]["record"]>[0]> & { messageId: string }) =>
    t.runtime.services.engagement.record({ recipient: { position: 0 }, type: "message.opened", data: {}, at: t.clock.now(), ...input });

  it("stamps the recipient's first open, counts people's opens only, and marks repeats", async () => {
    const id = await delivered();
    expect(await record({ messageId: id, human: true })).toMatchObject({ first: true, recipientEmail: "ada@example.com", eventId: expect.stringMatching(/^evt_/) });
    t.clock.advance(60_000);
    await record({ messageId: id, human: true });
    await record({ messageId: id, human: false, data: { machine_open: true } });
    const sent = await message(id);
    expect(sent.engagement).toEqual({ opens: 2, clicks: 0, replies: 0 });
    expect(Date.parse(sent.recipients[0].opened_at)).toBe(t.clock.now() - 60_000);
    // The message changed with each event (its contract's updated_at), its status did not.
    expect(sent.status).toBe("delivered");
    expect(Date.parse(sent.updated_at)).toBe(t.clock.now());
    const events = (await t.call({ method: "GET", url: `/v1/messages/${id}/events?limit=100` })).json().data.filter((e: { type: string }) => e.type === "message.opened");
    expect(events.map((e: { data: { first_open: boolean } }) => e.data.first_open)).toEqual([true, false, false]);
  });

  it("stops recording a recipient's opens after RECORDED_PER_RECIPIENT of them (a pixel fetched in a loop); clicks and other recipients are counted apart", async () => {
    const id = await delivered(["ada@example.com", "grace@example.com"]);
    for (let i = 0; i < RECORDED_PER_RECIPIENT; i++) expect(await record({ messageId: id, human: true })).toMatchObject({ eventId: expect.stringMatching(/^evt_/) });
    expect(await record({ messageId: id, human: true })).toMatchObject({ eventId: null, first: false, recipientEmail: "ada@example.com" });
    expect(await record({ messageId: id, type: "message.clicked", data: { url: "https://acme.example/" }, human: true })).toMatchObject({ eventId: expect.stringMatching(/^evt_/) });
    expect(await record({ messageId: id, recipient: { position: 1 }, human: true })).toMatchObject({ eventId: expect.stringMatching(/^evt_/), first: true });
    // The counters move only with a recorded event: ada's 100, grace's first.
    expect((await message(id)).engagement).toEqual({ opens: RECORDED_PER_RECIPIENT + 1, clicks: 1, replies: 0 });
  });

  it("finds the recipient by address, whatever its case, among several", async () => {
    const id = await delivered(["ada@example.com", "grace@example.com"]);
    expect(await record({ messageId: id, recipient: { email: "Grace@Example.com" }, type: "message.replied", human: true })).toMatchObject({ recipientEmail: "grace@example.com" });
    expect((await message(id)).recipients.map((r: { replied_at: string | null }) => r.replied_at !== null)).toEqual([false, true]);
  });

  it("suppresses a recipient who complained or unsubscribed, once, and records a repeat as nothing new", async () => {
    const complained = await delivered("ada@example.com");
    const unsubscribed = await delivered("grace@example.com");
    await record({ messageId: complained, type: "message.complained", data: { feedback_type: "abuse" } });
    expect(await record({ messageId: complained, type: "message.complained", data: { feedback_type: "abuse" } })).toMatchObject({ eventId: null, first: false });
    await record({ messageId: unsubscribed, type: "message.unsubscribed", data: { method: "one_click" } });
    await record({ messageId: unsubscribed, type: "message.unsubscribed", data: { method: "one_click" } });
    expect((await types(complained)).filter((type) => type === "message.complained")).toHaveLength(1);
    expect((await types(unsubscribed)).filter((type) => type === "message.unsubscribed")).toHaveLength(1);
    expect(await suppressions()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ email: "ada@example.com", reason: "complaint", message_id: complained }),
        expect.objectContaining({ email: "grace@example.com", reason: "unsubscribe", message_id: unsubscribed }),
      ]),
    );
  });

  it("takes a repeat complaint or unsubscribe again once its suppression was deleted: suppressed anew, with an event", async () => {
    const complained = await delivered("ada@example.com");
    await record({ messageId: complained, type: "message.complained", data: { feedback_type: "abuse" } });
    const [first] = await suppressions();
    expect((await t.call({ method: "DELETE", url: `/v1/suppressions/${first!.id}` })).statusCode).toBeLessThan(300);
    expect(await record({ messageId: complained, type: "message.complained", data: { feedback_type: "abuse" } })).toMatchObject({ eventId: expect.stringMatching(/^evt_/), first: false });
    expect(await suppressions()).toMatchObject([{ email: "ada@example.com", reason: "complaint" }]);
    expect(await record({ messageId: complained, type: "message.complained", data: { feedback_type: "abuse" } })).toMatchObject({ eventId: null });
    expect((await types(complained)).filter((type) => type === "message.complained")).toHaveLength(2);
    // The first complaint's instant stays the recipient's.
    expect((await message(complained)).recipients[0].complained_at).not.toBeNull();
  });

  it("moves a delivered recipient to bounced on a late hard bounce, suppresses it, and ignores a second one", async () => {
    const id = await delivered();
    const bounce = { type: "message.bounced" as const, data: { source: "dsn", enhanced_status: "5.1.1" }, bounce: { bounceType: "hard" as const, detail: "550 5.1.1 no such user" } };
    expect(await record({ messageId: id, ...bounce })).toMatchObject({ first: true });
    expect(await message(id)).toMatchObject({ status: "bounced", recipients: [{ status: "bounced", detail: "550 5.1.1 no such user" }] });
    const events = (await t.call({ method: "GET", url: `/v1/messages/${id}/events?limit=100` })).json().data;
    expect(events.at(-1)).toMatchObject({ type: "message.bounced", from_status: "delivered", to_status: "bounced", data: { source: "dsn" } });
    expect(await suppressions()).toMatchObject([{ email: "ada@example.com", reason: "hard_bounce" }]);
    expect(await record({ messageId: id, ...bounce })).toBeNull();
  });

  it("does not suppress on a soft late bounce", async () => {
    const id = await delivered();
    await record({ messageId: id, type: "message.bounced", data: {}, bounce: { bounceType: "soft", detail: "552 5.2.2 mailbox full" } });
    expect((await message(id)).status).toBe("bounced");
    expect(await suppressions()).toEqual([]);
  });

  it("commits the caller's work in the same transaction and adds what it returns to the event", async () => {
    const id = await delivered();
    await record({ messageId: id, type: "message.replied", human: true, within: async (_trx, target) => ({ inbound_id: `inb_for_${target.messageId}` }) });
    const reply = (await t.call({ method: "GET", url: `/v1/messages/${id}/events?limit=100` })).json().data.at(-1);
    expect(reply).toMatchObject({ type: "message.replied", data: { inbound_id: `inb_for_${id}` } });
  });

  it("writes nothing when the caller's work fails", async () => {
    const id = await delivered();
    await expect(record({ messageId: id, type: "message.replied", within: async () => Promise.reject(new Error("disk full")) })).rejects.toThrow("disk full");
    expect(await types(id)).not.toContain("message.replied");
    expect((await message(id)).recipients[0].replied_at).toBeNull();
  });

  it("records a reply from someone the message was not sent to as the message's, with no recipient", async () => {
    const id = await delivered();
    expect(await record({ messageId: id, recipient: { email: "colleague@example.com" }, type: "message.replied", human: true })).toMatchObject({ recipientEmail: null, eventId: expect.any(String) });
    const reply = (await t.call({ method: "GET", url: `/v1/messages/${id}/events?limit=100` })).json().data.at(-1);
    expect(reply).toMatchObject({ type: "message.replied", recipient: null });
    expect((await message(id)).engagement.replies).toBe(1);
    expect((await message(id)).recipients[0].replied_at).toBeNull();
  });

  it("returns null for an unknown message or recipient", async () => {
    const id = await delivered();
    expect(await record({ messageId: "msg_01jd3k8m2q5v7w9x1y3z5a7b9c" })).toBeNull();
    expect(await record({ messageId: id, recipient: { position: 5 } })).toBeNull();
    expect(await record({ messageId: id, recipient: { email: "nobody@example.com" } })).toBeNull();
  });
});
