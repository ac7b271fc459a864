import { createHash } from "node:crypto";
import libmime from "libmime";
import type { AddressObject, Attachment, EmailAddress, HeaderLines, ParsedMail } from "mailparser";
import { detectExtension } from "nodemailer/lib/mime-funcs/mime-types.js";
import { formatMailbox, normaliseAddress } from "../domain/addresses.js";
import type { FieldError } from "../domain/errors.js";
import { describesMimeBody } from "../domain/mime-headers.js";
import { mediaTypeOf } from "../smtp/mime-part.js";
import type { components } from "../../generated/v1.js";

type CreateMessageRequest = components["schemas"]["CreateMessageRequest"];

/**
 * A message submitted over SMTP (docs/smtp.md) turned into the createMessage request it stands
 * for, so that it meets exactly the checks and the pipeline an API call meets. Pure: the parsed
 * MIME and the envelope in, the request (or what is wrong with the message) out.
 *
 * - The envelope's recipients (RCPT TO) are who gets the message, as with any MTA: those the To
 *   and Cc headers name keep their header, the others are Bcc. A To or Cc address that is not a
 *   recipient cannot be represented (Mailroom writes those headers from the recipients) and is
 *   refused, as is a message without a To recipient.
 * - From, Reply-To, Subject, the HTML and text bodies and the attachments (inline ones keep
 *   their Content-ID) become their fields. Mailroom builds the MIME, Date and Message-ID itself,
 *   so those headers and the trace and signature headers a client may add are dropped; every
 *   other header is kept as one of the message's `headers`.
 * - `X-Mailroom-*` headers give the API fields MIME has no place for (tags, metadata, schedule,
 *   tracking); they are consumed, never sent, and an unknown one is refused rather than ignored.
 */

/** Headers Mailroom writes itself for every message, with those that describe the MIME body: a submitted one's are dropped, not refused. */
const REPLACED_HEADERS = new Set([
  "date",
  "message-id",
  "mime-version",
  "received",
  "return-path",
  "dkim-signature",
  // The envelope sender is Mailroom's own (the VERP return path); Sender would name another.
  "sender",
  // Never sent: the recipients it names are the envelope's.
  "bcc",
  // Mailroom adds it itself when List-Unsubscribe carries an https URI, covered by its signature (RFC 8058).
  "list-unsubscribe-post",
]);

/** Headers that become fields of the request. */
const MAPPED_HEADERS = new Set(["from", "to", "cc", "reply-to", "subject"]);

const CONTROL_PREFIX = "x-mailroom-";

/** The X-Mailroom-* headers, each one API field. */
const CONTROL_HEADERS = {
  "x-mailroom-tags": "tags",
  "x-mailroom-metadata": "metadata",
  "x-mailroom-scheduled-at": "scheduled_at",
  "x-mailroom-expires-at": "expires_at",
  "x-mailroom-track-opens": "track_opens",
  "x-mailroom-track-clicks": "track_clicks",
  "x-mailroom-track-replies": "track_replies",
  "x-mailroom-unsubscribe": "unsubscribe",
} as const satisfies Record<string, keyof CreateMessageRequest>;

type ControlHeader = keyof typeof CONTROL_HEADERS;

/** An unfolded header value must fit the API's limit for one header (RFC 5322 §2.1.1's line length). */
const HEADER_VALUE_MAX = 998;

export type SubmittedMessage = { ok: true; request: CreateMessageRequest } | { ok: false; errors: FieldError[] };

/**
 * `envelopeRecipients` are the RCPT TO addresses, already checked and normalised;
 * `refusedRecipients` those RCPT TO refused (as given), which To and Cc may still name: the
 * client was told, and expects the message to go to the others (RFC 5321 §3.3), so they are left
 * out of To and Cc rather than failing the message. `mail` was parsed with mailparser's
 * simpleParser keeping cid: links and without deriving text from HTML.
 */
export function submittedMessage(mail: ParsedMail, envelopeRecipients: readonly string[], refusedRecipients: readonly string[] = []): SubmittedMessage {
  const errors: FieldError[] = [];
  const fail = (pointer: string, message: string) => errors.push({ location: "body", pointer, message });
  const request: Partial<CreateMessageRequest> = {};

  const from = mailboxes(mail.from, "/from", fail);
  if (from.length > 1) fail("/from", "names more than one address: give one sender");
  else if (from.length === 1) request.from = formatMailbox(from[0]!);

  const envelope = new Set(envelopeRecipients);
  const refused = new Set(refusedRecipients.map((address) => address.toLowerCase()));
  const wasRefused = (address: string) => refused.has(address.toLowerCase());
  const headerTo = mailboxes(mail.to, "/to", fail, wasRefused);
  const headerCc = mailboxes(mail.cc, "/cc", fail, wasRefused);
  for (const [pointer, list] of [["/to", headerTo], ["/cc", headerCc]] as const) {
    for (const mailbox of list) {
      if (!envelope.has(mailbox.address)) fail(pointer, `names ${mailbox.address}, which is not a recipient of the envelope (RCPT TO): every address in To and Cc must be one`);
    }
  }
  if (headerTo.length === 0) fail("/to", "a To header naming at least one of the recipients is required");
  else request.to = headerTo.map(formatMailbox);
  if (headerCc.length > 0) request.cc = headerCc.map(formatMailbox);
  const named = new Set([...headerTo, ...headerCc].map((m) => m.address));
  const bcc = envelopeRecipients.filter((address) => !named.has(address));
  if (bcc.length > 0) request.bcc = bcc;

  const replyTo = mailboxes(mail.replyTo, "/reply_to", fail);
  if (replyTo.length > 0) request.reply_to = replyTo.map(formatMailbox);
  if (mail.subject !== undefined && mail.subject !== "") request.subject = mail.subject;
  if (typeof mail.html === "string" && mail.html !== "") request.html = bodyText(mail.html);
  // Without a text part mailparser's text is empty (skipHtmlToText): Mailroom derives it as for the API.
  if (typeof mail.text === "string" && mail.text.trim() !== "") request.text = bodyText(mail.text);
  if (mail.attachments.length > 0) request.attachments = mail.attachments.map(attachmentInput);

  const { headers, control } = splitHeaders(mail.headerLines, fail);
  if (Object.keys(headers).length > 0) request.headers = headers;
  applyControlHeaders(request, control, fail);

  return errors.length > 0 ? { ok: false, errors } : { ok: true, request: request as CreateMessageRequest };
}

/**
 * The Idempotency-Key of a submission: the digest of its envelope's recipients and its bytes,
 * when it carries a Message-ID. A client that lost the answer to its DATA and sends the message
 * again (RFC 1047) sends the same bytes, Message-ID and Date included, to the same recipients,
 * and is answered with the message already accepted instead of sending it twice. The same bytes
 * to other recipients (a client that splits a message between transactions) are another
 * submission. A message without a Message-ID could be sent twice on purpose, so it gets no key.
 */
export function submissionIdempotencyKey(raw: Buffer, mail: ParsedMail, envelopeRecipients: readonly string[]): string | null {
  if (!mail.messageId) return null;
  const digest = createHash("sha256").update([...envelopeRecipients].sort().join(",")).update("\n").update(raw);
  return `smtp:${digest.digest("base64url")}`;
}

/**
 * A body part's text without the line break that ends it: in a multipart message that break
 * belongs to the boundary after it (RFC 2046 §5.1.1), and mailparser keeps it.
 */
function bodyText(text: string): string {
  return text.endsWith("\n") ? text.slice(0, text.endsWith("\r\n") ? -2 : -1) : text;
}

/** The addresses of an address header, groups flattened, each normalised; invalid ones reported, those `leftOut` says skipped. */
function mailboxes(
  field: AddressObject | AddressObject[] | undefined,
  pointer: string,
  fail: (pointer: string, message: string) => void,
  leftOut: (address: string) => boolean = () => false,
): Array<{ address: string; name: string | null }> {
  if (field === undefined) return [];
  const flat = (entries: EmailAddress[]): EmailAddress[] => entries.flatMap((entry) => (entry.group ? flat(entry.group) : [entry]));
  const out: Array<{ address: string; name: string | null }> = [];
  for (const entry of flat((Array.isArray(field) ? field : [field]).flatMap((f) => f.value))) {
    // Something that is no address at all mailparser gives as a name with an empty address.
    const written = entry.address || entry.name;
    if (leftOut(written)) continue;
    const address = normaliseAddress(entry.address ?? "");
    if (address === null) fail(pointer, `${JSON.stringify(written)} is not a valid email address`);
    else out.push({ address, name: entry.name || null });
  }
  return out;
}

function attachmentInput(attachment: Attachment, index: number): NonNullable<CreateMessageRequest["attachments"]>[number] {
  const contentType = mediaTypeOf(attachment);
  return {
    filename: attachment.filename || `attachment-${index + 1}.${detectExtension(contentType)}`,
    content: attachment.content.toString("base64"),
    content_type: contentType,
    ...(attachment.cid ? { content_id: attachment.cid } : {}),
  };
}

/** The headers kept for the message (unfolded, by their own spelling), and the control headers' values. */
function splitHeaders(lines: HeaderLines, fail: (pointer: string, message: string) => void): { headers: Record<string, string>; control: Map<ControlHeader, string> } {
  const headers: Record<string, string> = {};
  const seen = new Set<string>();
  const control = new Map<ControlHeader, string>();
  for (const { key, line } of lines) {
    if (REPLACED_HEADERS.has(key) || describesMimeBody(key) || MAPPED_HEADERS.has(key)) continue;
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).trim();
    const value = headerText(line.slice(colon + 1));
    if (key.startsWith(CONTROL_PREFIX)) {
      if (!(key in CONTROL_HEADERS)) fail(`/headers/${name}`, `is not a Mailroom header; they are ${Object.keys(CONTROL_HEADERS).map(spelled).join(", ")}`);
      else if (control.has(key as ControlHeader)) fail(`/headers/${name}`, "is given more than once");
      else control.set(key as ControlHeader, value);
      continue;
    }
    if (seen.has(key)) {
      fail(`/headers/${name}`, "is given more than once; a message carries each extra header once");
      continue;
    }
    seen.add(key);
    // A field without a value says nothing, and the API refuses one; a mail client's is left out.
    if (value.trim() === "") continue;
    headers[name] = key === "references" ? shortenedReferences(value) : value;
  }
  return { headers, control };
}

/** The X-Mailroom-* headers as request fields, each checked for its form here and for its rules by the API's checks. */
function applyControlHeaders(request: Partial<CreateMessageRequest>, control: ReadonlyMap<ControlHeader, string>, fail: (pointer: string, message: string) => void): void {
  for (const [header, value] of control) {
    const field = CONTROL_HEADERS[header];
    const pointer = `/headers/${spelled(header)}`;
    switch (field) {
      case "tags":
        request.tags = value.split(",").map((tag) => tag.trim()).filter(Boolean);
        break;
      case "metadata": {
        const parsed = parseJson(value);
        if (parsed === undefined || typeof parsed !== "object" || parsed === null || Array.isArray(parsed) || !Object.values(parsed).every((v) => typeof v === "string")) {
          fail(pointer, `must be a JSON object of strings, such as {"order_id":"1042"}`);
        } else request.metadata = parsed as Record<string, string>;
        break;
      }
      case "scheduled_at":
      case "expires_at":
        request[field] = value;
        break;
      default:
        if (value.toLowerCase() === "true" || value.toLowerCase() === "false") request[field] = value.toLowerCase() === "true";
        else fail(pointer, "must be true or false");
    }
  }
}

/**
 * A header's value as text: unfolded (RFC 5322 §2.2.3 removes each CRLF that precedes
 * whitespace), its raw bytes read as UTF-8 (mailparser hands header lines over byte for byte),
 * and its encoded words decoded (RFC 2047: client libraries encode any value with characters
 * such as `{` or `"`), so that it reads as the same header given to the API would.
 */
function headerText(raw: string): string {
  const unfolded = Buffer.from(raw.replace(/\r?\n(?=[ \t])/g, ""), "latin1").toString("utf8").trim();
  try {
    return libmime.decodeWords(unfolded);
  } catch {
    return unfolded;
  }
}

/**
 * A References field longer than one header may be is shortened as mail clients do: its first
 * message ID (the thread's root) and as many of the last ones as fit, so threading still works.
 */
export function shortenedReferences(value: string, max = HEADER_VALUE_MAX): string {
  if (value.length <= max) return value;
  const ids = value.match(/<[^<>]*>/g) ?? [];
  if (ids.length === 0) return value;
  const kept = [ids[0]!];
  const tail: string[] = [];
  let length = ids[0]!.length;
  for (let i = ids.length - 1; i > 0 && length + 1 + ids[i]!.length <= max; i--) {
    tail.unshift(ids[i]!);
    length += 1 + ids[i]!.length;
  }
  return [...kept, ...tail].join(" ");
}

function parseJson(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

/** x-mailroom-track-opens -> X-Mailroom-Track-Opens, as the docs spell them. */
function spelled(header: string): string {
  return header.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
}
