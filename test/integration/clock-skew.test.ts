import { afterEach, describe, expect, it } from "vitest";
import { reportClockSkew } from "../../src/maintenance.js";
import { databases } from "../helpers/databases.js";
import { createTestApp, type TestApp } from "../helpers/test-app.js";

const TEN_MINUTES = 10 * 60_000;

/** A log that keeps what it is told. */
function recordingLog() {
  const lines: Array<{ level: string; obj: object; msg: string }> = [];
  const at = (level: string) => (obj: object, msg: string) => void lines.push({ level, obj, msg });
  return { lines, info: at("info"), warn: at("warn"), error: at("error") };
}

describe.each(databases)("the clock against the database server's ($name)", (database) => {
  let t: TestApp;
  afterEach(async () => {
    await t?.close();
  });

  it(database.name === "mysql" ? "reads the database server's clock, which agrees with this machine's" : "has no database clock to read: SQLite is a file on this machine", async () => {
    t = await createTestApp(database);
    const before = Date.now();
    const serverTime = await t.runtime.repositories.serverTime();
    if (database.name === "sqlite") return expect(serverTime).toBeNull();
    expect(serverTime).toBeGreaterThan(before - 2_000);
    expect(serverTime).toBeLessThan(Date.now() + 2_000);
    expect((await t.runtime.checkClock()).verdict).toBe("ok");
  });

  it(database.name === "mysql" ? "judges a clock ten minutes ahead too far for leases, in the check, the metric and the maintenance round's log" : "never judges the clock on SQLite, whatever it reads", async () => {
    t = await createTestApp(database);
    t.clock.advance(TEN_MINUTES);
    const check = await t.runtime.checkClock();
    const metrics = (await t.call({ method: "GET", url: "/metrics", key: null })).body;
    const skew = Number(/^mailroom_clock_skew_seconds (\S+)$/m.exec(metrics)?.[1]);
    const log = recordingLog();
    await reportClockSkew(t.runtime, log);
    const clockLines = log.lines.filter((line) => line.msg.includes("clock"));
    if (database.name === "sqlite") {
      expect(check).toEqual({ skewMs: null, verdict: "ok", message: "" });
      expect(skew).toBe(0);
      expect(clockLines).toEqual([]);
      return;
    }
    expect(check.verdict).toBe("too_far");
    // The test clock stood still since the app was built (a few hundred milliseconds ago).
    expect(check.skewMs).toBeGreaterThan(TEN_MINUTES - 10_000);
    expect(check.message).toMatch(/^this machine's clock is \d{3}\.\d s ahead of the database server's, more than the 40 s that job and webhook leases tolerate/);
    expect(skew).toBeGreaterThan(590);
    expect(skew).toBeLessThan(602);
    expect(clockLines).toHaveLength(1);
    expect(clockLines[0]!.level).toBe("error");
    expect(clockLines[0]!.msg).toContain("ahead of the database server's, more than the 40 s that job and webhook leases tolerate");
  });
});
