import { createHash } from "node:crypto";
import type { Clock } from "../domain/clock.js";
import { TooManyAttemptsError } from "../domain/errors.js";
import type { RateLimitsRepository } from "../db/repositories/rate-limits.js";

/**
 * Slows password guessing (OWASP Authentication Cheat Sheet): failed sign-ins are counted per
 * address and per client address in fixed windows, in the database so every node shares them.
 * Counting per address stops guessing one account; per client stops spraying many accounts.
 */
export const SIGN_IN_POLICY = { failuresPerAddress: 5, failuresPerClient: 20, windowMs: 15 * 60 * 1000 } as const;

export class SignInThrottle {
  constructor(
    private readonly counters: RateLimitsRepository,
    private readonly clock: Clock,
  ) {}

  /** Throws TooManyAttemptsError when either counter is spent; called before the password check. */
  async check(email: string, client: string): Promise<void> {
    const { now, windowEnd, address, origin } = this.buckets(email, client);
    const [byAddress, byClient] = await Promise.all([this.counters.count(address, now), this.counters.count(origin, now)]);
    if (byAddress >= SIGN_IN_POLICY.failuresPerAddress || byClient >= SIGN_IN_POLICY.failuresPerClient) {
      throw new TooManyAttemptsError(Math.max(1, Math.ceil((windowEnd - now) / 1000)));
    }
  }

  async recordFailure(email: string, client: string): Promise<void> {
    const { windowEnd, address, origin } = this.buckets(email, client);
    await this.counters.increment(address, windowEnd);
    await this.counters.increment(origin, windowEnd);
  }

  /** A successful sign-in clears the address's failures (not the client's: a sprayer may succeed once). */
  async reset(email: string): Promise<void> {
    await this.counters.reset(this.buckets(email, "").address);
  }

  private buckets(email: string, client: string) {
    const now = this.clock.now();
    const windowStart = Math.floor(now / SIGN_IN_POLICY.windowMs) * SIGN_IN_POLICY.windowMs;
    // The address is hashed so that the counters table holds no email addresses.
    const addressDigest = createHash("sha256").update(email).digest("hex").slice(0, 32);
    return {
      now,
      windowEnd: windowStart + SIGN_IN_POLICY.windowMs,
      address: `sign-in:address:${addressDigest}:${windowStart}`,
      origin: `sign-in:client:${client}:${windowStart}`.slice(0, 120),
    };
  }
}
