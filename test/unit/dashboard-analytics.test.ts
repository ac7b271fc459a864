import type { MetricCounts } from "mailroom";
import { describe, expect, it } from "vitest";
import {
  ANALYTICS_RANGES,
  DEFAULT_RANGE,
  analyticsFilters,
  analyticsRange,
  bucketLabel,
  bucketTick,
  countTicks,
  coveredRange,
  hasNoMail,
  labelledBuckets,
  metricsQuery,
} from "../../dashboard/src/lib/analytics.js";
import { formatPercent } from "../../dashboard/src/lib/format.js";

/** The analytics page's helpers (dashboard/src/lib/analytics.ts, formatPercent in format.ts). */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe("the range select", () => {
  it("offers the last 24 hours by hour, and 7, 30 and 90 days by day", () => {
    expect(ANALYTICS_RANGES.map(({ id, granularity, buckets }) => [id, granularity, buckets])).toEqual([
      ["24h", "hour", 24],
      ["7d", "day", 7],
      ["30d", "day", 30],
      ["90d", "day", 90],
    ]);
    expect(DEFAULT_RANGE.id).toBe("7d");
  });

  it("reads ?range=, and anything it does not know as the default", () => {
    expect(analyticsRange("24h").label).toBe("Last 24 hours");
    expect(analyticsRange("90d").label).toBe("Last 90 days");
    for (const value of [null, "", "1y", "7D"]) expect(analyticsRange(value)).toBe(DEFAULT_RANGE);
  });

  it("reads the tag and template filters, trimmed, and leaves out empty ones", () => {
    expect(analyticsFilters(new URLSearchParams("range=30d&tag=%20welcome%20&template=onboarding"))).toEqual({
      range: analyticsRange("30d"),
      tag: "welcome",
      template: "onboarding",
    });
    expect(analyticsFilters(new URLSearchParams("tag=&template=%20"))).toEqual({ range: DEFAULT_RANGE });
  });
});

describe("getMetrics' query", () => {
  const now = new Date("2026-11-21T14:35:12.345Z");

  it("asks for the last 7 UTC days, today included, to the end of today", () => {
    expect(metricsQuery({ range: DEFAULT_RANGE }, now)).toEqual({ from: "2026-11-15T00:00:00.000Z", to: "2026-11-22T00:00:00.000Z", granularity: "day" });
  });

  it("asks for the last 24 UTC hours, the one under way included", () => {
    expect(metricsQuery({ range: analyticsRange("24h") }, now)).toEqual({ from: "2026-11-20T15:00:00.000Z", to: "2026-11-21T15:00:00.000Z", granularity: "hour" });
  });

  it("covers exactly the range's buckets, even on a boundary", () => {
    for (const range of ANALYTICS_RANGES) {
      for (const at of [now, new Date("2026-11-21T00:00:00.000Z"), new Date("2026-11-21T23:59:59.999Z")]) {
        const query = metricsQuery({ range }, at);
        const size = range.granularity === "day" ? DAY : HOUR;
        expect((Date.parse(query.to!) - Date.parse(query.from!)) / size).toBe(range.buckets);
        expect(Date.parse(query.from!) % size).toBe(0);
        expect(Date.parse(query.to!)).toBeGreaterThan(at.getTime());
        expect(Date.parse(query.to!) - size).toBeLessThanOrEqual(at.getTime());
      }
    }
  });

  it("passes the tag and template filters on", () => {
    expect(metricsQuery({ range: analyticsRange("90d"), tag: "welcome", template: "onboarding" }, now)).toEqual({
      from: "2026-08-24T00:00:00.000Z",
      to: "2026-11-22T00:00:00.000Z",
      granularity: "day",
      tag: "welcome",
      template: "onboarding",
    });
  });
});

describe("rates", () => {
  it("shows a rate as a percentage with one decimal, and null as a dash", () => {
    expect(formatPercent(0.6667)).toBe("66.7%");
    expect(formatPercent(0.5)).toBe("50.0%");
    expect(formatPercent(0)).toBe("0.0%");
    expect(formatPercent(1)).toBe("100.0%");
    // Opens of mail delivered before a short range can exceed its deliveries.
    expect(formatPercent(1.25)).toBe("125.0%");
    expect(formatPercent(null)).toBe("—");
  });
});

describe("the empty state", () => {
  const zero: MetricCounts = {
    accepted: 0,
    delivered: 0,
    deferred: 0,
    bounced: 0,
    hard_bounced: 0,
    soft_bounced: 0,
    failed: 0,
    suppressed: 0,
    canceled: 0,
    opened: 0,
    unique_opened: 0,
    machine_opened: 0,
    clicked: 0,
    unique_clicked: 0,
    machine_clicked: 0,
    complained: 0,
    unsubscribed: 0,
    replied: 0,
    delivery_rate: null,
    bounce_rate: null,
    complaint_rate: null,
    open_rate: null,
    click_rate: null,
  };

  it("is shown when every count is zero, and only then", () => {
    expect(hasNoMail(zero)).toBe(true);
    for (const name of Object.keys(zero).filter((key) => !key.endsWith("_rate"))) {
      expect(hasNoMail({ ...zero, [name]: 1 }), name).toBe(false);
    }
  });
});

describe("buckets in words (UTC)", () => {
  it("names a day by its UTC date and an hour by its UTC time, whatever the time zone", () => {
    const utc = (options: Intl.DateTimeFormatOptions, iso: string) => new Intl.DateTimeFormat(undefined, { ...options, timeZone: "UTC" }).format(new Date(iso));
    expect(bucketLabel("2026-11-21T00:00:00.000Z", "day")).toBe(utc({ weekday: "short", day: "numeric", month: "short" }, "2026-11-21T12:00:00Z"));
    expect(bucketTick("2026-11-21T00:00:00.000Z", "day")).toBe(utc({ day: "numeric", month: "short" }, "2026-11-21T12:00:00Z"));
    expect(bucketTick("2026-11-21T00:00:00.000Z", "hour")).toMatch(/^00.00$/);
    expect(bucketTick("2026-11-21T14:00:00.000Z", "hour")).toMatch(/^14.00$/);
    expect(bucketLabel("2026-11-21T14:00:00.000Z", "hour")).toMatch(/14.00$/);
  });

  it("says the range covered: first and last day, or first hour's start and last hour's end", () => {
    const days = coveredRange({ from: "2026-11-15T00:00:00.000Z", to: "2026-11-22T00:00:00.000Z", granularity: "day" });
    expect(days).toBe(`${bucketLabel("2026-11-15T00:00:00.000Z", "day")} – ${bucketLabel("2026-11-21T00:00:00.000Z", "day")}`);
    const hours = coveredRange({ from: "2026-11-20T15:00:00.000Z", to: "2026-11-21T15:00:00.000Z", granularity: "hour" });
    expect(hours).toBe(`${bucketLabel("2026-11-20T15:00:00.000Z", "hour")} – ${bucketLabel("2026-11-21T15:00:00.000Z", "hour")}`);
  });
});

describe("the chart's axes", () => {
  it.each([
    [0, [0, 1]],
    [1, [0, 1]],
    [2, [0, 1, 2]],
    [4, [0, 1, 2, 3, 4]],
    [7, [0, 2, 4, 6, 8]],
    [9, [0, 5, 10]],
    [100, [0, 50, 100]],
    [1234, [0, 500, 1000, 1500]],
  ])("counts up to %i in whole steps: %j", (highest, ticks) => {
    expect(countTicks(highest)).toEqual(ticks);
  });

  it("names the last bucket and every n-th before it, about 8 at most", () => {
    expect(labelledBuckets(7)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(labelledBuckets(24)).toEqual([2, 5, 8, 11, 14, 17, 20, 23]);
    expect(labelledBuckets(90)).toEqual([5, 17, 29, 41, 53, 65, 77, 89]);
    expect(labelledBuckets(0)).toEqual([]);
  });
});
