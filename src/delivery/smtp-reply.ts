import { cut } from "../domain/cut.js";

/**
 * What a remote SMTP answer means for one recipient (DESIGN.md §9): delivered, deferred (retry
 * later) or bounced, and for a bounce whether it is hard (the address is bad: suppress it) or
 * soft (this message could not go, the address may well work tomorrow: do not suppress).
 *
 * The basic reply code decides the outcome (RFC 5321 §4.2.1: 2yz done, 4yz transient, 5yz
 * permanent); the enhanced status code (RFC 3463, IANA "SMTP Enhanced Status Codes") decides
 * hard against soft, because the basic 5yz codes are too coarse: "550" is both "no such user"
 * and "refused as spam".
 */

export type DeliveryOutcome = "delivered" | "deferred" | "bounced";
export type BounceType = "hard" | "soft";

/**
 * Which step of the session the reply answers. It changes the meaning of a 5yz: a server that
 * refuses the connection or the sender says nothing about the recipient.
 * - connect: the greeting, EHLO or STARTTLS (the session never started)
 * - auth: AUTH at a relay (our credentials)
 * - mail: MAIL FROM (our return path)
 * - rcpt: RCPT TO (the recipient)
 * - data: the DATA command or the reply after the message was sent
 */
export type SmtpStage = "connect" | "auth" | "mail" | "rcpt" | "data";

export interface SmtpReplyInput {
  code: number;
  /** "5.1.1"; null or absent: parsed from `message`, else derived from the code (x.0.0). */
  enhancedStatus?: string | null;
  /** The reply text (with or without the leading code). */
  message: string;
  /** Default "rcpt", the step that is about the recipient. */
  stage?: SmtpStage;
}

export interface ReplyClassification {
  outcome: DeliveryOutcome;
  bounceType: BounceType | null;
  /** Always present, and always of the outcome's class: 2.x.x delivered, 4.x.x deferred, 5.x.x bounced. */
  enhancedStatus: string;
}

// RFC 3463 §2: class "." subject "." detail, subject and detail 1 to 3 digits.
const AT_START = /^([245])\.(\d{1,3})\.(\d{1,3})(?![\d.])/;
// Some servers put the code later in the text, set apart: "... mailbox unavailable (5.1.1)",
// "[5.7.1]", "#5.1.1". Bare digits later in the text are not taken: they may be an IP address
// (5.10.20.30) or a version ("server 2.4.16").
const ANYWHERE = /[([#]([245])\.(\d{1,3})\.(\d{1,3})(?=[)\]\s]|$)/;
const REPLY_CODE = /^\d{3}(?:[ -]|$)/;

/**
 * How much of an answer is kept: in the recipient's detail, its event and a suppression's detail.
 * RFC 5321 §4.5.3.1.5 limits a reply line to 512 octets, but not the lines of a multi-line reply,
 * and nodemailer reads up to 1 MiB. Kept whole, such an answer would not fit MySQL's TEXT columns:
 * the failed write would roll back the group commit it rode in, and the outcome, lost, would send
 * the message again once its lease ran out.
 */
export const MAX_KEPT_RESPONSE_CHARS = 1000;

/** An answer as it is kept: whole, or its start and how much was cut. */
export function keptResponse(response: string): string {
  if (response.length <= MAX_KEPT_RESPONSE_CHARS) return response;
  const start = cut(response, MAX_KEPT_RESPONSE_CHARS);
  return `${start}… (${response.length - start.length} more characters not kept)`;
}

/**
 * The enhanced status code of a reply text ("550 5.1.1 No such user", "5.1.1 No such user",
 * multi-line "550-5.1.1 ...\n550 5.1.1 ..."), or null when it has none. In a multi-line reply
 * the first line that starts with one gives it: some servers open with a banner or a link and
 * put the code on a later line only, and without it a "550 5.7.1" blocklist refusal would be
 * taken by its basic code for a bad address, and the address suppressed.
 */
export function parseEnhancedStatus(text: string): string | null {
  const lines = text.trimStart().split(/\r?\n/);
  let match: RegExpExecArray | null = null;
  for (const line of lines) {
    match = AT_START.exec(line.replace(REPLY_CODE, ""));
    if (match) break;
  }
  match ??= ANYWHERE.exec(text);
  return match ? `${match[1]}.${Number(match[2])}.${Number(match[3])}` : null;
}

/** The basic code and the text of a raw reply ("250 2.0.0 Ok: queued as ABC", multi-line too). */
export function parseReply(raw: string): { code: number | null; enhancedStatus: string | null; message: string } {
  const text = raw.trim();
  const match = /^(\d{3})/.exec(text);
  return { code: match ? Number(match[1]) : null, enhancedStatus: parseEnhancedStatus(text), message: text };
}

/**
 * Hard bounces: the address itself is bad, so it goes on the suppression list. Everything else
 * that is permanent is soft (the message, the sender, a policy, a full mailbox).
 *
 *   enhanced status          bounce  why
 *   5.1.0 5.1.1 5.1.2 5.1.3  hard    no such mailbox / no such domain / bad address syntax
 *   5.1.4 5.1.6              hard    ambiguous address / mailbox moved, no forwarding address
 *   5.1.10                   hard    the domain publishes a null MX (RFC 7505): it takes no mail
 *   5.2.1                    hard    mailbox disabled, not accepting messages
 *   5.1.7 5.1.8              soft    *our* sender address or its domain was refused
 *   5.1.5 5.1.9, other 5.1.x soft    not about the recipient's address
 *   5.2.0 5.2.2 5.2.3 5.2.4  soft    mailbox status unknown / full / message too big / list expansion
 *   5.3.x                    soft    the receiving system (full, not accepting, too big, misconfigured)
 *   5.4.x                    soft    routing and network (incl. 5.4.4 no mail route published)
 *   5.5.x                    soft    protocol: our side's problem
 *   5.6.x                    soft    content or media
 *   5.7.x                    soft    policy, spam, authentication (SPF/DKIM/DMARC), blocklists
 *   5.0.0 or none            by basic code: 550 551 553 521 556 hard; 552 554 and the rest soft
 *
 * The basic-code fallback is for the recipient step only. A 5yz without a specific enhanced
 * code after DATA is most often a content or spam refusal, and at MAIL FROM it is about the
 * sender: both are soft.
 */
const HARD_STATUSES = new Set(["5.1.0", "5.1.1", "5.1.2", "5.1.3", "5.1.4", "5.1.6", "5.1.10", "5.2.1"]);
// RFC 5321 §4.2.2 and RFC 7504: 550 mailbox unavailable, 551 user not local, 553 mailbox name not
// allowed, 521 host / 556 domain does not accept mail.
const HARD_BASIC_CODES = new Set([550, 551, 553, 521, 556]);

/** Hard or soft for a permanent failure, per the table above. */
export function bounceTypeFor(enhancedStatus: string, basicCode: number | null = null, stage: SmtpStage = "rcpt"): BounceType {
  if (stage === "mail") return "soft";
  if (!enhancedStatus.endsWith(".0.0")) return HARD_STATUSES.has(`5${enhancedStatus.slice(1)}`) ? "hard" : "soft";
  return stage === "rcpt" && basicCode !== null && HARD_BASIC_CODES.has(basicCode) ? "hard" : "soft";
}

export function classifyReply(reply: SmtpReplyInput): ReplyClassification {
  const { code, stage = "rcpt" } = reply;
  const parsed = reply.enhancedStatus ?? parseEnhancedStatus(reply.message);
  const replyClass = Math.floor(code / 100);

  if (replyClass === 2) return { outcome: "delivered", bounceType: null, enhancedStatus: ofClass(2, parsed) };
  // A refused connection or greeting, and refused or missing relay credentials (535 at AUTH,
  // RFC 4954's 530 "authentication required" at any command), say nothing about the recipient:
  // the next MX host, a fixed configuration or a later retry may do (Postfix's
  // smtp_skip_5xx_greeting does the same for greetings).
  if (replyClass === 4 || stage === "connect" || stage === "auth" || code === 530 || replyClass !== 5) {
    return { outcome: "deferred", bounceType: null, enhancedStatus: ofClass(4, parsed) };
  }
  const enhancedStatus = ofClass(5, parsed);
  return { outcome: "bounced", bounceType: bounceTypeFor(enhancedStatus, code, stage), enhancedStatus };
}

/**
 * The enhanced status in the class the basic code decided. RFC 3463 §2 requires the two to
 * agree; when a server says "550 4.7.1" the basic code wins (it is what every client acts on)
 * and the subject and detail are kept, since they still tell what went wrong.
 */
function ofClass(replyClass: 2 | 4 | 5, enhancedStatus: string | null): string {
  if (enhancedStatus === null) return `${replyClass}.0.0`;
  return `${replyClass}${enhancedStatus.slice(enhancedStatus.indexOf("."))}`;
}
