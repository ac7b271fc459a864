import { describe, expect, it } from "vitest";
import { afterCheck, nextCheckAt, sendsLive, type DomainHealth } from "../../src/domain/domain-status.js";

const HOUR = 3_600_000;
const POLICY = { recheckMs: 6 * HOUR, graceMs: 72 * HOUR };
const NOW = Date.UTC(2026, 10, 22, 12);

describe("afterCheck", () => {
  it.each<DomainHealth>([
    { status: "pending", failing_since: null },
    { status: "verified", failing_since: null },
    { status: "temporary_failure", failing_since: NOW - HOUR },
    { status: "failed", failing_since: NOW - 100 * HOUR },
  ])("verifies a $status domain whose required records were all found, forgetting any failure", (previous) => {
    expect(afterCheck(previous, true, NOW, POLICY)).toEqual({ status: "verified", failing_since: null });
  });

  it("leaves a pending or failed domain as it was when records are missing", () => {
    expect(afterCheck({ status: "pending", failing_since: null }, false, NOW, POLICY)).toEqual({ status: "pending", failing_since: null });
    expect(afterCheck({ status: "failed", failing_since: NOW - 80 * HOUR }, false, NOW, POLICY)).toEqual({ status: "failed", failing_since: NOW - 80 * HOUR });
  });

  it("starts the grace period when a verified domain first misses a record, and keeps its start", () => {
    const first = afterCheck({ status: "verified", failing_since: null }, false, NOW, POLICY);
    expect(first).toEqual({ status: "temporary_failure", failing_since: NOW });
    expect(afterCheck(first, false, NOW + 71 * HOUR, POLICY)).toEqual({ status: "temporary_failure", failing_since: NOW });
  });

  it("fails the domain at the first check at or past the grace period's end", () => {
    const failing = { status: "temporary_failure" as const, failing_since: NOW };
    expect(afterCheck(failing, false, NOW + 72 * HOUR - 1, POLICY).status).toBe("temporary_failure");
    expect(afterCheck(failing, false, NOW + 72 * HOUR, POLICY)).toEqual({ status: "failed", failing_since: NOW });
    expect(afterCheck({ status: "verified", failing_since: null }, false, NOW, { ...POLICY, graceMs: 0 })).toEqual({ status: "failed", failing_since: NOW });
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
    expect(["pending", "verified", "temporary_failure", "failed"].filter((s) => sendsLive(s as never))).toEqual(["verified", "temporary_failure"]);
  });
});
