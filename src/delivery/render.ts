import MailComposer from "nodemailer/lib/mail-composer/index.js";
import type { MessageRecord } from "../db/repositories/messages.js";
import { textFromHtml } from "../domain/text-from-html.js";
import type { TrackedParts } from "../tracking/links.js";
import { buildMime } from "./mime-build.js";

export interface RenderedMessage {
  mime: string;
  text: string | null;
}

/**
 * RFC 5322 source of a message, composed by nodemailer (its tree, assembled by buildMime). Bcc
 * recipients get the mail through the envelope only: the composer leaves them out of the headers. The plain-text part is derived
 * from the HTML when the client gave none, so every message is multipart/alternative.
 */
export async function renderMessage(message: MessageRecord, now: number, tracked?: TrackedParts): Promise<RenderedMessage> {
  // From the HTML as written: the text part keeps the original URLs (docs/tracking.md).
  const text = message.text ?? (message.html === null ? null : textFromHtml(message.html));
  const html = tracked ? tracked.html : message.html;
  const headers = { ...message.headers, ...tracked?.headers };
  const composer = new MailComposer({
    from: message.from,
    to: message.to,
    cc: message.cc,
    bcc: message.bcc,
    replyTo: message.reply_to.length > 0 ? message.reply_to : (tracked?.replyTo ?? undefined),
    subject: message.subject,
    messageId: message.message_id_header,
    date: new Date(now),
    headers: { ...headers, ...oneClickUnsubscribe(headers) },
    ...(html === null ? {} : { html: withCrlf(html) }),
    ...(text === null ? {} : { text: withCrlf(text) }),
    attachments: message.attachments.map((a) => ({
      filename: a.filename,
      content: a.content,
      encoding: "base64",
      contentType: a.content_type,
      ...(a.content_id === null ? {} : { cid: a.content_id }),
    })),
  });
  const mime = await buildMime(composer.compile());
  return { mime: mime.toString("utf8"), text };
}

/**
 * RFC 5322 §2.3: in a message, CR and LF appear only together. nodemailer keeps a part's line
 * breaks as given (its 7bit parts byte for byte), and SMTP would repair bare ones on the wire only:
 * the kept source, which the API and the dashboard show, must be right as it is.
 */
function withCrlf(content: string): string {
  return content.replace(/\r\n|\r|\n/g, "\r\n");
}

/**
 * RFC 8058: a List-Unsubscribe with an https URI also gets `List-Unsubscribe-Post`, so mailbox
 * providers can unsubscribe with one POST (Gmail and Yahoo require it of bulk senders). It is
 * only honoured when DKIM covers both fields, which Mailroom's signature does.
 */
function oneClickUnsubscribe(headers: Record<string, string>): Record<string, string> {
  const value = Object.entries(headers).find(([name]) => name.toLowerCase() === "list-unsubscribe")?.[1];
  return value !== undefined && /<https:\/\//i.test(value) ? { "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" } : {};
}
