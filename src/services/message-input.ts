import { detectMimeType } from "nodemailer/lib/mime-funcs/mime-types.js";
import { domainOf, formatMailbox, parseMailbox, type Mailbox } from "../domain/addresses.js";
import { parseInstant } from "../domain/clock.js";
import { ValidationError, type FieldError } from "../domain/errors.js";
import { LIMITS } from "../domain/limits.js";
import { describesMimeBody, UNFOLDABLE, unfoldable } from "../domain/mime-headers.js";
import type { MessageContent, MessageTracking, NewRecipient, StoredAttachment } from "../db/repositories/messages.js";
import { statementBytes } from "../db/rows.js";
import type { components } from "../../generated/v1.js";
import { pointerSegment } from "../domain/json-pointer.js";
import type { InlineAttachment } from "./attachment-urls.js";

type CreateMessageRequest = components["schemas"]["CreateMessageRequest"];
/** A message to check, its attachments' files in hand (a file given by URL: fetched, or an empty stand-in until it is). */
export type MessageInput = Omit<CreateMessageRequest, "attachments"> & { attachments?: InlineAttachment[] | undefined };

/** Header fields Mailroom writes itself; a client setting them would forge or break the message. */
const RESERVED_HEADERS = new Set(
  ["from", "to", "cc", "bcc", "reply-to", "subject", "date", "message-id", "sender", "return-path", "mime-version", "dkim-signature", "received", "list-unsubscribe-post"],
);

/** Whether a header field is Mailroom's to write: one of those above, or one describing the MIME body it composes. */
function isReservedHeader(name: string): boolean {
  return RESERVED_HEADERS.has(name.toLowerCase()) || describesMimeBody(name);
}

/** Printable ASCII but space, `<` and `>`: what a URI in angle brackets and a Content-ID are made of. */
const BRACKETED = "[\\x21-\\x3b=\\x3f-\\x7e]+";
/**
 * List-Unsubscribe (RFC 2369) is the one list header a sender gives: `<mailto:…>` and/or
 * `<https://…>`. With an https URI Mailroom adds `List-Unsubscribe-Post: List-Unsubscribe=One-Click`
 * (RFC 8058), which is only valid when DKIM covers both fields, as Mailroom's signature does.
 */
const UNSUBSCRIBE_URI = `<(?:mailto:${BRACKETED}|https://${BRACKETED})>`;
const LIST_UNSUBSCRIBE = new RegExp(`^\\s*${UNSUBSCRIBE_URI}(?:\\s*,\\s*${UNSUBSCRIBE_URI})?\\s*$`, "i");
const CONTENT_ID = new RegExp(`^${BRACKETED}$`);
const CONTROL = /[\r\n\0]/;
/**
 * Message ids (RFC 5322 msg-id: In-Reply-To, References, a Content-ID) are printable ASCII. The
 * composer writes them as given, never as encoded words, so anything else would leave as raw bytes.
 */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const MESSAGE_ID_HEADERS = new Set(["in-reply-to", "references"]);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
export const MIME_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i;

export interface PreparedContent extends MessageContent {
  fromAddress: string;
  recipients: NewRecipient[];
  /** Every to, cc and bcc address as given, repeats too, with its pointer: a key's restrictions name each one refused. */
  addressed: AddressedRecipient[];
  scheduledAt: number | null;
  expiresAt: number | null;
}

export interface AddressedRecipient {
  pointer: string;
  email: string;
}

export interface MessageRules {
  /** The longest a message may be retried after it is due (DELIVERY_LIFETIME_SECONDS). */
  deliveryLifetimeMs: number;
}

/**
 * Checks everything the JSON schema cannot (address syntax, recipient count, header injection,
 * base64, schedule window) and normalises the message. Collects every problem before throwing,
 * so a client fixes its request in one round trip.
 */
export function prepareMessage(input: MessageInput, defaultFrom: string | null, now: number, rules: MessageRules): PreparedContent {
  const errors: FieldError[] = [];
  const fail = (pointer: string, message: string) => errors.push({ location: "body", pointer, message });

  const addressed: AddressedRecipient[] = [];
  const parseList = (field: "to" | "cc" | "bcc" | "reply_to"): Mailbox[] => {
    const value = input[field];
    if (value === undefined) return [];
    const list = Array.isArray(value) ? value : [value];
    const mailboxes: Mailbox[] = [];
    list.forEach((raw, i) => {
      const pointer = Array.isArray(value) ? `/${field}/${i}` : `/${field}`;
      const parsed = parseMailbox(raw);
      if (!parsed.ok) return fail(pointer, parsed.reason);
      mailboxes.push(parsed.mailbox);
      if (field !== "reply_to") addressed.push({ pointer, email: parsed.mailbox.address });
    });
    return mailboxes;
  };

  let from: Mailbox | null = null;
  if (input.from !== undefined) {
    const parsed = parseMailbox(input.from);
    if (parsed.ok) from = parsed.mailbox;
    else fail("/from", parsed.reason);
  } else if (defaultFrom !== null) {
    const parsed = parseMailbox(defaultFrom);
    if (parsed.ok) from = parsed.mailbox;
  } else {
    fail("/from", "is required: this workspace has no default sender (default_from)");
  }

  const to = parseList("to");
  const cc = parseList("cc");
  const bcc = parseList("bcc");
  const replyTo = parseList("reply_to");
  const recipients = uniqueRecipients([
    ...to.map((m) => ({ type: "to" as const, mailbox: m })),
    ...cc.map((m) => ({ type: "cc" as const, mailbox: m })),
    ...bcc.map((m) => ({ type: "bcc" as const, mailbox: m })),
  ]);
  if (to.length + cc.length + bcc.length > LIMITS.recipientsPerMessage) fail("/to", `at most ${LIMITS.recipientsPerMessage} addresses in to, cc and bcc together, counted as given`);

  if (input.subject === undefined) fail("/subject", "is required");
  else if (CONTROL.test(input.subject)) fail("/subject", "must not contain CR, LF or NUL");
  else if (unfoldable(input.subject)) fail("/subject", UNFOLDABLE);
  if (input.html === undefined && input.text === undefined) fail("/html", "html or text is required");

  const headers: Record<string, string> = {};
  const named = new Map<string, string>();
  for (const [name, value] of Object.entries(input.headers ?? {})) {
    const pointer = `/headers/${pointerSegment(name)}`;
    const earlier = named.get(name.toLowerCase());
    named.set(name.toLowerCase(), earlier ?? name);
    if (isReservedHeader(name)) fail(pointer, `${name} is set by Mailroom and cannot be given`);
    // Header names are case-insensitive (RFC 5322 §1.2.2): X-Foo and x-foo are one field given twice.
    else if (earlier !== undefined) fail(pointer, `repeats ${earlier} (header names are case-insensitive): give each field once`);
    else if (CONTROL.test(value)) fail(pointer, "must not contain CR, LF or NUL");
    // The composer leaves out a field without a value, so it would be stored as sent and never be.
    else if (value.trim() === "") fail(pointer, "must not be empty or only spaces: a header field without a value is not sent");
    else if (MESSAGE_ID_HEADERS.has(name.toLowerCase()) && !PRINTABLE_ASCII.test(value)) fail(pointer, "must be printable ASCII, as message ids are (RFC 5322 msg-id)");
    else if (unfoldable(value)) fail(pointer, UNFOLDABLE);
    else if (name.toLowerCase() === "list-unsubscribe" && !LIST_UNSUBSCRIBE.test(value)) fail(pointer, "must be <mailto:…> and/or <https://…> (RFC 2369)");
    else headers[name] = value;
  }
  if (input.unsubscribe === true && hasListUnsubscribe(headers)) fail("/unsubscribe", "cannot be combined with a List-Unsubscribe header of your own: leave one of them out");

  const checked = checkedAttachments(input.attachments);
  errors.push(...checked.errors);

  let scheduledAt: number | null = null;
  if (input.scheduled_at !== undefined) {
    const schedule = scheduledTime(input.scheduled_at, now);
    if ("problem" in schedule) fail("/scheduled_at", schedule.problem);
    else scheduledAt = schedule.at;
  }

  let expiresAt: number | null = null;
  if (input.expires_at !== undefined) {
    const at = parseInstant(input.expires_at);
    const due = scheduledAt ?? now;
    if (Number.isNaN(at)) fail("/expires_at", "must be an RFC 3339 date-time");
    else if (at <= due) fail("/expires_at", "must be after the message is due (scheduled_at, or now)");
    else if (at > due + rules.deliveryLifetimeMs) fail("/expires_at", `must be at most ${Math.round(rules.deliveryLifetimeMs / 3_600_000)} hours after the message is due`);
    else expiresAt = at;
  }

  const stored = {
    from: from === null ? null : formatMailbox(from),
    to: to.map(formatMailbox),
    cc: cc.map(formatMailbox),
    bcc: bcc.map(formatMailbox),
    reply_to: replyTo.map(formatMailbox),
    headers,
    metadata: input.metadata ?? {},
  };
  errors.push(...storedSizeProblems(stored));
  const content = { subject: input.subject ?? "", html: input.html ?? null, text: input.text ?? null, headers, attachments: checked.attachments };
  if (errors.length === 0) errors.push(...storedMessageProblems(content));

  if (errors.length > 0 || from === null || stored.from === null) throw new ValidationError(errors);
  return {
    ...stored,
    ...content,
    from: stored.from,
    fromAddress: from.address,
    recipients,
    addressed,
    tags: input.tags ?? [],
    scheduledAt,
    expiresAt,
  };
}

/** The parts of a message that LIMITS.storedMessageMaxBytes bounds. */
type StoredContent = Pick<MessageContent, "subject" | "html" | "text" | "headers" | "attachments">;

/**
 * A message's content as the statement that stores it carries it (statementBytes: UTF-8, each
 * character MySQL's client escapes taking two bytes). Counted on SQLite too, so that what one
 * database accepts the other does.
 */
export function storedMessageBytes(content: StoredContent): number {
  const attachmentContent = content.attachments.reduce((sum, a) => sum + a.content.length, 0); // base64: ASCII, nothing escaped
  const attachmentRest = JSON.stringify(content.attachments.map((a) => ({ ...a, content: "" })));
  return [content.subject, content.html ?? "", content.text ?? "", JSON.stringify(content.headers), attachmentRest].reduce((sum, part) => sum + statementBytes(part), attachmentContent);
}

/**
 * A message larger than LIMITS.storedMessageMaxBytes, pointed at its largest part (the one to
 * shrink): the limit keeps the statement that stores it within MySQL's max_allowed_packet. Run
 * once a message's files are in hand, those given by URL too.
 */
export function storedMessageProblems(content: StoredContent): FieldError[] {
  const bytes = storedMessageBytes(content);
  if (bytes <= LIMITS.storedMessageMaxBytes) return [];
  const parts = [
    ["/subject", content.subject.length],
    ["/html", content.html?.length ?? 0],
    ["/text", content.text?.length ?? 0],
    ["/headers", Object.values(content.headers).reduce((sum, v) => sum + v.length, 0)],
    ["/attachments", content.attachments.reduce((sum, a) => sum + a.content.length, 0)],
  ] as const;
  const largest = parts.reduce((a, b) => (b[1] > a[1] ? b : a))[0];
  return [
    {
      location: "body",
      pointer: largest,
      message: `the message as stored (subject, html, text, headers and attachments as base64 together, quotes, backslashes and line breaks counting twice) must be at most ${number(LIMITS.storedMessageMaxBytes)} bytes (this is ${number(bytes)})`,
    },
  ];
}

const JSON_COLUMNS = ["to", "cc", "bcc", "reply_to", "headers", "metadata"] as const;

/**
 * Why a sender, formatted as its header carries it, is too long for its VARCHAR(512) column (a
 * message's `from_mailbox`, a workspace's `default_from`), or null when it fits.
 */
export function mailboxTooLong(formatted: string): string | null {
  const chars = [...formatted].length; // VARCHAR counts characters (code points), not UTF-16 units
  if (chars <= LIMITS.storedMailboxMaxChars) return null;
  return `must be at most ${number(LIMITS.storedMailboxMaxChars)} characters as its header carries it, display name quoted and escaped (this is ${number(chars)})`;
}

/**
 * Values within the contract's limits that would still not fit their column as stored
 * (LIMITS.storedJsonMaxBytes): a 500-character metadata value of emoji is 2,000 bytes, a `"`
 * in a header two bytes of JSON, a backslash in a display name two characters once quoted.
 * Refused here as the client's problem, rather than failing the insert with a 500 on MySQL.
 */
function storedSizeProblems(stored: { from: string | null } & Record<(typeof JSON_COLUMNS)[number], unknown>): FieldError[] {
  const problems: FieldError[] = [];
  const fromTooLong = stored.from === null ? null : mailboxTooLong(stored.from);
  if (fromTooLong !== null) problems.push({ location: "body", pointer: "/from", message: fromTooLong });
  for (const field of JSON_COLUMNS) {
    const bytes = Buffer.byteLength(JSON.stringify(stored[field]), "utf8");
    if (bytes > LIMITS.storedJsonMaxBytes) {
      problems.push({ location: "body", pointer: `/${field}`, message: `must serialise to at most ${number(LIMITS.storedJsonMaxBytes)} bytes of UTF-8 JSON as stored (this is ${number(bytes)})` });
    }
  }
  return problems;
}

const number = (n: number): string => n.toLocaleString("en-US");

/** The attachments as stored, and every problem with their names, types and content. */
export function checkedAttachments(given: readonly InlineAttachment[] | undefined): { attachments: StoredAttachment[]; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const fail = (pointer: string, message: string) => errors.push({ location: "body", pointer, message });
  const attachments: StoredAttachment[] = [];
  // An html's cid: reference finds its part by Content-ID; with two parts of one id, which one it
  // shows is up to the mail client. Clients differ on case, so ids differing only in case clash.
  const contentIds = new Map<string, string>();
  (given ?? []).forEach((a, i) => {
    const pointer = `/attachments/${i}`;
    if (CONTROL.test(a.filename) || /[/\\]/.test(a.filename)) fail(`${pointer}/filename`, "must be a plain file name (no path separators, CR, LF or NUL)");
    if (a.content_type !== undefined && !MIME_TYPE.test(a.content_type)) fail(`${pointer}/content_type`, "must be a MIME type such as text/plain");
    if (a.content_id !== undefined && !CONTENT_ID.test(a.content_id)) fail(`${pointer}/content_id`, "must be printable ASCII without spaces or angle brackets, as a Content-ID is (RFC 2392)");
    else if (a.content_id !== undefined) {
      const first = contentIds.get(a.content_id.toLowerCase());
      if (first !== undefined) fail(`${pointer}/content_id`, `repeats the content_id of ${first} (content ids are compared without case): give each inline part its own`);
      else contentIds.set(a.content_id.toLowerCase(), pointer);
    }
    const content = a.content.replace(/\s+/g, "");
    if (content.length % 4 !== 0 || !BASE64.test(content)) fail(`${pointer}/content`, "must be base64");
    // Only whitespace passed the contract's minLength but is no file, as an empty one fetched by
    // URL is none. (A file by URL stands in here as "" until it is fetched.)
    else if (content === "" && a.content !== "") fail(`${pointer}/content`, "must hold a file of at least one byte: it is only whitespace");
    const contentType = sendableContentType(a.content_type ?? detectMimeType(a.filename), content);
    attachments.push({ filename: a.filename, content_type: contentType, content_id: a.content_id ?? null, content, size: Buffer.byteLength(content, "base64") });
  });
  return { attachments, errors };
}

/**
 * The type an attachment is sent as. nodemailer writes a message/* part as it is, without a
 * transfer encoding (RFC 2046 §5.2: a message is 7bit, 8bit or binary, never base64), and a
 * multipart/* part needs a boundary and parts a file does not have. So a multipart/* file, and a
 * message/* file that is not 7-bit clean (NUL, a byte past ASCII, a bare CR or LF, a line over
 * 998 characters: what an .eml saved with Unix line ends has), go as application/octet-stream,
 * base64, keeping their file name; a clean message/* keeps its type. `base64Content`: the
 * attachment's content, checked as base64 (or not yet fetched: empty). Applies to a caller's
 * content_type, the file name's guess and a fetched file's Content-Type alike.
 */
export function sendableContentType(contentType: string, base64Content: string): string {
  const type = contentType.toLowerCase();
  if (type.startsWith("multipart/")) return "application/octet-stream";
  if (!type.startsWith("message/") || base64Content === "") return contentType;
  return sevenBitClean(Buffer.from(base64Content, "base64")) ? contentType : "application/octet-stream";
}

/** RFC 5322 text: ASCII without NUL, CR and LF only as CRLF, lines of at most 998 characters. */
function sevenBitClean(bytes: Buffer): boolean {
  let line = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b === 0x0d) {
      if (bytes[i + 1] !== 0x0a) return false;
      i++;
      line = 0;
    } else if (b === 0x0a || b === 0x00 || b > 0x7f || ++line > 998) return false;
  }
  return true;
}

/** A domain's tracking defaults: null follows the workspace's. */
export interface DomainTrackingDefaults {
  opens: boolean | null;
  clicks: boolean | null;
}

/**
 * What a message tracks, decided once at acceptance (docs/tracking.md#defaults): its own
 * option, else (opens and clicks) the sending domain's default, else the workspace's. A
 * message with a List-Unsubscribe header of its own keeps it: the workspace's unsubscribe
 * default does not add a second one.
 */
export function resolveTracking(
  input: Pick<CreateMessageRequest, "track_opens" | "track_clicks" | "track_replies" | "unsubscribe" | "headers">,
  domain: DomainTrackingDefaults | null,
  workspace: MessageTracking,
): MessageTracking {
  return {
    opens: input.track_opens ?? domain?.opens ?? workspace.opens,
    clicks: input.track_clicks ?? domain?.clicks ?? workspace.clicks,
    replies: input.track_replies ?? workspace.replies,
    unsubscribe: input.unsubscribe ?? (hasListUnsubscribe(input.headers ?? {}) ? false : workspace.unsubscribe),
  };
}

const hasListUnsubscribe = (headers: Record<string, string>): boolean => Object.keys(headers).some((name) => name.toLowerCase() === "list-unsubscribe");

/** The Message-ID is fixed at acceptance so every delivery attempt carries the same one. */
export const messageIdHeader = (messageId: string, fromAddress: string): string => `<${messageId}@${domainOf(fromAddress)}>`;

/** One delivery per address: the first of to, cc, bcc that names it wins. */
function uniqueRecipients(list: Array<{ type: "to" | "cc" | "bcc"; mailbox: Mailbox }>): NewRecipient[] {
  const seen = new Set<string>();
  const out: NewRecipient[] = [];
  for (const { type, mailbox } of list) {
    const key = mailbox.address.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ type, email: mailbox.address, name: mailbox.name });
  }
  return out;
}


/**
 * When a message asked to go at `value` is due: `at` null for now (a time up to now, within a
 * minute's clock skew), or a problem with the time. Creation and rescheduling share the rule.
 */
export function scheduledTime(value: string, now: number): { at: number | null } | { problem: string } {
  const at = parseInstant(value);
  if (Number.isNaN(at)) return { problem: "must be an RFC 3339 date-time" };
  if (at < now - LIMITS.scheduleSkewMs) return { problem: "must not be in the past" };
  if (at > now + LIMITS.scheduleHorizonMs) return { problem: "must be at most 30 days ahead" };
  return { at: at > now ? at : null };
}
