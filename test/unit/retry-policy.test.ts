import { describe, expect, it } from "vitest";
import { deliveryDeadline, hasExpired, RETRY_JITTER, retryDelaySeconds } from "../../src/delivery/retry-policy.js";

const schedule = { minSeconds: 300, maxSeconds: 4000 };
const noJitter = () => 0;

describe("retryDelaySeconds", () => {
  it("starts at the minimum and doubles up to the maximum, Postfix-like", () => {
    const delays = [1, 2, 3, 4, 5, 6, 7, 20].map((attempt) => retryDelaySeconds(attempt, schedule, noJitter));
    expect(delays).toEqual([300, 600, 1200, 2400, 4000, 4000, 4000, 4000]);
  });

  it("takes at most 10% off at random, never adds", () => {
    expect(retryDelaySeconds(1, schedule, () => 0.999999)).toBe(Math.round(300 * (1 - RETRY_JITTER * 0.999999)));
    for (let i = 0; i < 200; i++) {
      const delay = retryDelaySeconds(5, schedule);
      expect(delay).toBeGreaterThanOrEqual(3600);
      expect(delay).toBeLessThanOrEqual(4000);
    }
  });

  it("spreads a backlog deferred at the same moment over its retry window", () => {
    const delays = new Set(Array.from({ length: 100 }, () => retryDelaySeconds(3, schedule)));
    expect(delays.size).toBeGreaterThan(20);
  });

  it("copes with odd input: attempt 0, huge attempts, a zero minimum", () => {
    expect(retryDelaySeconds(0, schedule, noJitter)).toBe(300);
    expect(retryDelaySeconds(10_000, schedule, noJitter)).toBe(4000);
    expect(retryDelaySeconds(10_000, { minSeconds: 0, maxSeconds: 0 }, noJitter)).toBe(0);
  });
});

describe("hasExpired / deliveryDeadline", () => {
  const queuedAt = Date.UTC(2025, 0, 1);
  it("expires at the deadline, not before", () => {
    const deadline = deliveryDeadline(queuedAt, 5 * 86400);
    expect(deadline).toBe(queuedAt + 5 * 86400 * 1000);
    expect(hasExpired(deadline - 1, deadline)).toBe(false);
    expect(hasExpired(deadline, deadline)).toBe(true);
  });

  it("lets a message's own expiry shorten the lifetime, never lengthen it", () => {
    expect(deliveryDeadline(queuedAt, 5 * 86400, queuedAt + 3600_000)).toBe(queuedAt + 3600_000);
    expect(deliveryDeadline(queuedAt, 3600, queuedAt + 86400_000)).toBe(queuedAt + 3600_000);
  });
});
