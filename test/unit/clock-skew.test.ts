import { describe, expect, it } from "vitest";
import { checkClockSkew, clockBoundsFor, clockSkewLimitMs, measureClockSkew } from "../../src/clock-skew.js";
import { loadConfig } from "../../src/config.js";
import { ManualClock } from "../../src/domain/clock.js";

const DEFAULTS = loadConfig({});
const LEASES = clockBoundsFor(DEFAULTS, new Set(["worker"])); // JOB_LEASE_SECONDS, WEBHOOK_LEASE_SECONDS defaults: 120, 300

/** A database server whose clock reads `offsetMs` from the local clock, answering after `roundTripMs`. */
function server(clock: ManualClock, offsetMs: number, roundTripMs = 0) {
  return async () => {
    clock.advance(roundTripMs / 2);
    const time = clock.now() + offsetMs;
    clock.advance(roundTripMs / 2);
    return time;
  };
}

describe("measureClockSkew", () => {
  it("measures against the middle of the round trip, so a slow query is no offset", async () => {
    const clock = new ManualClock(1_000_000);
    expect(await measureClockSkew(clock, server(clock, 0, 800))).toBe(0);
    expect(await measureClockSkew(clock, server(clock, -5_000, 800))).toBe(5_000);
    expect(await measureClockSkew(clock, server(clock, 3_000, 20))).toBe(-3_000);
  });

  it("is null where the database has no clock of its own (SQLite)", async () => {
    expect(await measureClockSkew(new ManualClock(), async () => null)).toBeNull();
  });
});

describe("checkClockSkew", () => {
  it("tolerates a third of the shortest lease", () => {
    expect(clockSkewLimitMs([120, 300])).toBe(40_000);
    expect(clockSkewLimitMs([600, 30])).toBe(10_000);
  });

  it("says nothing within two seconds, or without a database clock", async () => {
    const clock = new ManualClock();
    expect(await checkClockSkew(clock, server(clock, 1_900), LEASES)).toEqual({ skewMs: -1_900, verdict: "ok", message: "" });
    expect(await checkClockSkew(clock, async () => null, LEASES)).toEqual({ skewMs: null, verdict: "ok", message: "" });
  });

  it("warns beyond two seconds, naming the direction and the fix", async () => {
    const clock = new ManualClock();
    const check = await checkClockSkew(clock, server(clock, -12_300), LEASES);
    expect(check.verdict).toBe("warning");
    expect(check.message).toBe("this machine's clock is 12.3 s ahead of the database server's: synchronise both with NTP (docs/scaling.md#clocks)");
  });

  it("refuses beyond what leases tolerate, saying what could go wrong", async () => {
    const clock = new ManualClock();
    const check = await checkClockSkew(clock, server(clock, 45_000), LEASES);
    expect(check.verdict).toBe("too_far");
    expect(check.message).toContain("this machine's clock is 45.0 s behind the database server's, more than the 40 s that job and webhook leases tolerate");
    expect(check.message).toContain("send mail twice");
  });

  it("refuses an offset under two seconds when the shortest lease tolerates less (JOB_LEASE_SECONDS=5: a third is 1.7 s)", async () => {
    const short = clockBoundsFor(loadConfig({ JOB_LEASE_SECONDS: "5" }), new Set(["worker"]));
    const clock = new ManualClock();
    expect((await checkClockSkew(clock, server(clock, 1_500), short)).verdict).toBe("ok");
    const check = await checkClockSkew(clock, server(clock, -1_900), short);
    expect(check.verdict).toBe("too_far");
    expect(check.message).toContain("this machine's clock is 1.9 s ahead of the database server's, more than the 1.7 s that job and webhook leases tolerate");
  });

  it("judges an API node by a third of IDEMPOTENCY_LOCK_SECONDS, which a node ahead would take over while the request still runs", async () => {
    const clock = new ManualClock();
    const api = clockBoundsFor(DEFAULTS, new Set(["api"]));
    expect((await checkClockSkew(clock, server(clock, -15_000), api)).verdict).toBe("warning");
    const check = await checkClockSkew(clock, server(clock, -25_000), api);
    expect(check.verdict).toBe("too_far");
    expect(check.message).toContain("25.0 s ahead of the database server's, more than the 20 s that Idempotency-Key locks tolerate (a third of IDEMPOTENCY_LOCK_SECONDS)");
    // Every role at once: the tightest of the bounds, here the lock's 20 s before the leases' 40 s.
    expect((await checkClockSkew(clock, server(clock, -25_000), clockBoundsFor(DEFAULTS, new Set(["api", "worker", "smtp", "submission"])))).message).toContain("IDEMPOTENCY_LOCK_SECONDS");
  });

  it("only warns a node whose roles hold no lease (smtp, submission): its clock moves no one's lock", async () => {
    const clock = new ManualClock();
    const bounds = clockBoundsFor(DEFAULTS, new Set(["smtp", "submission"]));
    expect(bounds).toEqual([]);
    expect((await checkClockSkew(clock, server(clock, 1_900), bounds)).verdict).toBe("ok");
    expect(await checkClockSkew(clock, server(clock, 600_000), bounds)).toMatchObject({ verdict: "warning", message: "this machine's clock is 600.0 s behind the database server's: synchronise both with NTP (docs/scaling.md#clocks)" });
  });
});
