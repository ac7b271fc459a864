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
});
