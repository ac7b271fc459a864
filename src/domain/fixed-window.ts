/**
 * The fixed counting window `now` falls in, as the database counters use them (rate limits,
 * sign-in throttle, token exchanges): its start (the counter's bucket suffix), its end (when the
 * counter expires), and the Retry-After for a caller refused in it (at least 1 s).
 */
export function fixedWindow(now: number, windowMs: number): { start: number; end: number; retryAfterSeconds: number } {
  const start = Math.floor(now / windowMs) * windowMs;
  const end = start + windowMs;
  return { start, end, retryAfterSeconds: Math.max(1, Math.ceil((end - now) / 1000)) };
}
