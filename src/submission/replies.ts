import type { DomainError, ErrorKind, FieldError } from "../domain/errors.js";

/** An SMTP reply: the basic code, and the text, which starts with the enhanced status (RFC 3463). */
export interface SmtpReply {
  code: number;
  text: string;
}

/**
 * How each kind of refusal reads over SMTP. A client retries a 4xx later (a relaying MTA queues
 * the message) and gives up at a 5xx, so what may pass in time (a rate limit, the monthly quota,
 * a database that is down) is 4xx, and what the message itself gets wrong is 5xx.
 */
const BY_KIND: Record<ErrorKind, SmtpReply> = {
  unauthenticated: { code: 535, text: "5.7.8" },
  forbidden: { code: 550, text: "5.7.1" },
  bad_request: { code: 554, text: "5.6.0" },
  unprocessable: { code: 554, text: "5.6.0" },
  unsupported_media: { code: 554, text: "5.6.1" },
  not_found: { code: 554, text: "5.6.0" },
  gone: { code: 554, text: "5.6.0" },
  conflict: { code: 451, text: "4.3.0" },
  rate_limited: { code: 451, text: "4.7.1" },
  unavailable: { code: 451, text: "4.3.0" },
};

/** Codes whose refusal is a sending policy rather than the message's content. */
const POLICY_CODES = new Set(["sender_domain_not_verified"]);

/** RFC 5321 §4.5.3.1.5: a reply line is at most 512 octets, code and CRLF included. */
const TEXT_MAX = 480;

/**
 * The reply to a refused submission: its enhanced status, then the problem's stable `code` (the
 * one docs/errors.md lists, as an API client gets it) and what to fix, each field's problem by
 * the request field it became (`/to`, `/headers/X-Mailroom-Tags`).
 */
export function replyFor(error: DomainError): SmtpReply {
  const { code, text } = POLICY_CODES.has(error.code) ? { code: 550, text: "5.7.1" } : BY_KIND[error.kind];
  const fields = error.extra.errors ?? [];
  const detail = fields.length > 0 ? fields.map(describe).join("; ") : error.message;
  return { code, text: `${text} ${oneLine(`${error.code}: ${detail}`)}` };
}

function describe({ pointer, message }: FieldError): string {
  return pointer ? `${pointer}: ${message}` : message;
}

/** One line of printable ASCII (replies are ASCII without SMTPUTF8, RFC 6531), cut to fit a reply line. */
function oneLine(text: string): string {
  const flat = text.replace(/\p{Cc}+/gu, " ").replace(/[^\u0020-\u007e]/gu, "?");
  return flat.length <= TEXT_MAX ? flat : `${flat.slice(0, TEXT_MAX - 3)}...`;
}
