import { domainToASCII } from "node:url";

/**
 * Email addresses as clients write them: `ada@example.com` or `Ada Lovelace <ada@example.com>`.
 * Parsing is strict enough that what we accept an MTA will accept too (RFC 5321 lengths,
 * dot-atom local parts, LDH domain labels), and normalises domains to lower-case ASCII (IDNA).
 */
export interface Mailbox {
  address: string;
  name: string | null;
}

const LOCAL_ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const FORBIDDEN_CONTROL = /[\r\n\0]/;
const NON_ASCII = /[\u0080-\u{10ffff}]/u;

/**
 * A C0 control other than tab (CR, LF and NUL are refused before): nodemailer's address parser
 * drops them from the header, so the name sent would not be the name stored.
 */
const hasNameControl = (name: string): boolean => [...name].some((char) => char < " " && char !== "\t");
const ANGLE_FORM = /^(.*?)\s*<([^<>]*)>$/s;

export type ParseResult = { ok: true; mailbox: Mailbox } | { ok: false; reason: string };

export function parseMailbox(input: string): ParseResult {
  if (FORBIDDEN_CONTROL.test(input)) return { ok: false, reason: "must not contain CR, LF or NUL" };
  const trimmed = input.trim();
  const angle = ANGLE_FORM.exec(trimmed);
  const rawName = angle ? unquote(angle[1]!.trim()) : null;
  const rawAddress = angle ? angle[2]!.trim() : trimmed;
  const address = normaliseAddress(rawAddress);
  if (!address) return { ok: false, reason: `${JSON.stringify(input)} is not a valid email address${whyNotAddress(rawAddress)}` };
  if (rawName !== null && rawName.length > 200) return { ok: false, reason: "the display name is longer than 200 characters" };
  if (rawName !== null && hasNameControl(rawName)) return { ok: false, reason: "the display name must not contain control characters (U+0001 to U+001F, other than tab)" };
  return { ok: true, mailbox: { address, name: rawName ? rawName : null } };
}

/** What a reader could not guess of why `raw` is not an address, as a clause to add; else "". */
function whyNotAddress(raw: string): string {
  const at = raw.lastIndexOf("@");
  const local = at > 0 ? raw.slice(0, at) : "";
  return NON_ASCII.test(local) ? ": the part before @ must be ASCII (mail to UTF-8 mailboxes, SMTPUTF8, is not sent)" : "";
}

/** `local@domain` with the domain lower-cased and IDNA-encoded, or null if it is not valid. */
export function normaliseAddress(raw: string): string | null {
  const at = raw.lastIndexOf("@");
  if (at <= 0 || at === raw.length - 1) return null;
  const local = raw.slice(0, at);
  if (local.length > 64 || !LOCAL_ATOM.test(local)) return null;
  const domain = normaliseDomain(raw.slice(at + 1));
  if (domain === null) return null;
  const address = `${local}@${domain}`;
  return address.length <= 254 ? address : null;
}

/**
 * The form in which two addresses are the same mailbox: the whole address lower-cased (local
 * parts are matched case-insensitively, as virtually every mailbox provider treats them) and the
 * domain in its ASCII form, so `Ada@Bücher.example` and `ada@xn--bcher-kva.example` are one.
 * A string that is not an address is only trimmed and lower-cased: as a search it matches nothing.
 */
export function addressKey(raw: string): string {
  const trimmed = raw.trim();
  return (normaliseAddress(trimmed) ?? trimmed).toLowerCase();
}

/**
 * A mail domain as stored: lower-case ASCII, IDNs in their A-label form; at least two LDH labels
 * and a non-numeric top label (a bare IP is not a mail domain here). Null when it is not one.
 * `trailingDot`: one final dot is dropped (a DNS name may be written fully qualified; an
 * address's domain may not be), and IDNA's other full stops ("。", "．") count as dots.
 */
export function normaliseDomain(input: string, { trailingDot = false } = {}): string | null {
  const lower = input.toLowerCase();
  // domainToASCII reads its input as a URL's host: it drops what follows "/", "?", "#" or "\"
  // and decodes %xx, which would turn junk into another, valid-looking name ("ada@acme.example/x"
  // into ada@acme.example). Only letters, digits, "-" and "." may be ASCII here; the rest is
  // IDNA's to map or refuse.
  for (const char of lower) if (char < "\x80" && !/[a-z0-9.-]/.test(char)) return null;
  const ascii = domainToASCII(lower);
  const name = trailingDot ? ascii.replace(/\.$/, "") : ascii;
  if (!name || name.length > 253) return null;
  const labels = name.split(".");
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return null;
  if (/^[0-9]+$/.test(labels[labels.length - 1]!)) return null;
  return name;
}

/** The mailbox as a header would carry it. */
export function formatMailbox({ address, name }: Mailbox): string {
  if (!name) return address;
  const needsQuotes = /[()<>[\]:;@\\,."]/.test(name);
  return needsQuotes ? `"${name.replace(/(["\\])/g, "\\$1")}" <${address}>` : `${name} <${address}>`;
}

export const domainOf = (address: string): string => address.slice(address.lastIndexOf("@") + 1);

/** The bare address of a stored (already validated) mailbox: `Ada <ada@x.example>` -> `ada@x.example`. */
export function addressOf(mailbox: string): string {
  const parsed = parseMailbox(mailbox);
  if (!parsed.ok) throw new Error(`a stored mailbox does not parse: ${parsed.reason}`);
  return parsed.mailbox.address;
}

function unquote(name: string): string {
  if (name.length >= 2 && name.startsWith('"') && name.endsWith('"')) return name.slice(1, -1).replace(/\\(.)/g, "$1");
  return name;
}
