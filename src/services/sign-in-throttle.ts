import { createHash } from "node:crypto";
import { isIP } from "node:net";
import type { Clock } from "../domain/clock.js";
import { TooManyAttemptsError } from "../domain/errors.js";
import { fixedWindow } from "../domain/fixed-window.js";
import type { RateLimitsRepository } from "../db/repositories/rate-limits.js";

/**
 * Slows password guessing (OWASP Authentication Cheat Sheet): attempts are counted per address
 * and per client address in fixed windows, in the database so every node shares them. Counting
 * per address stops guessing one account; per client stops spraying many accounts.
 *
 * An attempt is counted before its password is checked, not after it failed: scrypt takes 0.3 s,
 * and any number of simultaneous guesses used to pass the check before the first failure was
 * recorded. A success then gives its attempt back, so that in effect only failures count:
 * - the address's counter is cleared, as before (a right password ends a run of wrong ones);
 * - the client's loses just this attempt, not its other failures (a sprayer may succeed once).
 *   People signing in one after another behind one NAT thus use up nothing; only attempts still
 *   in flight count, so more than 20 sign-ins from one client at the same moment are refused.
 *
 * A client is its IPv4 address, or its IPv6 /64 (clientBucket): one subscriber or host is given a
 * whole /64 and can pick a fresh address from it for every attempt.
 */
export const SIGN_IN_POLICY = { failuresPerAddress: 5, failuresPerClient: 20, windowMs: 15 * 60 * 1000 } as const;

/** The counters an attempt was counted in, to give back if it succeeds. */
export interface Reservation {
  address: string | null;
  client: string | null;
}

export class SignInThrottle {
  constructor(
    private readonly counters: RateLimitsRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * Counts one attempt for the address and/or the client, before the password is checked. When
   * either is spent it throws TooManyAttemptsError and counts nothing, so refused attempts do not
   * use up the other counter (guesses at one locked address must not lock out its client).
   */
  async reserve(attempt: { email?: string; client?: string }): Promise<Reservation> {
    const now = this.clock.now();
    const window = fixedWindow(now, SIGN_IN_POLICY.windowMs);
    // The address is hashed so that the counters table holds no email addresses.
    const address = attempt.email === undefined ? null : `sign-in:address:${createHash("sha256").update(attempt.email).digest("hex").slice(0, 32)}:${window.start}`;
    const client = attempt.client === undefined ? null : `sign-in:client:${clientBucket(attempt.client)}:${window.start}`.slice(0, 120);
    // Address before client, always: two transactions that lock both rows lock them in one order.
    const counters = [
      ...(address === null ? [] : [{ bucket: address, limit: SIGN_IN_POLICY.failuresPerAddress }]),
      ...(client === null ? [] : [{ bucket: client, limit: SIGN_IN_POLICY.failuresPerClient }]),
    ];
    if (!(await this.counters.incrementWithinLimits(counters, window.end))) throw new TooManyAttemptsError(window.retryAfterSeconds);
    return { address, client };
  }

  /** The attempt succeeded: clears the address's count and takes this attempt off the client's. */
  async succeeded(reservation: Reservation): Promise<void> {
    if (reservation.address !== null) await this.counters.reset(reservation.address);
    if (reservation.client !== null) await this.counters.decrement(reservation.client);
  }
}

/**
 * The client a network address counts as: an IPv4 address as it is (also when a dual-stack socket
 * reports it IPv4-mapped, ::ffff:a.b.c.d), an IPv6 address by its /64 (RFC 6177: the block one
 * site is given, whose 2^64 addresses one attacker holds together), anything else as it is.
 */
export function clientBucket(address: string): string {
  const bare = address.replace(/%.*$/, ""); // a link-local address's zone names our interface, not the client
  if (isIP(bare) !== 6) return address;
  const groups = ipv6Groups(bare);
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    const [high = 0, low = 0] = groups.slice(6);
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join(".");
  }
  return `${groups.slice(0, 4).map((group) => group.toString(16)).join(":")}::/64`;
}

/** The eight 16-bit groups of an address that isIP has accepted as IPv6. */
function ipv6Groups(address: string): number[] {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((group) => parseInt(group, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}
