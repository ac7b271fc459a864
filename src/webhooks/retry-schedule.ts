import { parseHttpDate } from "../domain/http-date.js";

/**
 * When a failed webhook delivery is tried again (DESIGN.md §10): after attempt n fails, wait
 * RETRY_DELAYS_MS[n - 1]; after the 8th attempt the delivery has failed. The same schedule as
 * Svix and the Standard Webhooks reference: about 27.6 hours in all.
 */
export const RETRY_DELAYS_MS = [5, 300, 1800, 7200, 18000, 36000, 36000].map((seconds) => seconds * 1000);
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** An endpoint whose every attempt has failed for this long is disabled (reason `failing`). */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * 3600 * 1000;

/** The longest Retry-After honoured: a receiver cannot park a delivery beyond the schedule's longest wait. */
const MAX_RETRY_AFTER_MS = Math.max(...RETRY_DELAYS_MS);

/**
 * When attempt `attempt` (1-based) having failed at `now`, the next one is due: the later of the
 * schedule and the receiver's Retry-After (RFC 9110 §10.2.3: seconds or an HTTP date). Null when
 * the retries are used up.
 */
export function nextAttemptAt(attempt: number, now: number, retryAfter: string | null): number | null {
  if (attempt >= MAX_ATTEMPTS) return null;
  const scheduled = now + RETRY_DELAYS_MS[attempt - 1]!;
  const asked = retryAfterMs(retryAfter, now);
  return asked === null ? scheduled : Math.max(scheduled, now + Math.min(asked, MAX_RETRY_AFTER_MS));
}

/** A Retry-After value as milliseconds from `now`, or null when absent or unreadable. */
export function retryAfterMs(value: string | null, now: number): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = parseHttpDate(trimmed, now);
  return date === null ? null : Math.max(0, date - now);
}
