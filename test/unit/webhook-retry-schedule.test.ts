import { describe, expect, it } from "vitest";
import { MAX_ATTEMPTS, nextAttemptAt, retryAfterMs } from "../../src/webhooks/retry-schedule.js";

const NOW = Date.parse("2026-11-21T10:00:00Z");
const S = 1000;

describe("webhook retry schedule", () => {
  it("waits 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then gives up after the 8th attempt", () => {
    const waits = Array.from({ length: MAX_ATTEMPTS }, (_, i) => nextAttemptAt(i + 1, NOW, null)).map((at) => (at === null ? null : (at - NOW) / S));
    expect(waits).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000, null]);
  });

  it("honours a longer Retry-After, in seconds or as a date, and never a shorter one", () => {
    expect(nextAttemptAt(1, NOW, "600")).toBe(NOW + 600 * S);
    expect(nextAttemptAt(1, NOW, new Date(NOW + 120 * S).toUTCString())).toBe(NOW + 120 * S);
    expect(nextAttemptAt(2, NOW, "1")).toBe(NOW + 300 * S);
    expect(nextAttemptAt(1, NOW, "soon")).toBe(NOW + 5 * S);
  });

  it("caps Retry-After at the schedule's longest wait", () => {
    expect(nextAttemptAt(1, NOW, String(365 * 86400))).toBe(NOW + 36000 * S);
  });

  it("reads Retry-After", () => {
    expect(retryAfterMs(null, NOW)).toBeNull();
    expect(retryAfterMs(" 30 ", NOW)).toBe(30 * S);
    expect(retryAfterMs(new Date(NOW - 5000).toUTCString(), NOW)).toBe(0);
  });

  it("reads the three date forms RFC 9110 §5.6.7 has a recipient accept, all in GMT", () => {
    const inAMinute = NOW + 60 * S;
    expect(retryAfterMs("Sat, 21 Nov 2026 10:01:00 GMT", NOW)).toBe(60 * S);
    expect(retryAfterMs("Saturday, 21-Nov-26 10:01:00 GMT", NOW)).toBe(inAMinute - NOW);
    // asctime has no zone and means GMT, where a JavaScript date parse would take local time.
    expect(retryAfterMs("Sat Nov 21 10:01:00 2026", NOW)).toBe(60 * S);
    expect(retryAfterMs("Sat Nov  1 10:01:00 2026", NOW)).toBe(0);
  });

  it("takes nothing else for a date: a number with a fraction or a sign, an ISO time, a day that does not exist or another zone is unreadable", () => {
    // Date.parse reads "3600.5" as the year 3600 and "1.5" as January 5th, 2001.
    for (const value of ["3600.5", "1.5", "-30", "+30", "2026-11-21T10:01:00Z", "Sat, 31 Feb 2026 10:01:00 GMT", "Sat, 21 Nov 2026 10:01:00 +0100", "tomorrow"]) {
      expect(retryAfterMs(value, NOW), value).toBeNull();
    }
  });
});
