import type { Resolver } from "node:dns/promises";
import { authenticate } from "mailauth";
import type { components } from "../../generated/v1.js";

type Result = components["schemas"]["InboundAuthenticationResult"];

export interface SenderAuthentication {
  spf: Result;
  dkim: Result;
  dmarc: Result;
}

export interface Connection {
  /** The connecting client's address: SPF checks it against the MAIL FROM (or HELO) domain. */
  ip: string;
  helo: string;
  /** The envelope sender; "" for the null sender (SPF then checks the HELO name, RFC 7208 §2.4). */
  mailFrom: string;
}

const RESULTS: readonly Result[] = ["pass", "fail", "softfail", "neutral", "none", "temperror", "permerror"];

/**
 * SPF, DKIM and DMARC of a received message (mailauth), looked up through Mailroom's configured
 * resolvers (DNS_SERVERS), as of receipt. DKIM passes when any signature verifies; DMARC is
 * evaluated against the From domain. ARC and BIMI are not looked at: nothing here acts on them.
 */
export async function authenticateSender(raw: Buffer, connection: Connection, resolver: Resolver, receivingHost: string): Promise<SenderAuthentication> {
  const result = await check(raw, connection, resolver, receivingHost);
  const dkim = result.dkim.results ?? [];
  return {
    spf: known(result.spf ? result.spf.status?.result : "none"),
    dkim: dkim.some((r) => r.status?.result === "pass") ? "pass" : known(dkim[0]?.status?.result ?? "none"),
    dmarc: known(result.dmarc ? result.dmarc.status?.result : "none"),
  };
}

/** The domains a received message comes from, as far as DNS could tell at receipt (lower-case). */
export interface SenderDomains {
  /**
   * Proven: each domain whose DKIM signature verifies, and the domain SPF authorised the
   * connecting client for (the MAIL FROM's, or for the null sender the HELO name's, RFC 7208 §2.4).
   */
  authenticated: string[];
  /**
   * Not yet known: each domain whose DKIM key or SPF record could not be looked up for now
   * (SERVFAIL, a timeout: RFC 8601's `temperror`). Asked again later, it may pass.
   */
  unsettled: string[];
}

export async function senderDomains(raw: Buffer, connection: Connection, resolver: Resolver, receivingHost: string): Promise<SenderDomains> {
  const result = await check(raw, connection, resolver, receivingHost);
  const dkim = result.dkim.results ?? [];
  const domainsWith = (outcome: string) => [
    ...dkim.filter((r) => r.status?.result === outcome).map((r) => r.signingDomain),
    ...(result.spf && result.spf.status?.result === outcome ? [result.spf.domain] : []),
  ];
  return { authenticated: lowerCaseSet(domainsWith("pass")), unsettled: lowerCaseSet(domainsWith("temperror")) };
}

const lowerCaseSet = (domains: unknown[]): string[] => [...new Set(domains.filter((d): d is string => typeof d === "string" && d !== "").map((d) => d.toLowerCase()))];

/**
 * How many DKIM-Signature fields of a message are verified: the topmost, added last, by the
 * systems nearest this server. Each one verified costs a DNS lookup and, with its own
 * canonicalisation or body length (l=), a pass over the whole body, and a sender may put thousands
 * in a message: 400 with distinct l= over a 5 MiB body took 23 s, 2,000 some two minutes, of the
 * one thread that serves every connection. RFC 6376 §6.1 lets a verifier limit the signatures it
 * tries; real mail carries one to three (the author's domain, a mailing list's, a forwarder's).
 */
const DKIM_SIGNATURES_VERIFIED = 5;

function check(raw: Buffer, connection: Connection, resolver: Resolver, receivingHost: string) {
  return authenticate(withVerifiedSignatures(raw), {
    ip: connection.ip,
    helo: connection.helo,
    sender: connection.mailFrom,
    mta: receivingHost,
    resolver: (name: string, type: string) => resolver.resolve(name, type) as Promise<never>,
    disableArc: true,
    disableBimi: true,
  });
}

/** mailauth's words in RFC 8601's: "policy" (a valid signature refused by local policy) is a fail. */
function known(value: string | undefined): Result {
  if (value === "policy") return "fail";
  return RESULTS.includes(value as Result) ? (value as Result) : "none";
}

/**
 * `raw` with no more DKIM-Signature fields than DKIM_SIGNATURES_VERIFIED, the topmost kept; `raw`
 * itself when it has no more. Only a message that carries more is rewritten (in its header, byte
 * for byte otherwise); a signature kept that signed a dropped one (h= naming DKIM-Signature) then
 * fails, as it would at any verifier that stops where this one does.
 */
function withVerifiedSignatures(raw: Buffer): Buffer {
  const end = headerEnd(raw);
  // latin1: one character per byte, so the fields kept are written back as they came.
  const fields = raw.subarray(0, end).toString("latin1").match(/[^\n]*(?:\n|$)(?:[ \t][^\n]*(?:\n|$))*/g) ?? [];
  let signatures = 0;
  const kept = fields.filter((field) => !(/^dkim-signature\s*:/i.test(field) && ++signatures > DKIM_SIGNATURES_VERIFIED));
  if (signatures <= DKIM_SIGNATURES_VERIFIED) return raw;
  return Buffer.concat([Buffer.from(kept.join(""), "latin1"), raw.subarray(end)]);
}

/** Where a message's header ends: after the line break that ends its last field, before the empty line (the whole message when it has none). */
function headerEnd(raw: Buffer): number {
  if (raw[0] === 0x0a || (raw[0] === 0x0d && raw[1] === 0x0a)) return 0;
  const ends = [raw.indexOf("\n\r\n"), raw.indexOf("\n\n")].filter((i) => i !== -1);
  return ends.length === 0 ? raw.length : Math.min(...ends) + 1;
}
