import type { Attachment, ParsedMail, SimpleParserOptions } from "mailparser";
import { mediaTypeOf } from "../smtp/mime-part.js";

/**
 * Machine-readable reports about mail Mailroom sent: RFC 3464 delivery status notifications
 * (bounces) and RFC 5965 feedback reports (complaints). Both are `multipart/report` (RFC 6522)
 * with a machine part whose syntax is header fields: one block for the message, then (DSN) one
 * block per recipient. The third part, when present, is the original message or its headers,
 * which is how a report is matched to the message when its envelope recipient does not say.
 *
 * Parsed here rather than with a library: mailparser hands over the parts (with
 * `keepDeliveryStatus`), and what is left is reading "Name: value" fields, which no maintained
 * package does for these two formats.
 */
export interface OriginalHeaders {
  messageId: string | null;
  returnPath: string | null;
  to: string[];
}

export interface DsnRecipient {
  finalRecipient: string | null;
  originalRecipient: string | null;
  /** failed | delayed | delivered | relayed | expanded (RFC 3464 §2.3.3), lower-case. */
  action: string;
  /** The enhanced status (RFC 3463) as reported, e.g. "5.1.1"; null when absent or malformed. */
  status: string | null;
  /** The remote server's words with their type, e.g. "smtp; 550 5.1.1 User unknown". */
  diagnosticCode: string | null;
  remoteMta: string | null;
}

export interface DeliveryStatusReport {
  kind: "dsn";
  reportingMta: string | null;
  /** X-Postfix-Sender and the like: the envelope sender of the original, when the MTA says. */
  originalSender: string | null;
  recipients: DsnRecipient[];
  original: OriginalHeaders | null;
}

export interface FeedbackReport {
  kind: "arf";
  /** abuse | fraud | virus | other | not-spam | auth-failure ..., lower-case. */
  feedbackType: string;
  userAgent: string | null;
  reportingMta: string | null;
  originalMailFrom: string | null;
  originalRcptTo: string[];
  sourceIp: string | null;
  original: OriginalHeaders | null;
}

export type Report = DeliveryStatusReport | FeedbackReport;

const DSN_TYPES = new Set(["message/delivery-status", "message/global-delivery-status"]);
const FEEDBACK_TYPE = "message/feedback-report";
const ORIGINAL_TYPES = new Set(["message/rfc822", "message/global", "text/rfc822-headers", "message/rfc822-headers", "message/global-headers"]);

/**
 * How a mail must be parsed for parseReport to see its parts: the machine part kept as an
 * attachment (`keepDeliveryStatus`), and so the returned original, whatever its disposition.
 * mailsplit opens a message/rfc822 part marked `inline` (RFC 5965 Appendix B.1's own example,
 * and what many feedback loops send) as an embedded message and mailparser then lists it as no
 * attachment, so the original's Return-Path and Message-ID would be lost; `ignoreEmbedded`
 * (a mailsplit option that @types/mailparser does not list) keeps every message/rfc822 part whole.
 */
export const REPORT_PARSER_OPTIONS = { keepDeliveryStatus: true, ignoreEmbedded: true } satisfies SimpleParserOptions & { ignoreEmbedded: boolean };

/** The report a parsed mail carries (parsed with REPORT_PARSER_OPTIONS), or null when it is none. */
export function parseReport(mail: ParsedMail): Report | null {
  const contentType = mail.headers.get("content-type") as { value?: string; params?: Record<string, string> } | undefined;
  if (contentType?.value?.toLowerCase() !== "multipart/report") return null;
  const reportType = contentType.params?.["report-type"]?.toLowerCase();
  const original = originalHeaders(mail.attachments.find((a) => ORIGINAL_TYPES.has(mediaTypeOf(a))));
  if (reportType === "delivery-status" || reportType === "global-delivery-status") {
    const part = mail.attachments.find((a) => DSN_TYPES.has(mediaTypeOf(a)));
    return part ? deliveryStatus(part.content.toString("utf8"), original) : null;
  }
  if (reportType === "feedback-report") {
    const part = mail.attachments.find((a) => mediaTypeOf(a) === FEEDBACK_TYPE);
    return part ? feedback(part.content.toString("utf8"), original) : null;
  }
  return null;
}

function deliveryStatus(body: string, original: OriginalHeaders | null): DeliveryStatusReport {
  const [perMessage = new Map<string, string[]>(), ...perRecipient] = fieldBlocks(body);
  return {
    kind: "dsn",
    reportingMta: typed(first(perMessage, "reporting-mta")),
    originalSender: typed(first(perMessage, "x-postfix-sender") ?? first(perMessage, "x-original-sender")),
    recipients: perRecipient
      .filter((block) => block.has("action"))
      .map((block) => ({
        finalRecipient: address(typed(first(block, "final-recipient"))),
        originalRecipient: address(typed(first(block, "original-recipient"))),
        action: (first(block, "action") ?? "").trim().toLowerCase(),
        status: /^([245])\.(\d{1,3})\.(\d{1,3})/.exec((first(block, "status") ?? "").trim())?.slice(1).join(".") ?? null,
        diagnosticCode: first(block, "diagnostic-code")?.trim() ?? null,
        remoteMta: typed(first(block, "remote-mta")),
      })),
    original,
  };
}

function feedback(body: string, original: OriginalHeaders | null): FeedbackReport {
  // RFC 5965 §3.1: one block of fields (some providers add blank lines; merge every block).
  const fields = new Map<string, string[]>();
  for (const block of fieldBlocks(body)) for (const [name, values] of block) fields.set(name, [...(fields.get(name) ?? []), ...values]);
  return {
    kind: "arf",
    feedbackType: (first(fields, "feedback-type") ?? "other").trim().toLowerCase(),
    userAgent: first(fields, "user-agent")?.trim() ?? null,
    reportingMta: typed(first(fields, "reporting-mta")),
    originalMailFrom: address(first(fields, "original-mail-from") ?? null),
    originalRcptTo: (fields.get("original-rcpt-to") ?? []).map((value) => address(value)).filter((value): value is string => value !== null),
    sourceIp: first(fields, "source-ip")?.trim() ?? null,
    original,
  };
}

/** The headers of the returned original (a whole message or its headers only). */
function originalHeaders(part: Attachment | undefined): OriginalHeaders | null {
  if (!part) return null;
  const text = part.content.toString("utf8");
  const end = text.search(/\r?\n\r?\n/);
  const [fields] = fieldBlocks(end === -1 ? text : text.slice(0, end));
  if (!fields) return null;
  return {
    messageId: first(fields, "message-id")?.trim() ?? null,
    returnPath: address(first(fields, "return-path") ?? null),
    to: (fields.get("to") ?? []).flatMap((value) => value.split(",")).map((value) => address(value)).filter((value): value is string => value !== null),
  };
}

/**
 * Header-syntax fields (RFC 5322 §2.2), unfolded, grouped in blocks separated by blank lines;
 * names lower-case, every value of a repeated name kept in order.
 */
export function fieldBlocks(text: string): Array<Map<string, string[]>> {
  const blocks: Array<Map<string, string[]>> = [];
  let block: Map<string, string[]> | null = null;
  let last: { name: string; index: number } | null = null;
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === "") {
      block = null;
      last = null;
      continue;
    }
    if (/^[ \t]/.test(line) && block && last) {
      const values = block.get(last.name)!;
      values[last.index] = `${values[last.index]} ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    if (!block) blocks.push((block = new Map()));
    const name = line.slice(0, colon).trim().toLowerCase();
    const values = block.get(name) ?? [];
    values.push(line.slice(colon + 1).trim());
    block.set(name, values);
    last = { name, index: values.length - 1 };
  }
  return blocks;
}

const first = (fields: Map<string, string[]>, name: string): string | null => fields.get(name)?.[0] ?? null;

/** "rfc822; ada@example.com" -> "ada@example.com", "dns; mx.example" -> "mx.example" (RFC 3464 §2.1.2). */
function typed(value: string | null): string | null {
  if (value === null) return null;
  const semicolon = value.indexOf(";");
  const rest = (semicolon === -1 ? value : value.slice(semicolon + 1)).trim();
  return rest === "" ? null : rest;
}

/**
 * The bare address of "Ada <ada@example.com>", "<ada@example.com>" or "ada@example.com (Ada)",
 * lower-cased domain. Read with indexOf and trim, not patterns: the value is the sender's, as long
 * as the message (a base64 part decodes to lines of any length), and a backtracking pattern over it
 * (/<([^>]*)>/ over a run of "<", /\s+$/ over a run of spaces inside it) takes time quadratic in
 * its length: 50 s for a report with runs of 50,000, hours for one of a megabyte, on the thread
 * that serves every connection, for anyone who can send to postmaster.
 */
function address(value: string | null): string | null {
  if (value === null) return null;
  const open = value.indexOf("<");
  const close = open === -1 ? -1 : value.indexOf(">", open + 1);
  const inner = close !== -1 ? value.slice(open + 1, close) : (typed(value.includes(";") ? value : `;${value}`) ?? "");
  let bare = inner.trim();
  // A trailing comment, from its "(" (RFC 5322 §3.2.2).
  const comment = bare.endsWith(")") ? bare.indexOf("(") : -1;
  if (comment !== -1) bare = bare.slice(0, comment).trimEnd();
  const at = bare.lastIndexOf("@");
  if (at <= 0) return null;
  return `${bare.slice(0, at)}@${bare.slice(at + 1).toLowerCase()}`;
}
