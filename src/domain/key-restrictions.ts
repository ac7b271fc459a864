import { BlockList, isIP } from "node:net";
import { domainOf } from "./addresses.js";
import type { Permission } from "./environments.js";
import type { FieldError } from "./errors.js";

/**
 * What an API key is limited to on top of its permission (docs/api-keys.md). Null in a field
 * means no limit. Domains are kept lower-case and match exactly: a limit to `acme.example`
 * does not cover `eu.acme.example`, so a key never reaches further than its list says.
 */
export interface KeyRestrictions {
  allowed_ips: string[] | null;
  sender_domains: string[] | null;
  recipient_domains: string[] | null;
}

export const NO_RESTRICTIONS: KeyRestrictions = { allowed_ips: null, sender_domains: null, recipient_domains: null };

export type RestrictionsInput = Partial<KeyRestrictions>;

const FIELDS = ["allowed_ips", "sender_domains", "recipient_domains"] as const;

export function isRestricted(restrictions: KeyRestrictions): boolean {
  return FIELDS.some((field) => restrictions[field] !== null);
}

/**
 * `current` with the fields `input` gives replaced (null lifts a limit), normalised, or the
 * field errors (pointers under `pointerBase`) that make it unacceptable for a key of this
 * permission. Only a sending_access key takes domain limits: a full_access key may edit keys,
 * so it could lift its own.
 */
export function applyRestrictions(
  current: KeyRestrictions,
  input: RestrictionsInput | undefined,
  permission: Permission,
  pointerBase: string,
): { restrictions: KeyRestrictions; errors: FieldError[] } {
  const next = { ...current, ...input };
  const errors: FieldError[] = [];
  const fail = (pointer: string, message: string) => errors.push({ location: "body", pointer: `${pointerBase}/${pointer}`, message });
  for (const [index, entry] of (next.allowed_ips ?? []).entries()) {
    if (parseNetwork(entry) === null) fail(`allowed_ips/${index}`, `${JSON.stringify(entry)} is not an IP address or CIDR range`);
  }
  if (permission !== "sending_access") {
    for (const field of ["sender_domains", "recipient_domains"] as const) {
      if (input?.[field] != null) fail(field, "only a sending_access key can be limited to domains (a full_access key could lift its own limit)");
    }
  }
  const lower = (list: string[] | null) => (list === null ? null : [...new Set(list.map((domain) => domain.toLowerCase()))]);
  return {
    restrictions: { allowed_ips: next.allowed_ips ?? null, sender_domains: lower(next.sender_domains ?? null), recipient_domains: lower(next.recipient_domains ?? null) },
    errors,
  };
}

/** Whether a request from `address` (as the server sees it) may use a key with these limits. */
export function addressAllowed(restrictions: KeyRestrictions, address: string): boolean {
  if (restrictions.allowed_ips === null) return true;
  const client = unmapped(address);
  const family = isIP(client);
  if (family === 0) return false;
  return blockListOf(restrictions.allowed_ips).check(client, family === 4 ? "ipv4" : "ipv6");
}

/** Built lists by their entries: a key's list is checked on each of its requests, and rarely changes. */
const blockLists = new Map<string, BlockList>();
const BLOCK_LISTS_KEPT = 1_000;

function blockListOf(allowedIps: readonly string[]): BlockList {
  const key = allowedIps.join(" ");
  const known = blockLists.get(key);
  if (known) return known;
  const allowed = new BlockList();
  for (const entry of allowedIps) {
    const network = parseNetwork(entry);
    if (network === null) continue;
    if (network.prefix === null) allowed.addAddress(network.address, network.family);
    else allowed.addSubnet(network.address, network.prefix, network.family);
  }
  // Oldest first out; lists in use are built again on their next request.
  if (blockLists.size >= BLOCK_LISTS_KEPT) blockLists.delete(blockLists.keys().next().value!);
  blockLists.set(key, allowed);
  return allowed;
}

/** The sender and recipients a key with these limits may not use: empty when the message is within them. */
export function outsideRestrictions<Recipient extends { email: string }>(restrictions: KeyRestrictions, fromAddress: string, recipients: readonly Recipient[]) {
  const sender = restrictions.sender_domains;
  const senderRefused = sender !== null && !sender.includes(domainOf(fromAddress).toLowerCase());
  const allowedRecipients = restrictions.recipient_domains;
  const recipientsRefused = allowedRecipients === null ? [] : recipients.filter((r) => !allowedRecipients.includes(domainOf(r.email).toLowerCase()));
  return { sender: senderRefused ? fromAddress : null, recipients: recipientsRefused };
}

interface Network {
  address: string;
  prefix: number | null;
  family: "ipv4" | "ipv6";
}

function parseNetwork(entry: string): Network | null {
  const [address = "", prefixText, extra] = entry.split("/");
  if (extra !== undefined) return null;
  const version = isIP(address);
  if (version === 0) return null;
  const family = version === 4 ? "ipv4" : "ipv6";
  if (prefixText === undefined) return { address, prefix: null, family };
  if (!/^[0-9]{1,3}$/.test(prefixText)) return null;
  const prefix = Number(prefixText);
  return prefix <= (version === 4 ? 32 : 128) ? { address, prefix, family } : null;
}

/** A dual-stack socket reports IPv4 clients as `::ffff:a.b.c.d`; limits are written in IPv4. */
function unmapped(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address;
}
