import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LightMyRequestResponse } from "fastify";
import type { Counter } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { generateDkimKey } from "../../src/domain/dkim-keys.js";
import { databases } from "../helpers/databases.js";
import { deliveryStatusReport } from "../helpers/dsn.js";
import { mailauthSignatures } from "../helpers/dkim-signers.js";
import { headersOf, RECIPIENT_DOMAIN, startLiveHarness, type LiveHarness } from "../helpers/live-delivery.js";
import { swaks } from "../helpers/swaks.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";

const ada = `ada@${RECIPIENT_DOMAIN}`;
const grace = `grace@${RECIPIENT_DOMAIN}`;
const RETURN_PATH_DOMAIN = "bounces.acme.example";

interface InboundHarness extends LiveHarness {
  smtp: string;
  receiver: WebhookReceiver;
  /** Sends a live message with reply tracking, delivers it, and returns its id and its Reply-To address. */
  sendTracked(body?: Record<string, unknown>): Promise<{ id: string; replyTo: string; messageIdHeader: string }>;
  call(method: "GET", url: string, key?: string): Promise<LightMyRequestResponse>;
}

async function startInbound(database: (typeof databases)[number], env: Record<string, string> = {}): Promise<InboundHarness> {
  const h = await startLiveHarness(database, { env: () => ({ INBOUND_SMTP_PORT: "0", ...env }) });
  const server = await h.t.runtime.startSmtp();
  const receiver = await startWebhookReceiver();
  const created = await h.t.call({ method: "POST", url: "/v1/webhooks", key: h.t.workspace.liveKey, payload: { url: receiver.url } });
  expect(created.statusCode, created.body).toBe(201);
  receiver.secrets.push(created.json().secret);
  const close = h.close.bind(h);
  return Object.assign(h, {
    smtp: `127.0.0.1:${server.port}`,
    receiver,
    async sendTracked(body: Record<string, unknown> = {}) {
      const id = await h.send({ to: [ada, grace], track_replies: true, ...body });
      await h.t.drain();
      const mail = h.sink.accepted.find((m) => headersOf(m.raw).some(([name, value]) => name.toLowerCase() === "message-id" && value.includes(id)))!;
      const replyTo = headersOf(mail.raw).find(([name]) => name.toLowerCase() === "reply-to")?.[1] ?? "";
      const message = await h.message(id);
      return { id, replyTo: /<([^>]+)>/.exec(replyTo)?.[1] ?? replyTo, messageIdHeader: message.message_id_header };
    },
    call: (method: "GET", url: string, key = h.t.workspace.liveKey) => h.t.call({ method, url, key }),
    async close() {
      await receiver.close();
      await close();
    },
  });
}

const reply = (options: { from: string; to: string; inReplyTo?: string; subject?: string; body: string }) =>
  [
    `From: ${options.from}`,
    `To: ${options.to}`,
    `Subject: ${options.subject ?? "Re: Your receipt"}`,
    `Message-ID: <reply-${Math.random().toString(36).slice(2)}@mail.example.net>`,
    ...(options.inReplyTo ? [`In-Reply-To: ${options.inReplyTo}`, `References: ${options.inReplyTo}`] : []),
    "Date: Sat, 21 Nov 2026 10:12:00 +0000",
    "MIME-Version: 1.0",
    "Content-Type: text/plain; charset=utf-8",
    "",
    options.body,
    "",
  ].join("\r\n");

/** A counter's values by their one label (/metrics, as the smtp role's operators' port shows them). */
const counted = async (counter: Counter<string>) => Object.fromEntries((await counter.get()).values.map((v) => [Object.values(v.labels).join(","), v.value]));

describe.each(databases)("inbound SMTP server ($name)", (database) => {
  let h: InboundHarness;
  afterEach(async () => h?.close());

  describe("replies", () => {
    it("threads a reply sent with swaks to the reply address: parsed, stored, downloadable, and announced signed as message.replied", async () => {
      h = await startInbound(database);
      const sent = await h.sendTracked();
      expect(sent.replyTo).toMatch(new RegExp(`^reply\\+${sent.id}-[0-9a-f]{10}@${RETURN_PATH_DOMAIN.replace(/\./g, "\\.")}$`));

      const dir = mkdtempSync(join(tmpdir(), "mailroom-reply-"));
      const screenshot = Buffer.from("\x89PNG\r\n\x1a\n fake but binary \x00\x01\x02\xff", "latin1");
      writeFileSync(join(dir, "screenshot.png"), screenshot);
      const result = await swaks({
        server: h.smtp,
        from: ada,
        to: sent.replyTo,
        headers: { From: `Ada Lovelace <${ada}>`, Subject: "Re: Your receipt", "In-Reply-To": sent.messageIdHeader },
        body: "Thanks, that worked!\n\nOn Sat, 21 Nov 2026 at 10:00, Acme <hello@acme.example> wrote:\n> Thanks",
        attach: [[join(dir, "screenshot.png"), "image/png"]],
      });
      rmSync(dir, { recursive: true, force: true });
      expect(result.last, result.transcript).toMatch(/^250 2\.0\.0 Ok: reply inb_/);

      const replies = (await h.call("GET", `/v1/messages/${sent.id}/replies`)).json();
      expect(replies).toMatchObject({ has_more: false, next_cursor: null });
      expect(replies.data).toHaveLength(1);
      const stored = replies.data[0];
      expect(stored).toMatchObject({
        object: "inbound_message",
        environment: "live",
        message_id: sent.id,
        recipient: ada,
        from: `Ada Lovelace <${ada}>`,
        to: [sent.replyTo],
        subject: "Re: Your receipt",
        text: "Thanks, that worked!",
        quoted_text: "On Sat, 21 Nov 2026 at 10:00, Acme <hello@acme.example> wrote:\n> Thanks",
        in_reply_to: sent.messageIdHeader,
        threaded_by: "reply_address",
        simulated: false,
        attachments: [{ index: 0, filename: "screenshot.png", content_type: "image/png", size: screenshot.length, content_id: null }],
      });
      // The test DNS publishes nothing for example.net: no SPF or DKIM to pass, no DMARC policy.
      expect(stored.authentication).toEqual({ spf: expect.stringMatching(/^(none|temperror|neutral)$/), dkim: "none", dmarc: expect.stringMatching(/^(none|temperror)$/) });
      expect((await h.call("GET", `/v1/inbound/${stored.id}`)).json()).toEqual(stored);

      const download = await h.call("GET", `/v1/inbound/${stored.id}/attachments/0`);
      expect(download.statusCode).toBe(200);
      expect(download.headers["content-type"]).toBe("application/octet-stream");
      expect(download.headers["content-disposition"]).toBe('attachment; filename="screenshot.png"');
      expect(download.rawPayload.equals(screenshot)).toBe(true);

      const event = (await h.events(sent.id)).find((e) => e.type === "message.replied")!;
      expect(event).toMatchObject({ recipient: ada, data: { inbound_id: stored.id, from: `Ada Lovelace <${ada}>`, subject: "Re: Your receipt", text: "Thanks, that worked!" } });
      const message = await h.message(sent.id);
      expect(message.recipients.find((r) => r.email === ada)).toMatchObject({ replied_at: expect.any(String) });
      expect(message.recipients.find((r) => r.email === grace)).toMatchObject({ replied_at: null });

      await h.t.drainWebhooks();
      const hook = h.receiver.received.find((w) => w.payload.type === "message.replied");
      expect(hook?.payload).toMatchObject({ message_id: sent.id, recipient: ada, data: { inbound_id: stored.id, text: "Thanks, that worked!" } });
      expect(h.receiver.unverified).toEqual([]);
    });

    it("records SPF, DKIM and DMARC as the sender's DNS (the configured resolver) says: pass for a signed reply from an allowed address, fail for an altered one", async () => {
      h = await startInbound(database);
      const sent = await h.sendTracked();
      // example.net publishes SPF for loopback, a DKIM key and a DMARC policy in the test DNS.
      const key = generateDkimKey("rsa-sha256");
      h.dns.set(RECIPIENT_DOMAIN, [{ type: "MX", priority: 10, exchange: `mx1.${RECIPIENT_DOMAIN}` }, { type: "TXT", value: "v=spf1 ip4:127.0.0.1 -all" }]);
      h.dns.add(`sel._domainkey.${RECIPIENT_DOMAIN}`, { type: "TXT", value: key.dnsValue });
      h.dns.add(`_dmarc.${RECIPIENT_DOMAIN}`, { type: "TXT", value: "v=DMARC1; p=reject" });
      const body = reply({ from: `Ada <${ada}>`, to: sent.replyTo, body: "Signed and sealed." });
      // With t= fixed (see mailauthSignatures): mailauth left to read the clock itself signs one t= and
      // emits another now and then, and the reply, validly signed, was recorded with dkim "fail".
      const signatures = await mailauthSignatures(body, [{ signingDomain: RECIPIENT_DOMAIN, selector: "sel", privateKey: key.privateKeyPem, algorithm: "rsa-sha256" }]);
      expect(signatures).toMatch(/^DKIM-Signature: /);
      expect((await swaks({ server: h.smtp, from: ada, to: sent.replyTo, data: signatures + body })).last).toMatch(/^250 /);
      // Altered after signing, from an envelope sender with no SPF: the body hash does not verify
      // (mailauth says neutral), nothing aligned passes, so DMARC fails. Under another Message-ID:
      // with the same one it would be the first reply again, and stored once.
      const tampered = (signatures + body).replace("Signed and sealed.", "Signed and altered.").replace(/^Message-ID: <[^>]+>/m, "Message-ID: <altered@mail.example.net>");
      expect(tampered).toContain("<altered@mail.example.net>");
      expect((await swaks({ server: h.smtp, from: "someone@elsewhere.example", to: sent.replyTo, data: tampered })).last).toMatch(/^250 /);

      const replies = (await h.call("GET", `/v1/messages/${sent.id}/replies`)).json().data;
      expect(replies.map((r: { text: string; authentication: unknown }) => [r.text, r.authentication])).toEqual([
        ["Signed and sealed.", { spf: "pass", dkim: "pass", dmarc: "pass" }],
        ["Signed and altered.", { spf: "none", dkim: "neutral", dmarc: "fail" }],
      ]);
    });

    it("threads a reply that reaches another mailbox of the return-path domain by its In-Reply-To", async () => {
      h = await startInbound(database);
      const sent = await h.sendTracked({ track_replies: false });
      const result = await swaks({ server: h.smtp, from: grace, to: `support@${RETURN_PATH_DOMAIN}`, data: reply({ from: grace, to: `support@${RETURN_PATH_DOMAIN}`, inReplyTo: sent.messageIdHeader, body: "Got it." }) });
      expect(result.last, result.transcript).toMatch(/^250 /);
      const [stored] = (await h.call("GET", `/v1/messages/${sent.id}/replies`)).json().data;
      expect(stored).toMatchObject({ recipient: grace, threaded_by: "in_reply_to", text: "Got it.", quoted_text: null });
      expect((await h.events(sent.id)).filter((e) => e.type === "message.replied").map((e) => e.recipient)).toEqual([grace]);
    });

    it("looks up a reply's In-Reply-To and References in one query, however many it lists, and threads it by the newest of Mailroom's Message-IDs", async () => {
      h = await startInbound(database);
      const sent = await h.sendTracked({ track_replies: false });
      const lookups: string[] = [];
      const onQuery = (query: { sql: string }) => {
        if (/^select\b/i.test(query.sql) && /from [`"]messages[`"]/i.test(query.sql) && query.sql.includes("message_id_header")) lookups.push(query.sql);
      };
      const knex = h.t.runtime.db.knex;
      knex.on("query", onQuery);
      try {
        const threadOf = (references: string[]) => ({
          inReplyTo: references.at(-1)!,
          // Folded, ten to a line, as a mail client writes a long field.
          references: references.map((r, i) => (i > 0 && i % 10 === 0 ? `\r\n ${r}` : r)).join(" "),
        });
        const send = (thread: { inReplyTo: string; references: string }, body: string) =>
          swaks({
            server: h.smtp,
            from: grace,
            to: `support@${RETURN_PATH_DOMAIN}`,
            data: reply({ from: grace, to: `support@${RETURN_PATH_DOMAIN}`, inReplyTo: thread.inReplyTo, body }).replace(`References: ${thread.inReplyTo}`, `References: ${thread.references}`),
          });
        // 2,000 guesses at Mailroom's Message-IDs: one query, and no message of the workspace's.
        const guesses = Array.from({ length: 2000 }, (_, i) => `<msg_01j${i.toString(36).padStart(23, "0")}@acme.example>`);
        const guessed = await send(threadOf(guesses), "Guessing.");
        expect(guessed.last, guessed.transcript).toMatch(/^550 5\.1\.1 /);
        expect(lookups).toHaveLength(1);
        // A long thread that began with the message, other people's replies after it.
        const others = Array.from({ length: 500 }, (_, i) => `<reply-${i}@mail.example.net>`);
        const threaded = await send(threadOf([sent.messageIdHeader, ...guesses.slice(0, 3), ...others]), "Found it.");
        expect(threaded.last, threaded.transcript).toMatch(/^250 2\.0\.0 Ok: reply inb_/);
        expect(lookups).toHaveLength(2);
      } finally {
        knex.removeListener("query", onQuery);
      }
      expect((await h.call("GET", `/v1/messages/${sent.id}/replies`)).json().data).toMatchObject([{ recipient: grace, threaded_by: "in_reply_to", text: "Found it." }]);
    });

    it("refuses mail to another mailbox that answers none of the workspace's messages (550 5.1.1), and stores nothing", async () => {
      h = await startInbound(database);
      const sent = await h.sendTracked();
      const result = await swaks({ server: h.smtp, from: grace, to: `support@${RETURN_PATH_DOMAIN}`, data: reply({ from: grace, to: `support@${RETURN_PATH_DOMAIN}`, inReplyTo: "<msg_01m7zptw28y1m59kzrepxam83e@acme.example>", body: "Hello?" }) });
      expect(result.last, result.transcript).toMatch(/^550 5\.1\.1 /);
      expect((await h.call("GET", `/v1/messages/${sent.id}/replies`)).json().data).toEqual([]);
      expect(await counted(h.t.runtime.metrics.inboundMessages)).toEqual({ refused: 1 });
    });

    it("threads a reply from someone who was not a recipient to the message, with no recipient", async () => {
      h = await startInbound(database);
      const sent = await h.sendTracked();
      const result = await swaks({ server: h.smtp, from: "colleague@example.org", to: sent.replyTo, data: reply({ from: "Colleague <colleague@example.org>", to: sent.replyTo, body: "Ada forwarded this to me." }) });
      expect(result.last, result.transcript).toMatch(/^250 /);
      expect((await h.call("GET", `/v1/messages/${sent.id}/replies`)).json().data).toEqual([expect.objectContaining({ recipient: null, from: "Colleague <colleague@example.org>" })]);
      expect((await h.events(sent.id)).filter((e) => e.type === "message.replied")).toMatchObject([{ recipient: null }]);
    });

    /** The message's replies, its message.replied events and its replies count. */
    const repliesOf = async (id: string) => ({
      stored: (await h.call("GET", `/v1/messages/${id}/replies`)).json().data.length as number,
      events: (await h.events(id)).filter((e) => e.type === "message.replied").length,
      counted: ((await h.message(id)) as unknown as { engagement: { replies: number } }).engagement.replies,
    });

    it("stores a reply once when the sender delivers it again (its 250 was lost): the same answer, one message.replied, counted once", async () => {
      h = await startInbound(database);
      const sent = await h.sendTracked();
      const message = reply({ from: `Ada <${ada}>`, to: sent.replyTo, body: "Sent twice." });
      const first = await swaks({ server: h.smtp, from: ada, to: sent.replyTo, data: message });
      expect(first.last, first.transcript).toMatch(/^250 2\.0\.0 Ok: reply inb_[0-9a-z]+$/);
      const again = await swaks({ server: h.smtp, from: ada, to: sent.replyTo, data: message });
      expect(again.last, again.transcript).toBe(first.last);
      expect(await repliesOf(sent.id)).toEqual({ stored: 1, events: 1, counted: 1 });
      await h.t.drainWebhooks();
      expect(h.receiver.received.filter((w) => w.payload.type === "message.replied")).toHaveLength(1);
    });

    it("stores a reply once when one transaction sends it to the reply address and to another mailbox that finds the message by In-Reply-To", async () => {
      h = await startInbound(database);
      const sent = await h.sendTracked();
      const support = `support@${RETURN_PATH_DOMAIN}`;
      const result = await swaks({ server: h.smtp, from: ada, to: [sent.replyTo, support], data: reply({ from: `Ada <${ada}>`, to: `${sent.replyTo}, ${support}`, inReplyTo: sent.messageIdHeader, body: "To both." }) });
      expect(result.last, result.transcript).toMatch(/^250 2\.0\.0 Ok: reply inb_[0-9a-z]+$/);
      expect(await repliesOf(sent.id)).toEqual({ stored: 1, events: 1, counted: 1 });
      expect((await h.call("GET", `/v1/messages/${sent.id}/replies`)).json().data).toMatchObject([{ threaded_by: "reply_address", text: "To both." }]);
    });

    it("stores each reply once when a transaction's second recipient fails (451) and the sender retries the whole message", async () => {
      h = await startInbound(database);
      const [one, two] = [await h.sendTracked(), await h.sendTracked()];
      // The first reply is committed; the database fails the second (a failover): the sender retries both.
      const engagement = h.t.runtime.services.engagement;
      const record = engagement.record.bind(engagement);
      engagement.record = async (input) => {
        if (input.messageId !== two.id) return record(input);
        engagement.record = record;
        throw new Error("database unavailable");
      };
      const message = reply({ from: `Ada <${ada}>`, to: `${one.replyTo}, ${two.replyTo}`, body: "One answer to both." });
      const first = await swaks({ server: h.smtp, from: ada, to: [one.replyTo, two.replyTo], data: message });
      expect(first.last, first.transcript).toMatch(/^451 4\.3\.0 /);
      const retry = await swaks({ server: h.smtp, from: ada, to: [one.replyTo, two.replyTo], data: message });
      expect(retry.last, retry.transcript).toMatch(/^250 2\.0\.0 Ok: reply inb_[0-9a-z]+, reply inb_[0-9a-z]+$/);
      expect([await repliesOf(one.id), await repliesOf(two.id)]).toEqual([
        { stored: 1, events: 1, counted: 1 },
        { stored: 1, events: 1, counted: 1 },
      ]);
    });

    it("stores a reply without a Message-ID once when the same bytes come again, and a different one beside it", async () => {
      h = await startInbound(database);
      const sent = await h.sendTracked();
      const withoutId = (body: string) => reply({ from: `Ada <${ada}>`, to: sent.replyTo, body }).replace(/^Message-ID: .*\r\n/m, "");
      expect(withoutId("No id.")).not.toMatch(/Message-ID/i);
      const first = await swaks({ server: h.smtp, from: ada, to: sent.replyTo, data: withoutId("No id.") });
      expect(first.last, first.transcript).toMatch(/^250 2\.0\.0 Ok: reply inb_/);
      expect((await swaks({ server: h.smtp, from: ada, to: sent.replyTo, data: withoutId("No id.") })).last).toBe(first.last);
      expect((await swaks({ server: h.smtp, from: ada, to: sent.replyTo, data: withoutId("No id either.") })).last).toMatch(/^250 2\.0\.0 Ok: reply inb_/);
      expect(await repliesOf(sent.id)).toEqual({ stored: 2, events: 2, counted: 2 });
    });

    it("ignores an automatic response (RFC 3834 Auto-Submitted) at the reply address or threaded by In-Reply-To: accepted, nothing stored, no message.replied", async () => {
      h = await startInbound(database);
      const sent = await h.sendTracked();
      const outOfOffice = (to: string, autoSubmitted: string) =>
        reply({ from: `Ada <${ada}>`, to, inReplyTo: sent.messageIdHeader, subject: "Out of office: Your receipt", body: "I am out of the office until Monday." }).replace(
          "MIME-Version: 1.0",
          `Auto-Submitted: ${autoSubmitted}\r\nMIME-Version: 1.0`,
        );
      for (const [to, autoSubmitted] of [
        [sent.replyTo, "auto-replied"],
        [sent.replyTo, "auto-generated"],
        [`support@${RETURN_PATH_DOMAIN}`, "auto-replied"],
      ] as const) {
        // Vacation responders answer the From or Reply-To from a real sender as often as the return path from the null one.
        for (const from of [ada, ""]) {
          const result = await swaks({ server: h.smtp, from, to, data: outOfOffice(to, autoSubmitted) });
          expect(result.last, result.transcript).toMatch(/^250 2\.0\.0 Ok: auto-reply ignored/);
        }
      }
      expect((await h.call("GET", `/v1/messages/${sent.id}/replies`)).json().data).toEqual([]);
      expect((await h.events(sent.id)).map((e) => e.type)).toEqual(["message.queued", "message.delivered", "message.delivered"]);
      expect((await h.message(sent.id)).recipients).toMatchObject([{ replied_at: null }, { replied_at: null }]);
    });

    it("still takes a reply marked Auto-Submitted: no (RFC 3834: written by a person)", async () => {
      h = await startInbound(database);
      const sent = await h.sendTracked();
      const message = reply({ from: `Ada <${ada}>`, to: sent.replyTo, body: "Written by hand." }).replace("MIME-Version: 1.0", "Auto-Submitted: no\r\nMIME-Version: 1.0");
      expect((await swaks({ server: h.smtp, from: ada, to: sent.replyTo, data: message })).last).toMatch(/^250 2\.0\.0 Ok: reply inb_/);
      expect((await h.call("GET", `/v1/messages/${sent.id}/replies`)).json().data).toMatchObject([{ recipient: ada, text: "Written by hand." }]);
    });

    it("stores a reply with a 200 KB HTML body whole, and announces it with as much of it as an event holds", async () => {
      h = await startInbound(database);
      const sent = await h.sendTracked();
      // An Outlook reply: a few new words over the whole history, in text and in (verbose) HTML.
      const history = Array.from({ length: 2000 }, (_, i) => `> line ${i} of the conversation so far`).join("\n");
      const html = `<html><body><p>Thanks, see below.</p>${Array.from({ length: 4000 }, (_, i) => `<p class=MsoNormal>line ${i} of the conversation</p>`).join("\n")}</body></html>`;
      expect(html.length).toBeGreaterThan(200_000);
      const message = [
        `From: Ada <${ada}>`,
        `To: ${sent.replyTo}`,
        "Subject: RE: Your receipt",
        "Message-ID: <outlook-1@mail.example.net>",
        "MIME-Version: 1.0",
        'Content-Type: multipart/alternative; boundary="alt"',
        "",
        "--alt",
        "Content-Type: text/plain; charset=utf-8",
        "",
        `Thanks, see below.\n\nOn Sat, 21 Nov 2026 at 10:00, Acme <hello@acme.example> wrote:\n${history}`,
        "--alt",
        "Content-Type: text/html; charset=utf-8",
        "",
        html,
        "--alt--",
        "",
      ].join("\n").replaceAll("\n", "\r\n");
      const result = await swaks({ server: h.smtp, from: ada, to: sent.replyTo, data: message });
      expect(result.last, result.last).toMatch(/^250 2\.0\.0 Ok: reply inb_/);

      const [stored] = (await h.call("GET", `/v1/messages/${sent.id}/replies`)).json().data;
      expect(stored).toMatchObject({ text: "Thanks, see below.", quoted_text: `On Sat, 21 Nov 2026 at 10:00, Acme <hello@acme.example> wrote:\n${history}` });
      expect(stored.html.replaceAll("\r\n", "\n")).toBe(html);
      // The event (a TEXT column, and the webhook's payload) takes the text whole and what fits of the rest.
      const event = (await h.events(sent.id)).find((e) => e.type === "message.replied")!;
      expect(event.data).toMatchObject({ inbound_id: stored.id, text: "Thanks, see below.", html: null, content_truncated: true });
      expect(stored.quoted_text.startsWith(event.data.quoted_text)).toBe(true);
      expect(Buffer.byteLength(JSON.stringify(event.data))).toBeLessThanOrEqual(60_000);
      await h.t.drainWebhooks();
      expect(h.receiver.received.find((w) => w.payload.type === "message.replied")?.payload).toMatchObject({ data: { inbound_id: stored.id, content_truncated: true } });
    });

    it("keeps a reply's oversized header fields to what their columns hold, and stores the reply", async () => {
      h = await startInbound(database);
      const sent = await h.sendTracked();
      const folded = (name: string, words: string[], separator: string) => `${name}: ${words.reduce((lines, word, i) => `${lines}${i === 0 ? "" : i % 10 === 0 ? `${separator}\r\n ` : separator}${word}`, "")}`;
      const others = Array.from({ length: 4000 }, (_, i) => `colleague-${i}@example.org`);
      const message = [
        `From: ${"Ada ".repeat(20_000)}<${ada}>`,
        folded("To", [sent.replyTo, ...others], ","),
        folded("Subject", Array.from({ length: 15_000 }, () => "long"), " "),
        "MIME-Version: 1.0",
        'Content-Type: multipart/mixed; boundary="mixed"',
        "",
        "--mixed",
        "Content-Type: text/plain",
        "",
        "Long, isn't it.",
        "--mixed",
        `Content-Type: application/${"x".repeat(300)}; name="${"n".repeat(300)}.txt"`,
        "Content-Transfer-Encoding: base64",
        "",
        Buffer.from("attached").toString("base64"),
        "--mixed--",
        "",
      ].join("\r\n");
      const result = await swaks({ server: h.smtp, from: ada, to: sent.replyTo, data: message });
      expect(result.last, result.last).toMatch(/^250 2\.0\.0 Ok: reply inb_/);

      const [stored] = (await h.call("GET", `/v1/messages/${sent.id}/replies`)).json().data;
      expect(stored).toMatchObject({ recipient: ada, subject: expect.stringMatching(/^long long /), text: "Long, isn't it.", attachments: [{ index: 0, content_type: "application/octet-stream", size: 8 }] });
      expect([stored.from.length, stored.subject.length, stored.attachments[0].filename.length]).toEqual([998, 998, 255]);
      expect(stored.to.slice(0, 2)).toEqual([sent.replyTo, others[0]]);
      expect(stored.to.length).toBeLessThan(others.length);
      expect(Buffer.byteLength(JSON.stringify(stored.to))).toBeLessThanOrEqual(65_535);
      expect((await h.events(sent.id)).find((e) => e.type === "message.replied")?.data).toMatchObject({ inbound_id: stored.id, subject: stored.subject, from: stored.from });
    });

    it("stores an HTML-only reply with the text derived from its HTML, at most 1 MiB of it however much text the markup makes, and its HTML whole", async () => {
      h = await startInbound(database);
      const sent = await h.sendTracked();
      // 1 MiB of <hr>: html-to-text makes ~20 MiB of dashes of it (a statement too large for MySQL, and the sender retried for days).
      const rules = Array.from({ length: 16_384 }, () => "<hr>".repeat(16)).join("\r\n");
      const html = `<p>Thanks, see below.</p>\r\n<p>On Sat, 21 Nov 2026 at 10:00, Acme &lt;hello@acme.example&gt; wrote:</p>\r\n<blockquote>${rules}</blockquote>`;
      expect(html.length).toBeGreaterThan(1024 * 1024);
      const message = [`From: Ada <${ada}>`, `To: ${sent.replyTo}`, "Subject: Re: Your receipt", "Message-ID: <html-only-1@mail.example.net>", "MIME-Version: 1.0", "Content-Type: text/html; charset=utf-8", "", html, ""].join("\r\n");
      const result = await swaks({ server: h.smtp, from: ada, to: sent.replyTo, data: message });
      expect(result.last, result.last).toMatch(/^250 2\.0\.0 Ok: reply inb_/);

      const [stored] = (await h.call("GET", `/v1/messages/${sent.id}/replies`)).json().data;
      expect(stored).toMatchObject({ text: "Thanks, see below.", quoted_text: expect.stringMatching(/^On Sat, 21 Nov 2026 at 10:00, Acme <hello@acme\.example> wrote:\n\n> -{10}/) });
      expect(stored.text.length + stored.quoted_text.length).toBeLessThanOrEqual(1024 * 1024);
      expect(stored.html.trimEnd()).toBe(html.replaceAll("\r\n", "\n"));
    });

    it("refuses with 552 5.3.4 a reply too large to store in one statement (a 9 MiB file sent unencoded, or a body of quotes), stores nothing, and says why", async () => {
      h = await startInbound(database);
      const sent = await h.sendTracked();
      // Thunderbird sends a CSV as 8bit: 9 MiB in 9 MiB out, and 18 MiB as the hex of the statement that stores it.
      const csv = "12345,Ada Lovelace,1815.12\r\n".repeat(Math.ceil((9 * 1024 * 1024) / 28));
      const withFile = [
        `From: Ada <${ada}>`,
        `To: ${sent.replyTo}`,
        "Subject: Re: Your receipt",
        "Message-ID: <csv-1@mail.example.net>",
        "MIME-Version: 1.0",
        'Content-Type: multipart/mixed; boundary="mixed"',
        "",
        "--mixed",
        "Content-Type: text/plain; charset=utf-8",
        "",
        "Here is the export.",
        "--mixed",
        'Content-Type: text/csv; charset=utf-8; name="export.csv"',
        'Content-Disposition: attachment; filename="export.csv"',
        "Content-Transfer-Encoding: 8bit",
        "",
        csv,
        "--mixed--",
        "",
      ].join("\r\n");
      const file = await swaks({ server: h.smtp, from: ada, to: sent.replyTo, data: withFile });
      expect(file.last).toMatch(/^552 5\.3\.4 Message too big for system: attachment 0 \(9437\d{3} bytes\) is more than a reply can store \(at most 78\d{5} bytes for one file\); send it as a link or in smaller files$/);

      // Quotes (and backslashes, tabs, line breaks) take two bytes each in the statement.
      const quotes = reply({ from: `Ada <${ada}>`, to: sent.replyTo, body: `${'"'.repeat(98)}\r\n`.repeat(85_000) });
      const body = await swaks({ server: h.smtp, from: ada, to: sent.replyTo, data: quotes });
      expect(body.last).toMatch(/^552 5\.3\.4 Message too big for system: its text and HTML take \d+ bytes as stored, more than a reply can \(at most 15728640\); send a shorter reply$/);

      expect(await repliesOf(sent.id)).toEqual({ stored: 0, events: 0, counted: 0 });
      expect(await counted(h.t.runtime.metrics.inboundMessages)).toEqual({ refused: 2 });
    });

    it("stores a reply with 100 attachments, and refuses one with 101, or with 100,000 parts in 4 MiB, with 552 5.3.4, storing nothing", async () => {
      h = await startInbound(database);
      const sent = await h.sendTracked();
      const withFiles = (count: number, id: string) =>
        [
          `From: Ada <${ada}>`,
          `To: ${sent.replyTo}`,
          "Subject: Re: Your receipt",
          `Message-ID: <${id}@mail.example.net>`,
          "MIME-Version: 1.0",
          'Content-Type: multipart/mixed; boundary="m"',
          "",
          "--m",
          "",
          "Here they are.",
          ...Array.from({ length: count }, () => ["--m", "Content-Disposition: attachment", "", "x"]).flat(),
          "--m--",
          "",
        ].join("\r\n");
      const hundred = await swaks({ server: h.smtp, from: ada, to: sent.replyTo, data: withFiles(100, "files-100") });
      expect(hundred.last, hundred.last).toMatch(/^250 2\.0\.0 Ok: reply inb_/);
      expect(await repliesOf(sent.id)).toEqual({ stored: 1, events: 1, counted: 1 });
      const [stored] = (await h.call("GET", `/v1/messages/${sent.id}/replies`)).json().data;
      expect(stored.attachments).toHaveLength(100);

      const many = await swaks({ server: h.smtp, from: ada, to: sent.replyTo, data: withFiles(101, "files-101") });
      expect(many.last).toBe("552 5.3.4 Message too big for system: it carries 101 attachments, more than a reply can store (at most 100); send them as a link or an archive");
      // Past the MIME parser's own limit (1,000 parts), refused for good too rather than answered 451 and retried for days.
      const past = await swaks({ server: h.smtp, from: ada, to: sent.replyTo, data: withFiles(100_000, "files-100000") });
      expect(past.last).toBe("552 5.3.4 Message too big for system: it has more MIME parts than a reply or report can (at most 1000, each with at most 1 MiB of header fields)");
      expect(await repliesOf(sent.id)).toEqual({ stored: 1, events: 1, counted: 1 });
    });

    it("shows another tenant's replies, inbound messages and attachments as 404, and the sandbox's as its own", async () => {
      h = await startInbound(database);
      const sent = await h.sendTracked();
      const dir = mkdtempSync(join(tmpdir(), "mailroom-reply-"));
      writeFileSync(join(dir, "a.txt"), "attached");
      await swaks({ server: h.smtp, from: ada, to: sent.replyTo, headers: { From: ada }, body: "ok", attach: [[join(dir, "a.txt"), "text/plain"]] });
      rmSync(dir, { recursive: true, force: true });
      const [stored] = (await h.call("GET", `/v1/messages/${sent.id}/replies`)).json().data;
      for (const key of [h.t.other.liveKey, h.t.workspace.sandboxKey]) {
        for (const url of [`/v1/messages/${sent.id}/replies`, `/v1/inbound/${stored.id}`, `/v1/inbound/${stored.id}/attachments/0`]) {
          const res = await h.call("GET", url, key);
          expect(res.statusCode, `${url}: ${res.body}`).toBe(404);
          expect(res.json()).toMatchObject({ code: "not_found" });
        }
      }
      expect((await h.call("GET", `/v1/inbound/${stored.id}/attachments/1`)).statusCode).toBe(404);
    });
  });

  describe("refusals", () => {
    it("is not an open relay: mail for a domain it does not receive for gets 550 5.7.1", async () => {
      h = await startInbound(database);
      for (const to of ["someone@example.org", `ada@acme.example`, `reply+x@example.org`]) {
        const result = await swaks({ server: h.smtp, from: "spammer@example.org", to, body: "relay me" });
        expect(result.last, result.transcript).toMatch(/^550 5\.7\.1 Relay access denied/);
      }
      expect(await counted(h.t.runtime.metrics.inboundRecipientsRefused)).toEqual({ relay: 3 });
    });

    it("refuses a reply or unsubscribe address whose token is forged with 550 5.1.1, and records nothing", async () => {
      h = await startInbound(database);
      const sent = await h.sendTracked();
      const forged = sent.replyTo.replace(/-([0-9a-f]{10})@/, (_m, tag: string) => `-${tag.startsWith("0") ? "1" : "0"}${tag.slice(1)}@`);
      for (const to of [forged, `reply+${sent.id}@${RETURN_PATH_DOMAIN}`, `unsubscribe+${sent.id}-0-1-0123456789@${RETURN_PATH_DOMAIN}`]) {
        const result = await swaks({ server: h.smtp, from: ada, to, body: "forged" });
        expect(result.last, `${to}\n${result.transcript}`).toMatch(/^550 5\.1\.1 /);
      }
      expect(await counted(h.t.runtime.metrics.inboundRecipientsRefused)).toEqual({ unknown_token: 3 });
      expect((await h.call("GET", `/v1/messages/${sent.id}/replies`)).json().data).toEqual([]);
    });

    it("refuses a message over INBOUND_MAX_MESSAGE_BYTES with 552 5.3.4, and stores nothing", async () => {
      h = await startInbound(database, { INBOUND_MAX_MESSAGE_BYTES: "4096" });
      const sent = await h.sendTracked();
      const result = await swaks({ server: h.smtp, from: ada, to: sent.replyTo, data: reply({ from: ada, to: sent.replyTo, body: "x".repeat(70).concat("\r\n").repeat(100) }) });
      expect(result.last, result.transcript).toMatch(/^552 5\.3\.4 /);
      expect(await counted(h.t.runtime.metrics.inboundMessages)).toEqual({ refused: 1 });
      expect((await h.call("GET", `/v1/messages/${sent.id}/replies`)).json().data).toEqual([]);
    });

    it("answers 451 4.3.0 when a reply cannot be stored, keeps nothing of it, and stores the sender's retry once", async () => {
      h = await startInbound(database);
      const sent = await h.sendTracked();
      // The database fails the first write (a failover, a full disk): the sender must keep the mail.
      const engagement = h.t.runtime.services.engagement;
      const record = engagement.record.bind(engagement);
      engagement.record = async () => {
        engagement.record = record;
        throw new Error("database unavailable");
      };
      const message = reply({ from: ada, to: sent.replyTo, body: "Is this thing on?" });
      const first = await swaks({ server: h.smtp, from: ada, to: sent.replyTo, data: message });
      expect(first.last, first.transcript).toMatch(/^451 4\.3\.0 /);
      expect((await h.call("GET", `/v1/messages/${sent.id}/replies`)).json().data).toEqual([]);
      expect((await h.events(sent.id)).some((e) => e.type === "message.replied")).toBe(false);

      const retry = await swaks({ server: h.smtp, from: ada, to: sent.replyTo, data: message });
      expect(retry.last, retry.transcript).toMatch(/^250 /);
      expect((await h.call("GET", `/v1/messages/${sent.id}/replies`)).json().data).toMatchObject([{ text: "Is this thing on?" }]);
      expect(await counted(h.t.runtime.metrics.inboundMessages)).toEqual({ deferred: 1, accepted: 1 });
    });

    it("takes at most 50 recipients: of 60, the 51st to the 60th get 452 4.5.3", async () => {
      h = await startInbound(database);
      const sent = await h.sendTracked();
      const recipients = Array.from({ length: 60 }, () => sent.replyTo);
      const result = await swaks({ server: h.smtp, from: ada, to: recipients, data: reply({ from: ada, to: sent.replyTo, body: "many" }) });
      const rcptReplies = result.replies.slice(3, 63); // after the greeting, EHLO and MAIL FROM
      expect(rcptReplies.slice(0, 50).every((r) => r.startsWith("250")), result.transcript).toBe(true);
      expect(rcptReplies.slice(50)).toEqual(Array.from({ length: 10 }, () => expect.stringMatching(/^452 4\.5\.3 Too many recipients/)));
      // The accepted recipients name one message: one reply is stored, once.
      expect(result.last).toMatch(/^250 /);
      expect((await h.call("GET", `/v1/messages/${sent.id}/replies`)).json().data).toHaveLength(1);
      expect([await counted(h.t.runtime.metrics.inboundRecipientsRefused), await counted(h.t.runtime.metrics.inboundMessages)]).toEqual([{ too_many: 10 }, { accepted: 1 }]);
    });

    it("greets with the configured host name and offers no AUTH", async () => {
      h = await startInbound(database);
      const result = await swaks({ server: h.smtp, from: "x@example.org", to: "y@example.org", body: "." });
      expect(result.replies[0]).toMatch(/^220 mta\.mailroom\.test ESMTP/);
      expect(result.replies[1]).not.toMatch(/AUTH/);
    });
  });

  describe("postmaster (RFC 5321 §4.5.1)", () => {
    it("takes mail to postmaster, bare or at a return-path domain (250, logged for the operator); postmaster at any other domain is still refused as relaying", async () => {
      h = await startInbound(database);
      for (const to of ["postmaster", "PostMaster", `postmaster@${RETURN_PATH_DOMAIN}`]) {
        const result = await swaks({ server: h.smtp, from: "admin@example.org", to, body: "Your server's certificate expires tomorrow." });
        expect(result.last, `${to}\n${result.transcript}`).toMatch(/^250 2\.0\.0 Ok: postmaster mail logged/);
      }
      const relay = await swaks({ server: h.smtp, from: "admin@example.org", to: "postmaster@example.org", body: "relay me" });
      expect(relay.last, relay.transcript).toMatch(/^550 5\.7\.1 Relay access denied/);
      expect([await counted(h.t.runtime.metrics.inboundRecipientsRefused), await counted(h.t.runtime.metrics.inboundMessages)]).toEqual([{ relay: 1 }, { accepted: 3 }]);
    });

    it("still reads a report sent to postmaster at a return-path domain: a DSN quoting the VERP return path bounces the recipient", async () => {
      h = await startInbound(database);
      const sent = await h.sendTracked();
      const verp = h.sink.accepted.find((m) => m.rcptTo.includes(ada) && m.mailFrom.includes(sent.id))!.mailFrom;
      const dsn = deliveryStatusReport({
        from: "Mail Delivery System <MAILER-DAEMON@example.net>",
        to: `postmaster@${RETURN_PATH_DOMAIN}`,
        subject: "Undelivered Mail Returned to Sender",
        reportingMta: "mx1.example.net",
        recipient: ["Action: failed", `Final-Recipient: rfc822; ${ada}`, "Status: 5.1.1"],
        original: [`Return-Path: <${verp}>`, `Message-ID: ${sent.messageIdHeader}`, `To: ${ada}`],
      });
      const result = await swaks({ server: h.smtp, from: "", to: `postmaster@${RETURN_PATH_DOMAIN}`, data: dsn, helo: "mx1.example.net" });
      expect(result.last, result.transcript).toMatch(/^250 2\.0\.0 Ok: 1 bounce\(s\) recorded/);
      expect((await h.message(sent.id)).recipients.find((r) => r.email === ada)!.status).toBe("bounced");
    });
  });

  describe("behind a load balancer (PROXY protocol)", () => {
    /** example.net's SPF allows one address, not loopback, where every test connection comes from. */
    const allowOnly = (h: InboundHarness, address: string) =>
      h.dns.set(RECIPIENT_DOMAIN, [{ type: "MX", priority: 10, exchange: `mx1.${RECIPIENT_DOMAIN}` }, { type: "TXT", value: `v=spf1 ip4:${address} -all` }]);
    const spfOfReplies = async (id: string) => (await h.call("GET", `/v1/messages/${id}/replies`)).json().data.map((r: { text: string; authentication: { spf: string } }) => [r.text, r.authentication.spf]);

    it("checks SPF against the sender that a listed load balancer names in its header, not against the balancer", async () => {
      h = await startInbound(database, { INBOUND_PROXY_PROTOCOL_FROM: "127.0.0.1" });
      const sent = await h.sendTracked();
      allowOnly(h, "203.0.113.9");
      for (const [sender, text] of [["203.0.113.9", "From the allowed address."], ["198.51.100.7", "From another address."]] as const) {
        const result = await swaks({ server: h.smtp, from: ada, to: sent.replyTo, proxyFrom: sender, data: reply({ from: `Ada <${ada}>`, to: sent.replyTo, body: text }) });
        expect(result.last, result.transcript).toMatch(/^250 /);
      }
      expect(await spfOfReplies(sent.id)).toEqual([["From the allowed address.", "pass"], ["From another address.", "fail"]]);
    });

    it("reads no header from a peer it does not list, so a client cannot claim another address", async () => {
      h = await startInbound(database);
      const sent = await h.sendTracked();
      allowOnly(h, "203.0.113.9");
      const result = await swaks({ server: h.smtp, from: ada, to: sent.replyTo, proxyFrom: "203.0.113.9", data: reply({ from: `Ada <${ada}>`, to: sent.replyTo, body: "Claiming another address." }) });
      // Sent before the greeting, the header is a client talking too soon.
      expect(result.replies, result.transcript).toEqual([expect.stringMatching(/^421 .*You talk too soon/)]);
      expect(await spfOfReplies(sent.id)).toEqual([]);
    });

    it("requires the header from a listed load balancer: it gets no greeting without one, and a line that is not one closes the connection", async () => {
      h = await startInbound(database, { INBOUND_PROXY_PROTOCOL_FROM: "127.0.0.1" });
      const socket = connect({ host: "127.0.0.1", port: Number(h.smtp.split(":")[1]) });
      let heard = "";
      socket.on("data", (chunk: Buffer) => (heard += chunk.toString()));
      const closed = once(socket, "close");
      await once(socket, "connect");
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(heard).toBe("");
      socket.write("EHLO client.example.org\r\n");
      await closed;
      expect(heard).toBe("* BAD Invalid PROXY header\r\n");
    });
  });

  it("unsubscribes the recipient named by an unsubscribe+ address (the List-Unsubscribe mailto)", async () => {
    h = await startInbound(database);
    const sent = await h.sendTracked();
    const address = h.t.runtime.tracking.unsubscribeMailto({ messageId: sent.id, position: 1 }, RETURN_PATH_DOMAIN);
    const result = await swaks({ server: h.smtp, from: grace, to: address, body: "unsubscribe" });
    expect(result.last, result.transcript).toMatch(/^250 /);
    expect((await h.events(sent.id)).find((e) => e.type === "message.unsubscribed")).toMatchObject({ recipient: grace, data: { method: "mailto" } });
    const suppressions = (await h.call("GET", `/v1/suppressions?email=${grace}`)).json().data;
    expect(suppressions).toEqual([expect.objectContaining({ email: grace, reason: "unsubscribe" })]);
  });

  it("suppresses again after the suppression was deleted, when the recipient mails the unsubscribe address again", async () => {
    h = await startInbound(database);
    const sent = await h.sendTracked();
    const address = h.t.runtime.tracking.unsubscribeMailto({ messageId: sent.id, position: 1 }, RETURN_PATH_DOMAIN);
    expect((await swaks({ server: h.smtp, from: grace, to: address, body: "unsubscribe" })).last).toMatch(/^250 /);
    const [first] = (await h.call("GET", `/v1/suppressions?email=${grace}`)).json().data;
    expect((await h.t.call({ method: "DELETE", url: `/v1/suppressions/${first.id}`, key: h.t.workspace.liveKey })).statusCode).toBeLessThan(300);
    expect((await swaks({ server: h.smtp, from: grace, to: address, body: "unsubscribe" })).last).toMatch(/^250 /);
    expect((await h.call("GET", `/v1/suppressions?email=${grace}`)).json().data).toEqual([expect.objectContaining({ email: grace, reason: "unsubscribe" })]);
    expect((await h.events(sent.id)).filter((e) => e.type === "message.unsubscribed").map((e) => e.data.method)).toEqual(["mailto", "mailto"]);
  });
});
