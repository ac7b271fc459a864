import { isIPv4, isIPv6 } from "node:net";
import { organizationalDomain } from "./organizational-domain.js";
import type { components } from "../../generated/v1.js";

/**
 * The DNS records a sending domain publishes, and how a lookup's answer is judged against each
 * (docs/domains.md "The records to publish" and "Verification"). Pure code: DomainsService looks
 * the records up and saves what this concludes.
 */
export type DomainRecord = components["schemas"]["DomainRecord"];

/** What a DKIM record needs of its key. */
export interface PublishedDkimKey {
  selector: string;
  /** The TXT value published at `<selector>._domainkey.<domain>`. */
  dns_value: string;
}

const DMARC_VALUE = "v=DMARC1; p=none;";

/** The records a domain must (and should) publish, in the order the dashboard lists them. */
export function recordsFor(name: string, returnPathDomain: string, keys: readonly PublishedDkimKey[], hostname: string): DomainRecord[] {
  const record = (purpose: DomainRecord["purpose"], type: DomainRecord["type"], at: string, value: string, required: boolean, priority: number | null = null): DomainRecord => ({
    purpose,
    type,
    name: at,
    value,
    priority,
    required,
    status: "pending",
    found: [],
  });
  return [
    record("return_path", "MX", returnPathDomain, hostname, true, 10),
    record("spf", "TXT", returnPathDomain, spfValue(hostname), true),
    ...keys.map((key) => dkimRecord(key, name, "dkim")),
    record("dmarc", "TXT", `_dmarc.${name}`, DMARC_VALUE, false),
  ];
}

/** docs/domains.md's order: a client may read the records by position, and a form lists them so. */
const RECORD_ORDER: Record<DomainRecord["purpose"], number> = { return_path: 0, spf: 1, dkim: 2, dkim_next: 3, dmarc: 4, tracking: 5 };

/** The records in the documented order, whatever order a rotation or a tracking domain added them in (stable within a purpose). */
export function inRecordOrder(records: readonly DomainRecord[]): DomainRecord[] {
  return [...records].sort((a, b) => RECORD_ORDER[a.purpose] - RECORD_ORDER[b.purpose]);
}

const spfValue = (hostname: string) => `v=spf1 a:${hostname} ~all`;

/**
 * The records with the values that name this server's host names (the return path's MX and SPF
 * record, the tracking CNAME) as the configuration gives them now. A check judges the records
 * against these and saves them, so what the API shows is what was checked: after
 * SENDING_HOSTNAME or TRACKING_BASE_URL changes, the records show the new value to publish. A
 * record whose value changed starts over as `pending`: its last status was about the old value.
 */
export function withCurrentHosts(records: readonly DomainRecord[], hostname: string, trackingHost: string): DomainRecord[] {
  return records.map((record) => {
    const value = record.purpose === "return_path" ? hostname : record.purpose === "spf" ? spfValue(hostname) : record.purpose === "tracking" ? trackingHost : record.value;
    return value === record.value ? record : { ...record, value, status: "pending" };
  });
}

/** The TXT record publishing a DKIM key: required once it signs (`dkim`), not while a rotation waits for it (`dkim_next`). */
export function dkimRecord(key: PublishedDkimKey, name: string, purpose: "dkim" | "dkim_next"): DomainRecord {
  return { purpose, type: "TXT", name: `${key.selector}._domainkey.${name}`, value: key.dns_value, priority: null, required: purpose === "dkim", status: "pending", found: [] };
}

/** A tracking domain's record: a CNAME to the host serving the tracking links (docs/tracking.md#tracking-domain). */
export function trackingRecord(trackingDomain: string, trackingHost: string): DomainRecord {
  return { purpose: "tracking", type: "CNAME", name: trackingDomain, value: trackingHost, priority: null, required: false, status: "pending", found: [] };
}

export type DnsAnswer =
  | { type: "MX"; mx: Array<{ priority: number; exchange: string }> }
  /** `organizational`: for DMARC, what the organisational domain's `_dmarc` name answered, when dmarcFallbackName asked for it. */
  | { type: "TXT"; txt: string[]; organizational?: string[] | undefined }
  | { type: "CNAME"; cname: string[] };

/**
 * A record's status given what DNS answered at its name (an empty answer: nothing there).
 * - MX (return path): verified when this server's host name is the preferred exchange, every one
 *   at the lowest preference being it (RFC 5321 §5.1: senders try those first). `found` lists the
 *   exchanges by preference, so a mismatch shows first the host that takes the mail instead.
 * - SPF: verified when the name has exactly one SPF record (RFC 7208 §4.5: two are an error), well
 *   formed throughout (§4.6, §12), holding the mechanism `a:<hostname>` (with no qualifier or `+`)
 *   before any `all`. An `include:` of some other record is not followed: the return-path domain
 *   is ours alone, publish what we give.
 * - DKIM: verified when a TXT record at the selector publishes the same public key (`p=`, compared
 *   without whitespace: long keys are often split or wrapped by DNS providers) with tags that let
 *   verifiers use it for this server's signatures (dkimKeyRecordFault).
 * - DMARC: verified when the name has exactly one DMARC record and it states a policy
 *   (dmarcPolicyStated), or none and its organisational domain has exactly one that does
 *   (RFC 7489 §6.6.3: a receiver looks there next, and two records at one name are as good as
 *   none, ending the search).
 * - CNAME (tracking domain): verified when it points at `hostname`, the tracking host.
 * Otherwise `missing` when nothing of the type is published at the name, `mismatch` if
 * something else is; `found` shows what was there.
 */
export function checkRecord(record: DomainRecord, answer: DnsAnswer, hostname: string): Pick<DomainRecord, "status" | "found"> {
  if (answer.type === "MX") return checkMx(answer.mx, hostname);
  if (answer.type === "CNAME") {
    const found = keepable(answer.cname.map(hostKey));
    if (found.length === 0) return { status: "missing", found };
    return { status: found.includes(hostKey(hostname)) ? "verified" : "mismatch", found };
  }
  const txt = answer.txt;
  if (record.purpose === "dmarc" && dmarcRecords(txt).length === 0) {
    // What the organisational domain publishes covers this one: `found` shows that record.
    const inherited = dmarcRecords(answer.organizational ?? []);
    if (inherited.length === 1 && dmarcPolicyStated(inherited[0]!)) return { status: "verified", found: keepable(inherited) };
  }
  if (txt.length === 0) return { status: "missing", found: [] };
  const matches = record.purpose === "spf" ? spfAuthorises(txt, hostname) : record.purpose === "dmarc" ? dmarcVerified(txt) : txt.some((value) => dkimKeyRecordFault(value, record.value) === null);
  return { status: matches ? "verified" : "mismatch", found: keepable(txt) };
}

/**
 * The return path's MX: bounces, DSNs and complaints reach this server only when it is where
 * senders go first. A host at a lower preference value takes them all, and one at the same value
 * takes its share (RFC 5321 §5.1 picks among equals at random); other hosts may only be
 * fallbacks, at higher values.
 */
function checkMx(mx: ReadonlyArray<{ priority: number; exchange: string }>, hostname: string): Pick<DomainRecord, "status" | "found"> {
  const byPreference = [...mx].sort((a, b) => a.priority - b.priority);
  const found = keepable(byPreference.map((exchange) => `${exchange.priority} ${exchange.exchange.replace(/\.$/, "")}`));
  if (found.length === 0) return { status: "missing", found };
  const preferred = byPreference.filter((exchange) => exchange.priority === byPreference[0]!.priority);
  return { status: preferred.every((exchange) => hostKey(exchange.exchange) === hostKey(hostname)) ? "verified" : "mismatch", found };
}

/**
 * The name a DMARC record's check must look up too, given what its own name answered: the
 * organisational domain's `_dmarc` name when the record's has no DMARC record and is not that
 * name already (RFC 7489 §6.6.3); otherwise null.
 */
export function dmarcFallbackName(record: DomainRecord, txt: readonly string[]): string | null {
  if (record.purpose !== "dmarc" || dmarcRecords(txt).length > 0) return null;
  const domain = record.name.replace(/^_dmarc\./, "");
  const organizational = organizationalDomain(domain);
  return organizational === domain ? null : `_dmarc.${organizational}`;
}

/** Bytes of `found` kept per record: the domain owner controls these answers, and they are stored. */
const FOUND_MAX_BYTES = 4096;
const FOUND_ENTRY_MAX_CHARS = 1024;

/** What DNS answered, bounded so that an enormous answer cannot overflow the stored row. */
function keepable(found: readonly string[]): string[] {
  const kept: string[] = [];
  let bytes = 0;
  for (const value of found) {
    const entry = value.length > FOUND_ENTRY_MAX_CHARS ? `${value.slice(0, FOUND_ENTRY_MAX_CHARS)}…` : value;
    bytes += Buffer.byteLength(JSON.stringify(entry));
    if (bytes > FOUND_MAX_BYTES) break;
    kept.push(entry);
  }
  return kept;
}

export const hostKey = (host: string) => host.trim().toLowerCase().replace(/\.$/, "");

/**
 * Whether the one SPF record passes mail from `hostname` with an `a:` mechanism. Only the terms
 * before the first `all` count: RFC 7208 §5.1 never evaluates the ones after it, so a mechanism
 * appended to an existing record ending in `-all` authorises nothing. A syntax error anywhere
 * makes every receiver answer permerror (§4.6), whatever the record holds.
 */
function spfAuthorises(txt: readonly string[], hostname: string): boolean {
  const spf = txt.filter((value) => SPF_VERSION.test(value));
  if (spf.length !== 1) return false;
  const terms = spfTerms(spf[0]!);
  if (terms === null) return false;
  const all = terms.findIndex((term) => /^[-+~?]?all$/i.test(term));
  return terms.slice(0, all < 0 ? terms.length : all).some((term) => {
    const match = /^\+?a:(.+)$/i.exec(term);
    return match !== null && hostKey(match[1]!) === hostKey(hostname);
  });
}

/**
 * RFC 7208 §4.5: an SPF record begins with exactly "v=spf1" and then a space or its end; others
 * ("v=spf10", one with a leading space) are not SPF records and are discarded. Case-insensitive,
 * as the ABNF's strings are (RFC 5234 §2.3).
 */
const SPF_VERSION = /^v=spf1( |$)/i;

/**
 * The record's terms after the version, or null when one is not well formed (RFC 7208 §12):
 * terms are separated by spaces (SP only), each a mechanism with an optional qualifier or a
 * modifier `name=value`, and `redirect` and `exp` occur at most once each (§6). Hand-written:
 * mailauth's SPF parser is interleaved with its evaluation and DNS lookups.
 */
function spfTerms(record: string): string[] | null {
  const terms = record.slice("v=spf1".length).split(" ").filter((term) => term !== "");
  if (!terms.every((term) => spfModifierValid(term) ?? spfDirectiveValid(term))) return null;
  const modifiers = terms.map((term) => SPF_MODIFIER.exec(term)?.[1]?.toLowerCase());
  if (["redirect", "exp"].some((name) => modifiers.filter((modifier) => modifier === name).length > 1)) return null;
  return terms;
}

/** `name=value`; a name cannot hold ":" or "/", so "a:x=y" is a mechanism whose domain holds "=". */
const SPF_MODIFIER = /^([a-z][a-z0-9._-]*)=(.*)$/i;

/** Whether a modifier term is well formed; undefined when the term is not a modifier. */
function spfModifierValid(term: string): boolean | undefined {
  const match = SPF_MODIFIER.exec(term);
  if (match === null) return undefined;
  const [, name, value] = match as unknown as [string, string, string];
  // redirect= and exp= name a domain; an unknown modifier's value is any macro-string (§6).
  return ["redirect", "exp"].includes(name.toLowerCase()) ? domainSpecValid(value) : macroString(value) !== null;
}

/** Whether `[qualifier] mechanism` is one of §5's, with what that mechanism takes. */
function spfDirectiveValid(term: string): boolean {
  const match = /^[-+~?]?([a-z0-9]+)(.*)$/i.exec(term);
  if (match === null) return false;
  const [, name, rest] = match as unknown as [string, string, string];
  switch (name.toLowerCase()) {
    case "all":
      return rest === "";
    case "include":
    case "exists":
      return rest.startsWith(":") && domainSpecValid(rest.slice(1));
    case "ptr":
      return rest === "" || (rest.startsWith(":") && domainSpecValid(rest.slice(1)));
    case "a":
    case "mx": {
      // [":" domain-spec] [dual-cidr-length]: the domain ends where the prefix lengths begin.
      const parts = /^(?::(.*?))?(?:\/(0|[1-9]\d?))?(?:\/\/(0|[1-9]\d{0,2}))?$/.exec(rest);
      if (parts === null) return false;
      const [, domain, ip4, ip6] = parts;
      return (domain === undefined || domainSpecValid(domain)) && Number(ip4 ?? 0) <= 32 && Number(ip6 ?? 0) <= 128;
    }
    case "ip4": {
      const [, address, prefix] = /^:(.+?)(?:\/(0|[1-9]\d?))?$/.exec(rest) ?? [];
      return address !== undefined && isIPv4(address) && Number(prefix ?? 0) <= 32;
    }
    case "ip6": {
      const [, address, prefix] = /^:(.+?)(?:\/(0|[1-9]\d{0,2}))?$/.exec(rest) ?? [];
      // isIPv6 takes a zone ("%eth0"), which RFC 4291's text form has not.
      return address !== undefined && !address.includes("%") && isIPv6(address) && Number(prefix ?? 0) <= 128;
    }
    default:
      return false;
  }
}

/** §7.1's macro-expand, then one macro-literal: visible ASCII but "%". */
const MACRO_TOKEN = /%\{[slodiphcrtv]\d*r?[-.+,/_=]*\}|%[%_-]|[\x21-\x24\x26-\x7e]/gi;

/** A macro-string's tokens, or null when something in it is neither a macro nor a literal (a lone "%"). */
function macroString(value: string): string[] | null {
  const tokens = value.match(MACRO_TOKEN) ?? [];
  return tokens.join("").length === value.length ? tokens : null;
}

/**
 * §7.1's domain-spec: a macro-string ending in a macro or in "." and a top label that is not all
 * digits (one trailing dot allowed). So `localhost` or `acme.example%` is no domain-spec.
 */
function domainSpecValid(value: string): boolean {
  const tokens = macroString(value);
  if (tokens === null || tokens.length === 0) return false;
  if (tokens[tokens.length - 1]!.startsWith("%")) return true;
  const name = value.replace(/\.$/, "");
  const dot = name.lastIndexOf(".");
  return dot >= 0 && /^(?=[a-z0-9-]*[a-z])[a-z0-9]+(?:-[a-z0-9-]*[a-z0-9])?$/i.test(name.slice(dot + 1));
}

/** A tag list (RFC 6376 §3.2): names in order, values with surrounding whitespace dropped. */
interface TagList {
  names: string[];
  values: Map<string, string>;
}

/** The tag list of a DKIM key record, or what makes it no tag list. */
function tagList(value: string): TagList | string {
  const list: TagList = { names: [], values: new Map() };
  // Parts of only whitespace (a trailing ";", which §3.2 allows) are no tags.
  for (const part of value.split(";").filter((spec) => spec.trim() !== "")) {
    const eq = part.indexOf("=");
    if (eq < 0) return `${JSON.stringify(part.trim())} is not a tag=value pair`;
    const name = part.slice(0, eq).trim();
    if (!/^[a-z][a-z0-9_]*$/i.test(name)) return `${JSON.stringify(name)} is not a tag name`;
    // §3.2: a tag occurring twice makes the whole tag list invalid.
    if (list.values.has(name)) return `duplicate tag ${name}=`;
    list.names.push(name);
    list.values.set(name, part.slice(eq + 1).trim());
  }
  return list;
}

/** A colon-separated tag value (h=, s=), lower-cased: the ABNF's names are case-insensitive. */
const colonList = (value: string) => value.split(":").map((item) => item.trim().toLowerCase());

/**
 * Why a published DKIM key record would not verify this server's signatures with the key of
 * `expected` (the value Mailroom asks to publish), or null when it would. RFC 6376 §3.6.1: the
 * tag list must be valid (no tag twice); `v=`, if present, is exactly `DKIM1` and comes first;
 * `k=` (`rsa` when absent) names the key's type, so an Ed25519 key needs `k=ed25519`
 * (RFC 8463 §4.2); `h=`, if present, allows sha256 (both algorithms sign with it); `s=`, if
 * present, allows `email` or `*`; `p=` carries the key (empty: revoked). Other tags (`t=`, `n=`,
 * unknown ones) change nothing here and are ignored, as §3.6.1 says verifiers must.
 */
export function dkimKeyRecordFault(published: string, expected: string): string | null {
  const tags = tagList(published);
  if (typeof tags === "string") return tags;
  const version = tags.values.get("v");
  if (version !== undefined && tags.names[0] !== "v") return "v= must be the first tag";
  if (version !== undefined && version !== "DKIM1") return `v=${version} is not DKIM1`;
  const wanted = tagList(expected) as TagList;
  const keyType = (tags.values.get("k") ?? "rsa").toLowerCase();
  const wantedType = wanted.values.get("k") ?? "rsa";
  if (keyType !== wantedType) return `k=${keyType}${tags.values.has("k") ? "" : " (the default)"} does not match this key's type, k=${wantedType}`;
  const hashes = tags.values.get("h");
  if (hashes !== undefined && !colonList(hashes).includes("sha256")) return `h=${hashes} does not allow sha256, which every signature uses`;
  const services = tags.values.get("s");
  if (services !== undefined && !colonList(services).some((service) => service === "email" || service === "*")) return `s=${services} does not allow email`;
  const key = tags.values.get("p")?.replace(/\s+/g, "");
  if (key === undefined) return "no p= tag";
  if (key === "") return "p= is empty: the key is revoked";
  return key === wanted.values.get("p")!.replace(/\s+/g, "") ? null : "p= is another key";
}

/**
 * The DMARC records among a name's TXT records: the others are discarded (RFC 7489 §6.6.3). One
 * begins with the version tag, whose value must be `DMARC1` precisely, case included (§6.4); the
 * tag name and the spaces around "=" are the ABNF's (§6.4: `"v" *WSP "=" *WSP %x44.4d.41.52.43.31`).
 */
function dmarcRecords(txt: readonly string[]): string[] {
  return txt.filter((value) => /^[vV][ \t]*=[ \t]*DMARC1[ \t]*(;|$)/.test(value));
}

/** The one DMARC record at the name states a policy. */
function dmarcVerified(txt: readonly string[]): boolean {
  const records = dmarcRecords(txt);
  return records.length === 1 && dmarcPolicyStated(records[0]!);
}

/**
 * Whether a DMARC record has a valid `p=` (and `sp=`, if any): none, quarantine or reject, once.
 * Without them a receiver applies no DMARC policy (RFC 7489 §6.6.3), unless `rua=` makes it act
 * as if `p=none`; Mailroom asks for `p=` itself rather than count on that.
 */
function dmarcPolicyStated(record: string): boolean {
  // The ABNF's tag names and policy values are case-insensitive, with spaces around "=" (§6.4).
  const tags = record.split(";").map((part) => part.split("=").map((side) => side.trim().toLowerCase()));
  const policies = (name: string) => tags.filter(([tag]) => tag === name).map(([, ...value]) => value.join("="));
  const valid = (values: string[]) => values.length === 1 && ["none", "quarantine", "reject"].includes(values[0]!);
  const sp = policies("sp");
  return valid(policies("p")) && (sp.length === 0 || valid(sp));
}

/** The names of the required records a check did not find verified (once each: an MX and a TXT may share one). */
export function missingRecords(records: readonly DomainRecord[]): string[] {
  return [...new Set(records.filter((record) => record.required && record.status !== "verified").map((record) => record.name))];
}
