import { lookup as systemLookup, type Resolver } from "node:dns/promises";
import type { LookupAddress, LookupOptions } from "node:dns";
import { BlockList, isIP } from "node:net";
import { createResolver } from "../delivery/dns-resolver.js";
import { refusedTarget } from "../domain/errors.js";

/**
 * Server-side request forgery: a webhook URL is chosen by the API's caller, so without a check
 * Mailroom would POST into the network it runs in. Refused unless the operator allows them
 * (WEBHOOK_ALLOW_PRIVATE_TARGETS): private, loopback, link-local, unique-local, carrier-grade
 * NAT, multicast, reserved, documentation and unspecified addresses, in any IPv4 or IPv6 spelling
 * (IPv4-mapped, SIIT, well-known-prefix NAT64 and 6to4 addresses are checked as the IPv4 address
 * they carry; Teredo addresses are refused whole).
 *
 * The check runs when a URL is saved and again inside the HTTP client's DNS lookup, at connect
 * time, on the addresses the socket will actually use: a name that resolved to a public address
 * when it was saved and to 127.0.0.1 later (DNS rebinding) is refused then.
 */
const FORBIDDEN = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8], // "this network"; 0.0.0.0 reaches the local host on Linux
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, including cloud metadata endpoints (169.254.169.254)
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24], // documentation (TEST-NET-1, -2, -3): never routed, so never a real receiver
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, and the broadcast address
] as const) {
  FORBIDDEN.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 96], // unspecified, loopback, and the deprecated IPv4-compatible form (::127.0.0.1)
  ["64:ff9b:1::", 48], // local-use NAT64
  ["100::", 64], // discard-only
  // Teredo (RFC 4380) tunnels to the IPv4 addresses it carries: its server's in bits 32-63 and,
  // inverted, its client's in bits 96-127 (2001:0:…:f5ff:fffe reaches 10.0.0.1), through the
  // host's Teredo relay. Obsolete, and no receiver is reachable only through it: refused whole.
  ["2001::", 32],
  ["2001:2::", 48], // benchmarking
  ["2001:db8::", 32], // documentation
  ["3fff::", 20], // documentation (RFC 9637)
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
] as const) {
  FORBIDDEN.addSubnet(network, prefix, "ipv6");
}

/**
 * The well-known NAT64 prefix (RFC 6052): a NAT64 gateway forwards `64:ff9b::7f00:1` to 127.0.0.1,
 * its own loopback, so such an address is what it carries in its last 32 bits. (The local-use
 * prefix, 64:ff9b:1::/48, may embed anything anywhere and is refused whole.)
 */
const NAT64 = new BlockList();
NAT64.addSubnet("64:ff9b::", 96, "ipv6");

/**
 * SIIT's IPv4-translated addresses (RFC 2765, `::ffff:0:a.b.c.d`): a stateless translator forwards
 * them to the IPv4 address in their last 32 bits, as NAT64 does.
 */
const SIIT = new BlockList();
SIIT.addSubnet("::ffff:0:0:0", 96, "ipv6");

/**
 * 6to4 (RFC 3056): a host or relay with a 6to4 route tunnels `2002:AABB:CCDD::/48` to the IPv4
 * address AA.BB.CC.DD (bits 16 to 47), so `2002:a00:1::1` reaches into 10.0.0.1's network.
 */
const SIX_TO_FOUR = new BlockList();
SIX_TO_FOUR.addSubnet("2002::", 16, "ipv6");

/** Whether Mailroom refuses to connect to this address (IPv4 or IPv6, brackets allowed). */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "");
  const family = isIP(bare);
  if (family === 0) return false;
  if (family === 6 && (NAT64.check(bare, "ipv6") || SIIT.check(bare, "ipv6"))) return FORBIDDEN.check(ipv4At(bare, 6), "ipv4");
  if (family === 6 && SIX_TO_FOUR.check(bare, "ipv6")) return FORBIDDEN.check(ipv4At(bare, 1), "ipv4");
  // BlockList checks an IPv4-mapped IPv6 address (::ffff:127.0.0.1) against the IPv4 rules too.
  return FORBIDDEN.check(bare, family === 4 ? "ipv4" : "ipv6");
}

/**
 * The IPv4 address in 16-bit groups `first` and `first + 1` of a valid IPv6 address (6 for the
 * last 32 bits: `…::7f00:1` and `…::127.0.0.1` give 127.0.0.1; 1 for 6to4's `2002:7f00:1::`).
 */
function ipv4At(ipv6: string, first: number): string {
  let address = ipv6.replace(/%.*$/, ""); // a zone index names an interface, not bits
  // A dotted IPv4 tail stands for the last two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  if (dotted) {
    const [a = 0, b = 0, c = 0, d = 0] = dotted.slice(1).map(Number);
    address = `${address.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = [], tail] = address.split("::").map((part) => (part === "" ? [] : part.split(":")));
  const groups = tail === undefined ? head : [...head, ...Array<string>(8 - head.length - tail.length).fill("0"), ...tail];
  const [high = 0, low = 0] = groups.slice(first, first + 2).map((group) => parseInt(group, 16));
  return [high >> 8, high & 255, low >> 8, low & 255].join(".");
}

/**
 * A connection refused by the policy; the dispatcher records it as `target_not_allowed`. Its
 * message, which callers see, does not name the address a host name resolved to: that would map
 * the operator's internal names to their addresses for anyone who can save a URL (`address` is
 * kept for the server's own logs).
 */
export class TargetNotAllowedError extends Error {
  override name = "TargetNotAllowedError";
  readonly code = "ETARGETNOTALLOWED";
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    super(refusedTarget(host, address));
  }
}

/**
 * The lookup that precedes a connection failed: the name does not resolve, or the resolver
 * (DNS_SERVERS) refused, timed out or could not be reached. The dispatcher records it as `dns`.
 * Tagged here because its code cannot tell: a resolver that cannot be reached fails the lookup
 * with ECONNREFUSED, the same code as a receiver refusing the connection.
 */
export class LookupFailedError extends Error {
  override name = "LookupFailedError";
  constructor(
    readonly host: string,
    /** The resolver's code (ENOTFOUND, ESERVFAIL, ETIMEOUT, ECONNREFUSED, …), for the logs. */
    readonly code: string,
    cause?: unknown,
  ) {
    super(`DNS lookup of ${host} failed (${code})`, { cause });
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export class TargetGuard {
  private readonly resolver: Resolver | null;

  constructor(
    private readonly options: {
      allowPrivate: boolean;
      /** The configured resolvers (DNS_SERVERS); empty = the system's (getaddrinfo, /etc/hosts). */
      dnsServers: readonly string[];
    },
  ) {
    this.resolver = options.dnsServers.length > 0 ? createResolver(options.dnsServers) : null;
  }

  /**
   * The forbidden address a URL's host is or resolves to, or null: allowed, or not resolvable
   * now (it is checked again at every delivery). For the check when a URL is saved.
   */
  async forbiddenAddressOf(url: URL): Promise<string | null> {
    if (this.options.allowPrivate) return null;
    const host = url.hostname.replace(/^\[|\]$/g, "");
    if (isIP(host)) return isForbiddenAddress(host) ? host : null;
    const addresses = await this.resolve(host).catch(() => []);
    return addresses.find(isForbiddenAddress) ?? null;
  }

  /** For an IP-literal host, which the socket connects to without a lookup: the refusal, or null. */
  literalRefusal(url: URL): TargetNotAllowedError | null {
    const host = url.hostname.replace(/^\[|\]$/g, "");
    return !this.options.allowPrivate && isIP(host) && isForbiddenAddress(host) ? new TargetNotAllowedError(host, host) : null;
  }

  /**
   * The `lookup` of the HTTP agents: resolves as usual and fails the connection when any address
   * is forbidden, so the address checked is the address connected to.
   */
  readonly lookup = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    this.resolve(hostname).then(
      (found) => {
        const wanted = options.family === 4 || options.family === 6 ? found.filter((address) => isIP(address) === options.family) : found;
        if (!this.options.allowPrivate) {
          const refused = found.find(isForbiddenAddress);
          if (refused !== undefined) return callback(new TargetNotAllowedError(hostname, refused), options.all ? [] : "");
        }
        if (wanted.length === 0) return callback(new LookupFailedError(hostname, "ENOTFOUND"), options.all ? [] : "");
        if (options.all) callback(null, wanted.map((address) => ({ address, family: isIP(address) })));
        else callback(null, wanted[0]!, isIP(wanted[0]!));
      },
      (error: NodeJS.ErrnoException) => callback(new LookupFailedError(hostname, error.code ?? "EUNKNOWN", error), options.all ? [] : ""),
    );
  };

  private async resolve(host: string): Promise<string[]> {
    if (isIP(host)) return [host];
    if (this.resolver === null) return (await systemLookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
    const [v4, v6] = await Promise.allSettled([this.resolver.resolve4(host), this.resolver.resolve6(host)]);
    const addresses = [...(v4.status === "fulfilled" ? v4.value : []), ...(v6.status === "fulfilled" ? v6.value : [])];
    if (addresses.length > 0) return addresses;
    throw v4.status === "rejected" ? v4.reason : Object.assign(new Error(`no address for ${host}`), { code: "ENOTFOUND" });
  }
}
