import { Resolver } from "node:dns/promises";
import { isIP } from "node:net";
import type { DeliveryConfig } from "../config.js";
import { AnswerCache } from "./answer-cache.js";

/**
 * DNS for live delivery (where does mail for a domain go, RFC 5321 §5.1) and for domain
 * verification (TXT and MX of a sending domain), through the configured resolvers
 * (DNS_SERVERS; tests point it at a local server), never through getaddrinfo.
 */
export interface MxHost {
  host: string;
  priority: number;
}

export type Destination =
  | { kind: "hosts"; hosts: MxHost[] }
  /** The domain takes no mail: bounce. */
  | { kind: "permanent"; enhancedStatus: string; reason: string }
  /** The answer could not be had: defer and ask again later. */
  | { kind: "temporary"; enhancedStatus: string; reason: string };

export type HostAddresses = { kind: "addresses"; addresses: string[] } | { kind: "none"; reason: string } | { kind: "temporary"; enhancedStatus: string; reason: string };

/** A lookup that failed for a reason that may pass (SERVFAIL, timeout, refused): ask again later. */
export class DnsTemporaryError extends Error {
  override name = "DnsTemporaryError";
  /** RFC 3463 X.4.3: directory server failure. */
  readonly enhancedStatus = "4.4.3";
  constructor(
    readonly query: string,
    /** Node's code: ESERVFAIL, ETIMEOUT, ECONNREFUSED, EREFUSED, ... */
    readonly code: string,
  ) {
    super(`DNS lookup ${query} failed temporarily (${code})`);
  }
}

export interface MxResolverOptions {
  /** "ip" or "ip:port" ("[v6]:port"); empty = the system's resolvers (/etc/resolv.conf). */
  servers: readonly string[];
  /** Per try of a query; a query is tried `tries` times (per server) before it fails with ETIMEOUT. */
  timeoutMs?: number;
  tries?: number;
  /**
   * How long delivery lookups (resolveDestination, resolveAddresses) reuse an answer at most; an
   * address answer no longer than its TTL. 0 (the default here) asks every time. The lookups
   * of domain verification always ask.
   */
  cacheMaxAgeMs?: number;
  /** For tests: pin the order among MX hosts of equal preference. Returns [0, 1). */
  random?: () => number;
  /** For tests: the clock that ages cached answers. */
  now?: () => number;
}

/**
 * A resolver on the configured servers (DNS_SERVERS), or on the system's (/etc/resolv.conf)
 * when there are none. Short tries, few of them: a delivery (mail or webhook) that cannot
 * resolve is retried minutes later anyway, and meanwhile it holds a slot.
 */
export function createResolver(servers: readonly string[], options: { timeoutMs?: number; tries?: number } = {}): Resolver {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? 2000, tries: options.tries ?? 2 });
  if (servers.length > 0) resolver.setServers([...servers]);
  return resolver;
}

// NXDOMAIN and NODATA are answers; everything else is a failure to get one.
const NXDOMAIN = "ENOTFOUND";
const NODATA = "ENODATA";

export class MxResolver {
  private readonly resolver: Resolver;
  private readonly random: () => number;
  // Node does not report an MX answer's TTL: MX answers are kept for cacheMaxAgeMs. An empty
  // answer (NODATA) is kept as long: RFC 2308's negative TTL is not reported either.
  private readonly mxAnswers: AnswerCache<MxRecord[] | null>;
  private readonly addressAnswers: AnswerCache<string[] | null>;

  constructor(options: MxResolverOptions) {
    this.resolver = createResolver(options.servers, options);
    this.random = options.random ?? Math.random;
    const cache = { maxAgeMs: options.cacheMaxAgeMs ?? 0, ...(options.now ? { now: options.now } : {}) };
    this.mxAnswers = new AnswerCache(cache);
    this.addressAnswers = new AnswerCache(cache);
  }

  static fromConfig(config: Pick<DeliveryConfig, "dnsServers" | "dnsCacheSeconds">): MxResolver {
    return new MxResolver({ servers: config.dnsServers, cacheMaxAgeMs: config.dnsCacheSeconds * 1000 });
  }

  /**
   * The hosts to try for mail to `domain`, best first (RFC 5321 §5.1): the MX hosts by
   * preference, in random order among equal preferences (to spread load as the publisher
   * intends); the domain itself when it has no MX (the "implicit MX"); nothing when it has a
   * null MX (RFC 7505) or does not exist.
   */
  async resolveDestination(domain: string): Promise<Destination> {
    const name = domain.toLowerCase().replace(/\.$/, "");
    let records: MxRecord[] | null;
    try {
      records = await this.mxAnswers.get(name, async () => ({ value: await this.lookup(`MX ${name}`, () => this.resolver.resolveMx(name), { nodataIsNull: true }), ttlMs: Infinity }));
    } catch (error) {
      if (error instanceof DnsTemporaryError) return { kind: "temporary", enhancedStatus: error.enhancedStatus, reason: error.message };
      if (error instanceof NxDomain) return { kind: "permanent", enhancedStatus: "5.1.2", reason: `${name} does not exist (DNS NXDOMAIN)` };
      throw error;
    }
    if (records === null || records.length === 0) return { kind: "hosts", hosts: [{ host: name, priority: 0 }] };

    // Node reports the root "." as an empty exchange. A null MX must be the domain's only MX
    // (RFC 7505 §3); next to real ones it is ignored, since it is not a host to try.
    const real = records.filter((record) => record.exchange !== "" && record.exchange !== ".");
    if (real.length === 0) return { kind: "permanent", enhancedStatus: "5.1.10", reason: `${name} publishes a null MX (RFC 7505): it accepts no mail` };
    const hosts = real
      .map((record) => ({ host: record.exchange.toLowerCase().replace(/\.$/, ""), priority: record.priority, tiebreak: this.random() }))
      .sort((a, b) => a.priority - b.priority || a.tiebreak - b.tiebreak)
      .map(({ host, priority }) => ({ host, priority }));
    return { kind: "hosts", hosts };
  }

  /**
   * The addresses of an MX host, IPv4 first: a sender without IPv6 reverse DNS is refused by
   * the large mailbox providers, and IPv4 is what every MX answers on. An exchange written as
   * an address literal (against RFC 5321 §5.1, but seen) is used as is.
   */
  async resolveAddresses(host: string): Promise<HostAddresses> {
    if (isIP(host)) return { kind: "addresses", addresses: [host] };
    const [v4, v6] = await Promise.allSettled([this.addresses("A", host), this.addresses("AAAA", host)]);
    const addresses = [...(v4.status === "fulfilled" ? (v4.value ?? []) : []), ...(v6.status === "fulfilled" ? (v6.value ?? []) : [])];
    if (addresses.length > 0) return { kind: "addresses", addresses };
    const failed = [v4, v6].find((result): result is PromiseRejectedResult => result.status === "rejected");
    if (failed) {
      const error: unknown = failed.reason;
      if (error instanceof DnsTemporaryError) return { kind: "temporary", enhancedStatus: error.enhancedStatus, reason: error.message };
      throw error;
    }
    return { kind: "none", reason: `${host} has no A or AAAA record` };
  }

  /** The A or AAAA addresses of `host` (null: none, or no such name), reused for their TTL. */
  private addresses(type: "A" | "AAAA", host: string): Promise<string[] | null> {
    return this.addressAnswers.get(`${type} ${host}`, async () => {
      const query = () => (type === "A" ? this.resolver.resolve4(host, { ttl: true }) : this.resolver.resolve6(host, { ttl: true }));
      const records = await this.lookup(`${type} ${host}`, query, { nodataIsNull: true, nxdomainIsNull: true });
      if (records === null) return { value: null, ttlMs: Infinity };
      return { value: records.map((record) => record.address), ttlMs: Math.min(...records.map((record) => record.ttl)) * 1000 };
    });
  }

  /** MX records of `name`, or null when it has none (NODATA) or does not exist (NXDOMAIN). */
  async resolveMx(name: string): Promise<MxRecord[] | null> {
    return this.lookup(`MX ${name}`, () => this.resolver.resolveMx(name), { nodataIsNull: true, nxdomainIsNull: true });
  }

  /**
   * TXT records of `name`, each one's character-strings joined (a DKIM key or a long SPF record
   * is split into <=255-byte strings, RFC 7208 §3.3), or null for NODATA / NXDOMAIN.
   */
  async resolveTxt(name: string): Promise<string[] | null> {
    const records = await this.lookup(`TXT ${name}`, () => this.resolver.resolveTxt(name), { nodataIsNull: true, nxdomainIsNull: true });
    return records === null ? null : records.map((strings) => strings.join(""));
  }

  /** CNAME targets of `name` (a tracking domain), or null for NODATA / NXDOMAIN. */
  async resolveCname(name: string): Promise<string[] | null> {
    return this.lookup(`CNAME ${name}`, () => this.resolver.resolveCname(name), { nodataIsNull: true, nxdomainIsNull: true });
  }

  /** Runs one query and sorts its failure: an answer (null), NXDOMAIN, or a temporary error. */
  private async lookup<T>(query: string, run: () => Promise<T>, options: { nodataIsNull?: boolean; nxdomainIsNull?: boolean }): Promise<T | null> {
    try {
      return await run();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "EUNKNOWN";
      if (code === NODATA && options.nodataIsNull) return null;
      if (code === NXDOMAIN) {
        if (options.nxdomainIsNull) return null;
        throw new NxDomain();
      }
      throw new DnsTemporaryError(query, code);
    }
  }
}

interface MxRecord {
  exchange: string;
  priority: number;
}

class NxDomain extends Error {}
