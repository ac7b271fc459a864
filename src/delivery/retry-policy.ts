/**
 * When a deferred recipient is tried again (DESIGN.md §9), Postfix-like: the first retry after
 * `minSeconds`, each later one after twice the previous wait, never more than `maxSeconds`
 * (with the defaults 300, 600, 1200, 2400, 4000, 4000, ... seconds), until the message's
 * lifetime is over.
 */
export interface RetrySchedule {
  minSeconds: number;
  maxSeconds: number;
}

/**
 * Up to this share of a wait is taken off at random. A destination that was down defers
 * hundreds of messages within seconds; without jitter they would all come back in the same
 * second, attempt after attempt. Taken off rather than added, so that `maxSeconds` stays the
 * longest wait.
 */
export const RETRY_JITTER = 0.1;

/**
 * Seconds to wait after failed attempt number `attempt` (1 = the first attempt failed).
 * `random` is injectable so tests can pin the jitter; it returns a number in [0, 1).
 */
export function retryDelaySeconds(attempt: number, schedule: RetrySchedule, random: () => number = Math.random): number {
  const { minSeconds, maxSeconds } = schedule;
  const doublings = Math.max(0, Math.floor(attempt) - 1);
  // Capping the exponent keeps 2 ** n finite (and 0 * 2 ** n a number) for any attempt count.
  const base = Math.min(maxSeconds, minSeconds * 2 ** Math.min(doublings, 52));
  return Math.round(base * (1 - RETRY_JITTER * random()));
}

/** The message's lifetime is over: it fails instead of being retried (4.4.7). */
export function hasExpired(now: number, expiresAt: number): boolean {
  return now >= expiresAt;
}

/**
 * When retrying stops: the configured lifetime after the message is due (its scheduled time, else
 * its acceptance), or the message's own `expires_at` when that is sooner (a shorter per-message
 * expiry is allowed, never a longer one).
 */
export function deliveryDeadline(dueAt: number, lifetimeSeconds: number, messageExpiresAt: number | null = null): number {
  const deadline = dueAt + lifetimeSeconds * 1000;
  return messageExpiresAt === null ? deadline : Math.min(deadline, messageExpiresAt);
}
