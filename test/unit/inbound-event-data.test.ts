import { describe, expect, it } from "vitest";
import { replyEventData, type NewInboundMessage } from "../../src/db/repositories/inbound.js";

// events.data is a TEXT column: 65,535 bytes on MySQL.
const TEXT_BYTES = 65_535;
const bytes = (data: unknown) => Buffer.byteLength(JSON.stringify(data));

const reply = (fields: Partial<NewInboundMessage> = {}): NewInboundMessage => ({
  id: "inb_01jaaaaaaaaaaaaaaaaaaaaaaa",
  scope: { workspaceId: "ws_1", environment: "live" },
  message_id: "msg_01jaaaaaaaaaaaaaaaaaaaaaaa",
  recipient: "ada@example.com",
  from: "Ada <ada@example.com>",
  to: ["reply+msg_01jaaaaaaaaaaaaaaaaaaaaaaa-0123456789@bounces.acme.example"],
  subject: "Re: Your receipt",
  text: "Thanks, that worked!",
  quoted_text: "On Sat, Acme wrote:\n> Hello",
  html: "<p>Thanks, that worked!</p>",
  message_id_header: "<r1@example.com>",
  in_reply_to: null,
  authentication: { spf: "pass", dkim: "pass", dmarc: "pass" },
  threaded_by: "reply_address",
  simulated: false,
  received_at: 0,
  attachments: [],
  ...fields,
});

describe("replyEventData", () => {
  it("carries a reply that fits whole, with no flag", () => {
    const attachment = { filename: "a.png", content_type: "image/png", content_id: null, content: Buffer.from("png") };
    expect(replyEventData(reply({ attachments: [attachment] }))).toEqual({
      inbound_id: "inb_01jaaaaaaaaaaaaaaaaaaaaaaa",
      from: "Ada <ada@example.com>",
      subject: "Re: Your receipt",
      text: "Thanks, that worked!",
      quoted_text: "On Sat, Acme wrote:\n> Hello",
      html: "<p>Thanks, that worked!</p>",
      attachments: [{ index: 0, filename: "a.png", content_type: "image/png", size: 3, content_id: null }],
      authentication: { spf: "pass", dkim: "pass", dmarc: "pass" },
      threaded_by: "reply_address",
    });
  });

  it("keeps the text and drops an HTML body that does not fit (an Outlook reply with its history), and says so", () => {
    const html = `<html><body><p>Thanks</p>${"<div class=MsoNormal>quoted history</div>".repeat(5000)}</body></html>`;
    const quoted = "> quoted history\n".repeat(5000);
    const data = replyEventData(reply({ text: "Thanks", quoted_text: quoted, html }));
    expect(data).toMatchObject({ text: "Thanks", html: null, content_truncated: true });
    expect(quoted.startsWith(data.quoted_text as string)).toBe(true);
    expect((data.quoted_text as string).length).toBeGreaterThan(40_000);
    expect(bytes(data)).toBeLessThanOrEqual(60_000);
  });

  it("cuts a text longer than an event holds at its end, never within a character", () => {
    const text = "😀".repeat(100_000);
    const data = replyEventData(reply({ text }));
    expect(data).toMatchObject({ html: null, content_truncated: true });
    expect(text.startsWith(data.text as string)).toBe(true);
    expect((data.text as string).length).toBeGreaterThan(25_000);
    expect((data.text as string).length % 2).toBe(0);
    expect(bytes(data)).toBeLessThanOrEqual(60_000);
  });

  it("stays within the events column whatever the reply holds: escaped characters, long header fields", () => {
    const control = "\u0001".repeat(200_000); // six bytes each as JSON
    const data = replyEventData(reply({ from: control, subject: control, text: control, quoted_text: control, html: control }));
    expect(bytes(data)).toBeLessThanOrEqual(60_000);
    expect(bytes(data)).toBeLessThan(TEXT_BYTES);
    expect(data).toMatchObject({ from: "\u0001".repeat(998), subject: "\u0001".repeat(998), html: null, content_truncated: true });
  });

  it("lists the leading attachments that fit when there are thousands, with their fields kept to what their columns hold", () => {
    const attachment = { filename: "f".repeat(300), content_type: `application/${"x".repeat(300)}`, content_id: `<${"c".repeat(5000)}>`, content: Buffer.alloc(1) };
    const data = replyEventData(reply({ attachments: Array.from({ length: 5000 }, () => attachment) }));
    expect(bytes(data)).toBeLessThanOrEqual(60_000);
    expect(data).toMatchObject({ text: "Thanks, that worked!", content_truncated: true });
    const attachments = data.attachments as Array<Record<string, unknown>>;
    expect(attachments.length).toBeGreaterThan(10);
    expect(attachments.length).toBeLessThan(5000);
    expect(attachments.at(-1)).toEqual({ index: attachments.length - 1, filename: "f".repeat(255), content_type: "application/octet-stream", size: 1, content_id: `<${"c".repeat(997)}` });
  });
});
