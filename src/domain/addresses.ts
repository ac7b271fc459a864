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
const ANGLE_FORM = /^(.*?)\s*<([^<>]*)>$/s;

export type ParseResult = { ok: true; mailbox: Mailbox } | { ok: false; reason: string };

export function parseMailbox(input: string): ParseResult {
  if (FORBIDDEN_CONTROL.test(input)) return { ok: false, reason: "must not contain CR, LF or NUL" };
  const trimmed = input.trim();
  const angle = ANGLE_FORM.exec(trimmed);
  const rawName = angle ? unquote(angle[1]!.trim()) : null;
  const rawAddress = angle ? angle[2]!.trim() : trimmed;
  const address = normaliseAddress(rawAddress);
  if (!address) return { ok: false, reason: `${JSON.stringify(input)} is not a valid email address` };
  if (rawName !== null && rawName.length > 200) return { ok: false, reason: "the display name is longer than 200 characters" };
  return { ok: true, mailbox: { address, name: rawName ? rawName : null } };
}

/** `local@domain` with the domain lower-cased and IDNA-encoded, or null if it is not valid. */
export function normaliseAddress(raw: string): string | null {
  const at = raw.lastIndexOf("@");
  if (at <= 0 || at === raw.length - 1) return null;
  const local = raw.slice(0, at);
  const domain = domainToASCII(raw.slice(at + 1).toLowerCase());
  if (local.length > 64 || !LOCAL_ATOM.test(local)) return null;
  if (!domain || domain.length > 253) return null;
  const labels = domain.split(".");
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return null;
  if (/^[0-9]+$/.test(labels[labels.length - 1]!)) return null; // a bare IP is not a mail domain here
  const address = `${local}@${domain}`;
  return address.length <= 254 ? address : null;
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
