import type { Clock } from "../domain/clock.js";
import type { Principal } from "../domain/environments.js";
import { fixedWindow } from "../domain/fixed-window.js";
import type { ApiKeysRepository } from "../db/repositories/api-keys.js";
import type { RateLimitsRepository } from "../db/repositories/rate-limits.js";
import type { GroupCommit } from "../db/group-commit.js";

export interface RateLimitPolicy {
  requests: number;
  windowSeconds: number;
}

export interface RateLimitState {
  allowed: boolean;
  limit: number;
  remaining: number;
  windowSeconds: number;
  resetSeconds: number;
}

/**
 * Fixed-window request quotas per credential (API key or user access token), counted in the database so every node shares them
 * (DESIGN.md §4). The count and the key's last-use stamp ride in the same group commit.
 */
export class RateLimiter {
  constructor(
    private readonly policy: RateLimitPolicy,
    private readonly counters: RateLimitsRepository,
    private readonly apiKeys: ApiKeysRepository,
    private readonly groupCommit: GroupCommit,
    private readonly clock: Clock,
  ) {}

  /** Counts a request of the principal's credential, made from `ip` (stamped on an API key as its last use). */
  async hit(principal: Principal, ip: string | null = null): Promise<RateLimitState> {
    const now = this.clock.now();
    const window = fixedWindow(now, this.policy.windowSeconds * 1000);
    const { credential } = principal;
    // A person's quota follows them across the short-lived tokens they renew.
    const subject = credential.kind === "api_key" ? credential.id : credential.userId;
    const bucket = `${credential.kind}:${subject}:${window.start}`;
    const [position] = await Promise.all([
      this.groupCommit.submit(this.counters.hitWriter, { bucket, expiresAt: window.end }),
      // last_used_at is an API key's; a user token lives minutes and is not listed anywhere.
      credential.kind === "api_key" ? this.groupCommit.submit(this.apiKeys.touchWriter, { keyId: credential.id, now, ip }) : undefined,
    ]);
    return {
      allowed: position <= this.policy.requests,
      limit: this.policy.requests,
      remaining: Math.max(0, this.policy.requests - position),
      windowSeconds: this.policy.windowSeconds,
      resetSeconds: window.retryAfterSeconds,
    };
  }

  async prune(): Promise<number> {
    return this.counters.pruneExpired(this.clock.now());
  }
}
