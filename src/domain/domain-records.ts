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
 * - MX (return path): verified when any exchange is this server's host name.
 * - SPF: verified when the name has exactly one `v=spf1` record (RFC 7208 §4.5: two are an error)
 *   and it holds the mechanism `a:<hostname>` (with no qualifier or `+`). An `include:` of some
 *   other record is not followed: the return-path domain is ours alone, publish what we give.
 * - DKIM: verified when a TXT record at the selector carries the same public key (`p=`),
 *   compared without whitespace (long keys are often split or wrapped by DNS providers).
 * - DMARC: verified when the name has exactly one `v=DMARC1` record, whatever its policy, or none
 *   and its organisational domain has exactly one (RFC 7489 §6.6.3: a receiver looks there next,
 *   and two records at one name are as good as none, ending the search).
 * - CNAME (tracking domain): verified when it points at `hostname`, the tracking host.
 * Otherwise `missing` when nothing of the type is published at the name, `mismatch` if
 * something else is; `found` shows what was there.
 */
export function checkRecord(record: DomainRecord, answer: DnsAnswer, hostname: string): Pick<DomainRecord, "status" | "found"> {
  if (answer.type === "MX") {
    const found = keepable(answer.mx.map((mx) => `${mx.priority} ${mx.exchange.replace(/\.$/, "")}`));
    if (found.length === 0) return { status: "missing", found };
    return { status: answer.mx.some((mx) => hostKey(mx.exchange) === hostKey(hostname)) ? "verified" : "mismatch", found };
  }
  if (answer.type === "CNAME") {
    const found = keepable(answer.cname.map(hostKey));
    if (found.length === 0) return { status: "missing", found };
    return { status: found.includes(hostKey(hostname)) ? "verified" : "mismatch", found };
  }
  const txt = answer.txt;
  if (record.purpose === "dmarc" && dmarcRecords(txt).length === 0) {
    // What the organisational domain publishes covers this one: `found` shows that record.
    const inherited = dmarcRecords(answer.organizational ?? []);
    if (inherited.length === 1) return { status: "verified", found: keepable(inherited) };
  }
  if (txt.length === 0) return { status: "missing", found: [] };
  const matches = record.purpose === "spf" ? spfAuthorises(txt, hostname) : record.purpose === "dmarc" ? dmarcRecords(txt).length === 1 : dkimKeyPublished(txt, record.value);
  return { status: matches ? "verified" : "mismatch", found: keepable(txt) };
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
 * appended to an existing record ending in `-all` authorises nothing.
 */
function spfAuthorises(txt: readonly string[], hostname: string): boolean {
  const spf = txt.filter((value) => /^v=spf1(\s|$)/i.test(value.trim()));
  if (spf.length !== 1) return false;
  const terms = spf[0]!.trim().split(/\s+/);
  const all = terms.findIndex((term) => /^[-+~?]?all$/i.test(term));
  return terms.slice(0, all < 0 ? terms.length : all).some((term) => {
    const match = /^\+?a:(.+)$/i.exec(term);
    return match !== null && hostKey(match[1]!) === hostKey(hostname);
  });
}

/** DKIM tag=value pairs (RFC 6376 §3.2); values without whitespace. */
function dkimTags(value: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of value.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    tags.set(part.slice(0, eq).trim(), part.slice(eq + 1).replace(/\s+/g, ""));
  }
  return tags;
}

function dkimKeyPublished(txt: readonly string[], expected: string): boolean {
  const key = dkimTags(expected).get("p");
  if (!key) return false;
  return txt.some((value) => dkimTags(value).get("p") === key);
}

/** The DMARC records among a name's TXT records: the others are discarded (RFC 7489 §6.6.3). */
function dmarcRecords(txt: readonly string[]): string[] {
  return txt.filter((value) => /^v\s*=\s*DMARC1\s*(;|$)/i.test(value.trim()));
}

/** The names of the required records a check did not find verified (once each: an MX and a TXT may share one). */
export function missingRecords(records: readonly DomainRecord[]): string[] {
  return [...new Set(records.filter((record) => record.required && record.status !== "verified").map((record) => record.name))];
}
