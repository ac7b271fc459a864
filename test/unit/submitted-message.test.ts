import { simpleParser, type ParsedMail } from "mailparser";
import MailComposer from "nodemailer/lib/mail-composer/index.js";
import type Mail from "nodemailer/lib/mailer/index.js";
import { describe, expect, it } from "vitest";
import { shortenedReferences, submissionIdempotencyKey, submittedMessage } from "../../src/submission/submitted-message.js";

/** Composes a message as an SMTP client library would send it (nodemailer's own composer). */
function compose(mail: Mail.Options): Promise<Buffer> {
  return new Promise((resolve, reject) => new MailComposer(mail).compile().build((error, raw) => (error ? reject(error) : resolve(raw))));
}

/** Parsed as the submission server parses it. */
const parse = (raw: Buffer | string): Promise<ParsedMail> => simpleParser(raw, { keepCidLinks: true, skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true });

const raw = (...lines: string[]) => [...lines, "", "Hello", ""].join("\r\n");

async function submit(mail: Mail.Options, envelope: string[]) {
  return submittedMessage(await parse(await compose(mail)), envelope);
}

describe("submittedMessage", () => {
  it("makes the createMessage request the message stands for: headers to fields, the envelope's other recipients to bcc", async () => {
    const result = await submit(
      {
        from: '"Acme, Inc." <hello@acme.example>',
        to: "Ada Lovelace <Ada@Example.com>",
        cc: "grace@example.com",
        bcc: "alan@example.com",
        replyTo: "support@acme.example",
        subject: "Your receipt ✓",
        html: "<p>Paid</p>",
        text: "Paid",
      },
      ["Ada@example.com", "grace@example.com", "alan@example.com"],
    );
    expect(result).toEqual({
      ok: true,
      request: {
        from: '"Acme, Inc." <hello@acme.example>',
        to: ["Ada Lovelace <Ada@example.com>"],
        cc: ["grace@example.com"],
        bcc: ["alan@example.com"],
        reply_to: ["support@acme.example"],
        subject: "Your receipt ✓",
        html: "<p>Paid</p>",
        text: "Paid",
      },
    });
  });

  it("leaves text out of an HTML-only message, so Mailroom derives it as for the API, and html out of a text-only one", async () => {
    const htmlOnly = await submit({ from: "a@acme.example", to: "b@example.com", subject: "S", html: "<p>Hi</p>" }, ["b@example.com"]);
    const textOnly = await submit({ from: "a@acme.example", to: "b@example.com", subject: "S", text: "Hi" }, ["b@example.com"]);
    expect(htmlOnly.ok && htmlOnly.request).toMatchObject({ html: "<p>Hi</p>" });
    expect(htmlOnly.ok && htmlOnly.request.text).toBeUndefined();
    expect(textOnly.ok && textOnly.request).toMatchObject({ text: "Hi" });
    expect(textOnly.ok && textOnly.request.html).toBeUndefined();
  });

  it("leaves From out when the message has none, for the workspace's default sender", async () => {
    const result = submittedMessage(await parse(raw("To: b@example.com", "Subject: S")), ["b@example.com"]);
    expect(result.ok && result.request.from).toBeUndefined();
  });

  it("refuses a To or Cc address that is not a recipient of the envelope, and a message without a To recipient", async () => {
    const notInEnvelope = await submit({ from: "a@acme.example", to: "b@example.com", cc: "c@example.com", subject: "S", text: "x" }, ["b@example.com"]);
    expect(notInEnvelope).toEqual({ ok: false, errors: [expect.objectContaining({ pointer: "/cc", message: expect.stringContaining("c@example.com, which is not a recipient of the envelope") })] });
    const bccOnly = await submit({ from: "a@acme.example", bcc: "b@example.com", subject: "S", text: "x" }, ["b@example.com"]);
    expect(bccOnly).toEqual({ ok: false, errors: [expect.objectContaining({ pointer: "/to", message: expect.stringContaining("To header") })] });
  });

  it("leaves out of To and Cc the addresses RCPT TO refused, valid or not, since the client was told and expects the others to get it", async () => {
    const mail = await parse(raw("From: a@acme.example", "To: b@example.com, not-an-address, Z@Example.com", "Cc: c@example.com", "Subject: S"));
    const result = submittedMessage(mail, ["b@example.com", "c@example.com"], ["not-an-address", "z@example.com"]);
    expect(result.ok && { to: result.request.to, cc: result.request.cc, bcc: result.request.bcc }).toEqual({ to: ["b@example.com"], cc: ["c@example.com"], bcc: undefined });
    // Not refused at RCPT TO: a To address outside the envelope still fails the message.
    expect(submittedMessage(mail, ["b@example.com", "c@example.com"], ["not-an-address"]).ok).toBe(false);
  });

  it("refuses more than one From address and addresses that are not valid", async () => {
    const result = submittedMessage(await parse(raw("From: a@acme.example, b@acme.example", "To: not-an-address, c@example.com", "Subject: S")), ["c@example.com"]);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.errors.map((e) => e.pointer)).toEqual(["/from", "/to"]);
  });

  it("drops the headers Mailroom writes itself and keeps the others unfolded, by their own spelling", async () => {
    const message = raw(
      "Received: from app.internal by relay.internal",
      "Return-Path: <app@acme.example>",
      "DKIM-Signature: v=1; a=rsa-sha256; d=acme.example; s=app; b=abc",
      "Date: Sat, 28 Nov 2026 10:00:00 +0000",
      "Message-ID: <1@app.acme.example>",
      "Sender: app@acme.example",
      "From: a@acme.example",
      "To: b@example.com",
      "Subject: S",
      "X-Entity-Ref-ID: order-1042",
      "In-Reply-To: <0@example.com>",
      "List-Unsubscribe: <https://acme.example/u/1>",
      "List-Unsubscribe-Post: List-Unsubscribe=One-Click",
      "Thread-Topic: a long",
      " folded topic",
      "X-Note: =?UTF-8?Q?caf=C3=A9?= for two",
      "MIME-Version: 1.0",
      "Content-Type: text/plain; charset=utf-8",
      "Content-Location: https://acme.example/mail/1",
      "Content-Language: en",
    );
    const result = submittedMessage(await parse(message), ["b@example.com"]);
    expect(result.ok && result.request.headers).toEqual({
      "X-Entity-Ref-ID": "order-1042",
      "In-Reply-To": "<0@example.com>",
      "List-Unsubscribe": "<https://acme.example/u/1>",
      "Thread-Topic": "a long folded topic",
      "X-Note": "café for two",
      "Content-Language": "en",
    });
  });

  it("leaves out a header without a value, which says nothing and which the API would refuse", async () => {
    const result = submittedMessage(await parse(raw("From: a@acme.example", "To: b@example.com", "Subject: S", "X-Empty:", "X-Spaces:   ", "X-Kept: yes")), ["b@example.com"]);
    expect(result.ok && result.request.headers).toEqual({ "X-Kept": "yes" });
  });

  it("refuses an extra header given twice, which one message field cannot hold", async () => {
    const result = submittedMessage(await parse(raw("From: a@acme.example", "To: b@example.com", "Subject: S", "X-Campaign: one", "X-Campaign: two")), ["b@example.com"]);
    expect(result).toEqual({ ok: false, errors: [expect.objectContaining({ pointer: "/headers/X-Campaign", message: expect.stringContaining("more than once") })] });
  });

  it("takes tags, metadata, the schedule and the tracking choices from X-Mailroom-* headers, which are never kept as headers", async () => {
    const result = await submit(
      {
        from: "a@acme.example",
        to: "b@example.com",
        subject: "S",
        text: "x",
        headers: {
          "X-Mailroom-Tags": "receipt, billing",
          "X-Mailroom-Metadata": '{"order_id":"1042"}',
          "X-Mailroom-Scheduled-At": "2026-12-01T09:00:00Z",
          "X-Mailroom-Expires-At": "2026-12-01T10:00:00Z",
          "X-Mailroom-Track-Opens": "true",
          "X-Mailroom-Track-Clicks": "FALSE",
          "X-Mailroom-Track-Replies": "true",
          "X-Mailroom-Unsubscribe": "false",
        },
      },
      ["b@example.com"],
    );
    expect(result.ok && result.request).toMatchObject({
      tags: ["receipt", "billing"],
      metadata: { order_id: "1042" },
      scheduled_at: "2026-12-01T09:00:00Z",
      expires_at: "2026-12-01T10:00:00Z",
      track_opens: true,
      track_clicks: false,
      track_replies: true,
      unsubscribe: false,
    });
    expect(result.ok && result.request.headers).toBeUndefined();
  });

  it("refuses an unknown X-Mailroom-* header, metadata that is not a JSON object of strings, and a tracking value that is not a boolean", async () => {
    const result = await submit(
      { from: "a@acme.example", to: "b@example.com", subject: "S", text: "x", headers: { "X-Mailroom-Tag": "receipt", "X-Mailroom-Metadata": '{"n":1}', "X-Mailroom-Track-Opens": "yes" } },
      ["b@example.com"],
    );
    expect(!result.ok && result.errors.map((e) => e.pointer)).toEqual(["/headers/X-Mailroom-Tag", "/headers/X-Mailroom-Metadata", "/headers/X-Mailroom-Track-Opens"]);
    expect(!result.ok && result.errors[0]!.message).toContain("X-Mailroom-Tags");
  });

  it("turns attachments into the API's, inline ones keeping their Content-ID and the HTML its cid: links", async () => {
    const result = await submit(
      {
        from: "a@acme.example",
        to: "b@example.com",
        subject: "S",
        html: '<p><img src="cid:logo@acme"></p>',
        attachments: [
          { filename: "invoice.pdf", content: Buffer.from("%PDF-1.4 invoice"), contentType: "application/pdf" },
          { content: Buffer.from([0x89, 0x50, 0x4e, 0x47]), contentType: "image/png", cid: "logo@acme" },
        ],
      },
      ["b@example.com"],
    );
    expect(result.ok && result.request.html).toBe('<p><img src="cid:logo@acme"></p>');
    // In MIME order: the inline image sits with the HTML (multipart/related), before the file.
    expect(result.ok && result.request.attachments).toEqual([
      { filename: "attachment-2.png", content: Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString("base64"), content_type: "image/png", content_id: "logo@acme" },
      { filename: "invoice.pdf", content: Buffer.from("%PDF-1.4 invoice").toString("base64"), content_type: "application/pdf" },
    ]);
  });

  /** A message with a line of text and one file, the file's part header fields as given. */
  const withFile = (fileFields: string[], content: string) =>
    [
      "From: a@acme.example",
      "To: b@example.com",
      "Subject: S",
      "MIME-Version: 1.0",
      'Content-Type: multipart/mixed; boundary="b"',
      "",
      "--b",
      "Content-Type: text/plain",
      "",
      "See the file.",
      "--b",
      ...fileFields,
      "",
      content,
      "--b--",
      "",
    ].join("\r\n");

  it("names a file sent without a name by its place and type", async () => {
    const message = withFile(["Content-Type: application/pdf", "Content-Disposition: attachment", "Content-Transfer-Encoding: base64"], Buffer.from("%PDF").toString("base64"));
    const result = submittedMessage(await parse(message), ["b@example.com"]);
    expect(result.ok && result.request).toMatchObject({ text: "See the file.", attachments: [{ filename: "attachment-1.pdf", content_type: "application/pdf", content: Buffer.from("%PDF").toString("base64") }] });
  });

  it("takes a file whose Content-Type is empty as text/plain, as MIME does", async () => {
    const message = withFile(["Content-Type: ", "Content-Disposition: attachment; filename=notes.txt"], "Notes");
    const result = submittedMessage(await parse(message), ["b@example.com"]);
    expect(result.ok && result.request).toMatchObject({ attachments: [{ filename: "notes.txt", content_type: "text/plain", content: Buffer.from("Notes").toString("base64") }] });
  });
});

describe("shortenedReferences", () => {
  it("keeps a References field that fits as it is", () => {
    expect(shortenedReferences("<a@x> <b@x>")).toBe("<a@x> <b@x>");
  });

  it("keeps the thread's first message ID and as many of the last as fit", () => {
    const ids = Array.from({ length: 60 }, (_, i) => `<${String(i).padStart(2, "0")}-message@mail.example.com>`);
    const shortened = shortenedReferences(ids.join(" "));
    expect(shortened.length).toBeLessThanOrEqual(998);
    const kept = shortened.split(" ");
    expect(kept[0]).toBe(ids[0]);
    expect(kept.slice(1)).toEqual(ids.slice(ids.length - (kept.length - 1)));
  });
});

describe("submissionIdempotencyKey", () => {
  const message = (id: string, body: string) => Buffer.from(raw(`Message-ID: <${id}@app.acme.example>`, "From: a@acme.example", "To: b@example.com", "Subject: S").replace("Hello", body));
  const envelope = ["b@example.com", "c@example.com"];

  it("is the same for the same bytes sent again to the same recipients, in any order", async () => {
    const first = message("1", "Hello");
    const key = submissionIdempotencyKey(first, await parse(first), envelope);
    expect(key).toMatch(/^smtp:[A-Za-z0-9_-]{43}$/);
    expect(submissionIdempotencyKey(Buffer.from(first), await parse(first), [...envelope].reverse())).toBe(key);
  });

  it("differs for another message with the same Message-ID, and for the same bytes to other recipients", async () => {
    const first = message("1", "Hello");
    const key = submissionIdempotencyKey(first, await parse(first), envelope);
    const other = message("1", "Goodbye");
    expect(submissionIdempotencyKey(other, await parse(other), envelope)).not.toBe(key);
    expect(submissionIdempotencyKey(first, await parse(first), ["b@example.com"])).not.toBe(key);
  });

  it("is null for a message without a Message-ID, which may be sent twice on purpose", async () => {
    const bare = Buffer.from(raw("From: a@acme.example", "To: b@example.com", "Subject: S"));
    expect(submissionIdempotencyKey(bare, await parse(bare), envelope)).toBeNull();
  });
});
