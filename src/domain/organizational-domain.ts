import { getDomain } from "tldts";

/**
 * The organisational domain of a host name (RFC 7489 §3.2): its registrable domain by the
 * Public Suffix List, private suffixes included (two customers of one hosting suffix are two
 * organisations). A name with none (a bare suffix, `localhost`) is its own.
 */
export function organizationalDomain(name: string): string {
  const lower = name.toLowerCase().replace(/\.$/, "");
  return getDomain(lower, { allowPrivateDomains: true }) ?? lower;
}

/** DMARC's relaxed alignment: the two names belong to one organisational domain. */
export function sameOrganization(a: string, b: string): boolean {
  return organizationalDomain(a) === organizationalDomain(b);
}
