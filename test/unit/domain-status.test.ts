import { describe, expect, it } from "vitest";
import { afterCheck, nextCheckAt, sendsLive, type DomainHealth } from "../../src/domain/domain-status.js";

const HOUR = 3_600_000;
const POLICY = { recheckMs: 6 * HOUR, graceMs: 72 * HOUR };
const NOW = Date.UTC(2026, 10, 22, 12);
/** What a check found of the required records: all of them by its own answers, all counting those kept from before, or not all. */
const FRESH = { requiredFound: true, freshlyVerified: true };
const KEPT = { requiredFound: true, freshlyVerified: false };
const MISSING = { requiredFound: false, freshlyVerified: false };

describe("afterCheck", () => {
  it.each<DomainHealth>([
    { status: "pending", failing_since: null },
    { status: "verified", failing_since: null },
    { status: "temporary_failure", failing_since: NOW - HOUR },
    { status: "failed", failing_since: NOW - 100 * HOUR },
  ])("verifies a $status domain whose required records were all found, forgetting any failure", (previous) => {
    expect(afterCheck(previous, FRESH, NOW, POLICY)).toEqual({ status: "verified", failing_since: null });
  });

  it("leaves a pending or failed domain as it was when records are missing", () => {
    expect(afterCheck({ status: "pending", failing_since: null }, MISSING, NOW, POLICY)).toEqual({ status: "pending", failing_since: null });
    expect(afterCheck({ status: "failed", failing_since: NOW - 80 * HOUR }, MISSING, NOW, POLICY)).toEqual({ status: "failed", failing_since: NOW - 80 * HOUR });
  });

  it("moves a pending or failed domain to verified only when this check found every required record by its own answers", () => {
    expect(afterCheck({ status: "pending", failing_since: null }, KEPT, NOW, POLICY)).toEqual({ status: "pending", failing_since: null });
    expect(afterCheck({ status: "failed", failing_since: NOW - 80 * HOUR }, KEPT, NOW, POLICY)).toEqual({ status: "failed", failing_since: NOW - 80 * HOUR });
    // A domain in service stays (or goes back) in service through a record kept over a DNS hiccup.
    expect(afterCheck({ status: "verified", failing_since: null }, KEPT, NOW, POLICY)).toEqual({ status: "verified", failing_since: null });
    expect(afterCheck({ status: "temporary_failure", failing_since: NOW - HOUR }, KEPT, NOW, POLICY)).toEqual({ status: "verified", failing_since: null });
  });

  it("starts the grace period when a verified domain first misses a record, and keeps its start", () => {
    const first = afterCheck({ status: "verified", failing_since: null }, MISSING, NOW, POLICY);
    expect(first).toEqual({ status: "temporary_failure", failing_since: NOW });
    expect(afterCheck(first, MISSING, NOW + 71 * HOUR, POLICY)).toEqual({ status: "temporary_failure", failing_since: NOW });
  });

  it("fails the domain at the first check at or past the grace period's end", () => {
    const failing = { status: "temporary_failure" as const, failing_since: NOW };
    expect(afterCheck(failing, MISSING, NOW + 72 * HOUR - 1, POLICY).status).toBe("temporary_failure");
    expect(afterCheck(failing, MISSING, NOW + 72 * HOUR, POLICY)).toEqual({ status: "failed", failing_since: NOW });
    expect(afterCheck({ status: "verified", failing_since: null }, MISSING, NOW, { ...POLICY, graceMs: 0 })).toEqual({ status: "failed", failing_since: NOW });
  });
});

describe("nextCheckAt", () => {
  it("rechecks verified domains after the interval, failing ones within the hour, and no others", () => {
    expect(nextCheckAt("verified", NOW, POLICY)).toBe(NOW + 6 * HOUR);
    expect(nextCheckAt("temporary_failure", NOW, POLICY)).toBe(NOW + HOUR);
    expect(nextCheckAt("temporary_failure", NOW, { ...POLICY, recheckMs: 10 * 60_000 })).toBe(NOW + 10 * 60_000);
    expect(nextCheckAt("pending", NOW, POLICY)).toBeNull();
    expect(nextCheckAt("failed", NOW, POLICY)).toBeNull();
  });

  it("never schedules a check when automatic checks are off", () => {
    for (const status of ["pending", "verified", "temporary_failure", "failed"] as const) expect(nextCheckAt(status, NOW, { ...POLICY, recheckMs: 0 })).toBeNull();
  });
});

describe("sendsLive", () => {
  it("lets verified domains and those in their grace period send live mail", () => {
    const failing_since = NOW - HOUR;
    expect(["pending", "verified", "temporary_failure", "failed"].filter((status) => sendsLive({ status: status as never, failing_since }, NOW, POLICY))).toEqual(["verified", "temporary_failure"]);
  });

  it("stops a temporary_failure domain at the end of its grace period, whether or not a check has failed it yet", () => {
    const failing = { status: "temporary_failure" as const, failing_since: NOW };
    expect(sendsLive(failing, NOW + 72 * HOUR - 1, POLICY)).toBe(true);
    expect(sendsLive(failing, NOW + 72 * HOUR, POLICY)).toBe(false);
    expect(sendsLive(failing, NOW, { ...POLICY, graceMs: 0 })).toBe(false);
  });
});
