import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { WebhookEventType } from "../../src/domain/events.js";
import { sampleEvent } from "../../src/domain/sample-events.js";
import { databases } from "../helpers/databases.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

interface Event {
  type: string;
  recipient: string | null;
  from_status: string | null;
  to_status: string | null;
  data: Record<string, unknown>;
}

/** DESIGN.md §8: the outcome of a sandbox recipient follows from its address. */
const OUTCOMES: Array<{ address: string; status: string; events: string[] }> = [
  { address: "delivered@simulator.test", status: "delivered", events: ["message.delivered"] },
  { address: "bounced@simulator.test", status: "bounced", events: ["message.bounced"] },
  { address: "soft_bounced@simulator.test", status: "bounced", events: ["message.bounced"] },
  { address: "complained@simulator.test", status: "delivered", events: ["message.delivered", "message.opened", "message.complained"] },
  { address: "opened@simulator.test", status: "delivered", events: ["message.delivered", "message.opened", "message.opened"] },
  { address: "clicked@simulator.test", status: "delivered", events: ["message.delivered", "message.opened", "message.clicked"] },
  { address: "replied@simulator.test", status: "delivered", events: ["message.delivered", "message.opened", "message.replied"] },
  { address: "unsubscribed@simulator.test", status: "delivered", events: ["message.delivered", "message.opened", "message.unsubscribed"] },
  { address: "bounced+x@simulator.test", status: "bounced", events: ["message.bounced"] },
  { address: "opened+campaign-7@simulator.test", status: "delivered", events: ["message.delivered", "message.opened", "message.opened"] },
  { address: "Bounced@Simulator.Test", status: "bounced", events: ["message.bounced"] },
  { address: "nobody@simulator.test", status: "delivered", events: ["message.delivered"] },
  { address: "bounced@example.com", status: "delivered", events: ["message.delivered"] },
];

describe.each(databases)("sandbox ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(database);
  });
  afterEach(async () => t.close());

  const sendOk = async (to: string | string[]) => {
    const res = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ to }) });
    expect(res.statusCode, res.body).toBe(202);
    return res.json().id as string;
  };
  const message = async (id: string) => (await t.call({ method: "GET", url: `/v1/messages/${id}` })).json();
  const events = async (id: string): Promise<Event[]> => (await t.call({ method: "GET", url: `/v1/messages/${id}/events?limit=100` })).json().data;
  const deferSeconds = () => t.runtime.config.sandbox.deferSeconds;

  describe("createMessage with a sandbox key", () => {
    it.each(OUTCOMES)("simulates $address as $status with $events", async ({ address, status, events: expected }) => {
      const id = await sendOk(address);
      await t.drain();
      const sent = await message(id);
      expect(sent.status).toBe(status);
      expect(sent.recipients).toMatchObject([{ status }]);
      expect(sent.mime).toContain(`To: ${address.replace(/@.*/, "@")}`);
      const list = await events(id);
      expect(list.map((e) => e.type)).toEqual(["message.queued", ...expected]);
      const recipient = sent.recipients[0].email;
      for (const e of list.slice(1)) expect(e.recipient).toBe(recipient);
      const outcome = list[1]!;
      expect(outcome).toMatchObject({ from_status: "queued", to_status: status, data: { simulated: true, attempt: 1 } });
      const sample = sampleEvent(outcome.type as WebhookEventType, "sandbox", "evt_01jd3k8m2q5v7w9x1y3z5a7b9c", "2026-11-22T10:00:00.000Z");
      expect([sample.from_status, sample.to_status], "testWebhook's sample announces the transition real events carry").toEqual([outcome.from_status, outcome.to_status]);
      for (const followUp of list.slice(2)) expect(followUp).toMatchObject({ from_status: null, to_status: null, data: { simulated: true } });
    });

    it("rehearses opens, clicks, complaints and unsubscribes with the fields real ones carry, stamped on the recipient and counted on the message", async () => {
      const opened = await sendOk("opened@simulator.test");
      const clicked = (await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ to: "clicked@simulator.test", html: '<p>Hi <a href="mailto:x@example.com">mail</a> <a href="https://acme.example/start?x=1">Start</a></p>' }) })).json().id as string;
      const complained = await sendOk("complained@simulator.test");
      const unsubscribed = await sendOk("unsubscribed@simulator.test");
      await t.drain();

      const opens = (await events(opened)).filter((e) => e.type === "message.opened");
      expect(opens.map((e) => e.data)).toMatchObject([
        { first_open: true, machine_open: false, user_agent: expect.stringContaining("Mozilla/5.0"), ip: expect.any(String), simulated: true },
        { first_open: false, machine_open: false, simulated: true },
      ]);
      const openedMessage = await message(opened);
      expect(openedMessage.engagement).toEqual({ opens: 2, clicks: 0, replies: 0 });
      expect(openedMessage.recipients[0]).toMatchObject({ opened_at: expect.any(String), clicked_at: null, complained_at: null });

      const click = (await events(clicked)).find((e) => e.type === "message.clicked")!;
      expect(click.data).toMatchObject({ url: "https://acme.example/start?x=1", first_click: true, machine_click: false, simulated: true });
      expect((await message(clicked)).engagement).toEqual({ opens: 1, clicks: 1, replies: 0 });

      const complaint = (await events(complained)).find((e) => e.type === "message.complained")!;
      // The fields of a real ARF complaint (bounces.test.ts), the reporting MTA without its "dns;" type as there.
      expect(complaint.data).toEqual({ feedback_type: "abuse", user_agent: expect.any(String), reporting_mta: "fbl.simulator.test", source_ip: expect.stringMatching(/^192\.0\.2\./), simulated: true });
      expect((await message(complained)).recipients[0].complained_at).toEqual(expect.any(String));
      expect((await message(unsubscribed)).recipients[0].unsubscribed_at).toEqual(expect.any(String));
      // Simulator addresses always rehearse their outcome: never suppressed.
      expect((await t.call({ method: "GET", url: "/v1/suppressions" })).json().data).toEqual([]);
    });

    it("stores the simulated reply of replied@simulator.test like a received one, threaded to the message", async () => {
      const id = await sendOk("Ada <replied@simulator.test>");
      await t.drain();
      const replies = (await t.call({ method: "GET", url: `/v1/messages/${id}/replies` })).json().data;
      expect(replies).toMatchObject([
        {
          object: "inbound_message",
          message_id: id,
          recipient: "replied@simulator.test",
          from: "Ada <replied@simulator.test>",
          subject: expect.stringMatching(/^Re: /),
          text: expect.stringContaining("simulated reply"),
          quoted_text: expect.stringMatching(/wrote:\n> /),
          threaded_by: "simulated",
          simulated: true,
          authentication: { spf: "pass", dkim: "pass", dmarc: "pass" },
        },
      ]);
      const event = (await events(id)).find((e) => e.type === "message.replied")!;
      expect(event.data).toMatchObject({ inbound_id: replies[0].id, from: "Ada <replied@simulator.test>", text: replies[0].text, simulated: true });
      expect((await t.call({ method: "GET", url: `/v1/inbound/${replies[0].id}` })).json()).toEqual(replies[0]);
      expect((await message(id)).engagement).toEqual({ opens: 1, clicks: 0, replies: 1 });
    });

    it("reports a simulated bounce with the details of a delivery status notification", async () => {
      const bounced = await sendOk("bounced@simulator.test");
      await t.drain();
      expect((await events(bounced))[1]!.data).toMatchObject({ bounce_type: "hard", action: "failed", diagnostic_code: expect.stringMatching(/^smtp; 550 5\.1\.1 /), reporting_mta: "mx.simulator.test" });
    });

    it("reports soft_bounced@simulator.test as a soft bounce (mailbox full) with the details of a delivery status notification, and suppresses nothing", async () => {
      const bounced = await sendOk("soft_bounced@simulator.test");
      await t.drain();
      expect((await events(bounced))[1]!.data).toMatchObject({
        bounce_type: "soft",
        smtp_code: 552,
        enhanced_status: "5.2.2",
        response: expect.stringMatching(/^552 5\.2\.2 /),
        action: "failed",
        diagnostic_code: expect.stringMatching(/^smtp; 552 5\.2\.2 /),
        reporting_mta: "mx.simulator.test",
        simulated: true,
      });
      expect((await t.call({ method: "GET", url: "/v1/suppressions" })).json().data).toEqual([]);
      // A soft bounce is about this message: the next one is simulated, and bounced, again.
      const next = await sendOk("soft_bounced@simulator.test");
      await t.drain();
      expect((await message(next)).status).toBe("bounced");
    });

    it("rehearses message.failed: deferred@simulator.test with an expires_at before its retry fails at that deadline with 4.4.7", async () => {
      const expiresAt = new Date(t.clock.now() + (deferSeconds() * 1000) / 2).toISOString();
      const res = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ to: "deferred@simulator.test", expires_at: expiresAt }) });
      expect(res.statusCode, res.body).toBe(202);
      const id = res.json().id as string;
      await t.drain();
      expect((await events(id))[1]).toMatchObject({ type: "message.deferred", data: { next_attempt_at: expiresAt } });

      t.clock.advance((deferSeconds() * 1000) / 2);
      await t.drain();
      expect(await message(id)).toMatchObject({ status: "failed", recipients: [{ status: "failed" }] });
      const failed = (await events(id))[2]!;
      expect(failed).toMatchObject({ type: "message.failed", from_status: "deferred", to_status: "failed", data: { smtp_code: null, enhanced_status: "4.4.7", attempts: 1 } });
      expect(failed.data.response).toMatch(/^Delivery time expired after 1 attempt; last answer: 451 /);
    });

    it("reports the remote reply of a simulated delivery and bounce like a real MX would", async () => {
      const delivered = await sendOk("delivered@simulator.test");
      const bounced = await sendOk("bounced@simulator.test");
      await t.drain();
      expect((await events(delivered))[1]!.data).toMatchObject({ smtp_code: 250, enhanced_status: "2.0.0", response: expect.stringMatching(/^250 /) });
      expect((await events(bounced))[1]!.data).toMatchObject({ smtp_code: 550, enhanced_status: "5.1.1", response: expect.stringMatching(/^550 5\.1\.1 /) });
      expect((await message(bounced)).recipients[0].detail).toMatch(/^550 5\.1\.1 /);
    });

    it("defers deferred@simulator.test first, then delivers it on the retry", async () => {
      const id = await sendOk("deferred@simulator.test");
      await t.drain();
      expect(await message(id)).toMatchObject({ status: "deferred", recipients: [{ status: "deferred", detail: expect.stringMatching(/^451 /) }] });
      expect((await events(id)).map((e) => e.type)).toEqual(["message.queued", "message.deferred"]);
      expect((await events(id))[1]!.data).toMatchObject({ smtp_code: 451, simulated: true, attempt: 1 });

      // Not due before the retry delay has passed.
      t.clock.advance(deferSeconds() * 1000 - 1);
      await t.drain();
      expect((await message(id)).status).toBe("deferred");

      t.clock.advance(1);
      await t.drain();
      const sent = await message(id);
      expect(sent).toMatchObject({ status: "delivered", recipients: [{ status: "delivered" }] });
      expect((await events(id)).map((e) => [e.type, e.from_status, e.to_status])).toEqual([
        ["message.queued", null, "queued"],
        ["message.deferred", "queued", "deferred"],
        ["message.delivered", "deferred", "delivered"],
      ]);
      expect((await events(id))[2]!.data).toMatchObject({ attempt: 2 });
      // Delivered the retry delay after it was accepted: what the sender waited, on /metrics.
      const metrics = (await t.call({ method: "GET", url: "/metrics", key: null })).body;
      expect(metrics).toMatch(/^mailroom_delivery_latency_seconds_count\{environment="sandbox"\} 1$/m);
      expect(metrics).toContain(`mailroom_delivery_latency_seconds_sum{environment="sandbox"} ${deferSeconds()}\n`);
    });

    it("keeps the MIME source and Message-ID of the first attempt across a deferral", async () => {
      const id = await sendOk("deferred@simulator.test");
      await t.drain();
      const first = (await message(id)).mime;
      expect(first).toContain("Message-ID:");
      t.clock.advance(deferSeconds() * 1000);
      await t.drain();
      expect((await message(id)).mime).toBe(first);
    });

    it.each([
      ["ASCII (7bit)", "one\ntwo\rthree\r\nfour\n\nend"],
      ["non-ASCII (quoted-printable)", "d\u00e9j\u00e0\nvu\rtwo\r\nthree"],
    ])("keeps a MIME source whose every line ends in CRLF, whatever line breaks the %s text and html had", async (_kind, text) => {
      // RFC 5322 §2.3: CR and LF appear only together. SMTP fixes bare ones on the wire, but the
      // kept source is what the API, the dashboard and an .eml download show.
      const res = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ text, html: `<p>${text.replace(/\r\n?|\n/g, "</p>\n<p>")}</p>\r` }) });
      expect(res.statusCode, res.body).toBe(202);
      await t.drain();
      const sent = await message(res.json().id);
      expect(sent.mime).not.toMatch(/\r(?!\n)|(?<!\r)\n/);
      // The message's own text is kept as it was given.
      expect(sent.text).toBe(text);
    });

    it("shows a message delivered to one recipient and bounced by another as delivered, with each recipient's own status", async () => {
      const id = await sendOk(["ada@example.com", "bounced@simulator.test"]);
      await t.drain();
      expect(await message(id)).toMatchObject({ status: "delivered", recipients: [{ status: "delivered" }, { status: "bounced" }] });
      expect((await events(id)).map((e) => [e.type, e.recipient])).toEqual([
        ["message.queued", null],
        ["message.delivered", "ada@example.com"],
        ["message.bounced", "bounced@simulator.test"],
      ]);
    });

    it("shows a message bounced by every recipient as bounced", async () => {
      const id = await sendOk(["bounced+1@simulator.test", "bounced+2@simulator.test"]);
      await t.drain();
      expect(await message(id)).toMatchObject({ status: "bounced", recipients: [{ status: "bounced" }, { status: "bounced" }] });
    });

    it("shows a message as deferred while any recipient waits for a retry, then settles it", async () => {
      const id = await sendOk(["ada@example.com", "deferred@simulator.test", "bounced@simulator.test"]);
      await t.drain();
      expect(await message(id)).toMatchObject({ status: "deferred", recipients: [{ status: "delivered" }, { status: "deferred" }, { status: "bounced" }] });

      t.clock.advance(deferSeconds() * 1000);
      await t.drain();
      expect(await message(id)).toMatchObject({ status: "delivered", recipients: [{ status: "delivered" }, { status: "delivered" }, { status: "bounced" }] });
      // The retry only concerns the deferred recipient: nobody gets the message twice.
      const list = await events(id);
      expect(list.filter((e) => e.type === "message.delivered").map((e) => e.recipient)).toEqual(["ada@example.com", "deferred@simulator.test"]);
      expect(list.filter((e) => e.type === "message.bounced")).toHaveLength(1);
    });

    it("emits every engagement of every recipient of one message", async () => {
      const id = await sendOk(["opened@simulator.test", "clicked@simulator.test", "replied@simulator.test", "complained@simulator.test"]);
      await t.drain();
      expect((await message(id)).status).toBe("delivered");
      const engagement = (await events(id)).filter((e) => e.to_status === null).map((e) => `${e.type} ${e.recipient}`);
      expect(engagement).toEqual([
        "message.opened opened@simulator.test",
        "message.opened opened@simulator.test",
        "message.opened clicked@simulator.test",
        "message.clicked clicked@simulator.test",
        "message.opened replied@simulator.test",
        "message.replied replied@simulator.test",
        "message.opened complained@simulator.test",
        "message.complained complained@simulator.test",
      ]);
    });

    it("simulates each outcome again, identically, for the next message", async () => {
      const first = await sendOk(["bounced@simulator.test", "clicked@simulator.test"]);
      await t.drain();
      const second = await sendOk(["bounced@simulator.test", "clicked@simulator.test"]);
      await t.drain();
      const shape = async (id: string) => (await events(id)).map((e) => [e.type, e.recipient, e.to_status]);
      expect(await shape(second)).toEqual(await shape(first));
    });
  });
});
