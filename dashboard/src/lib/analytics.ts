import type { GetMetricsParams, MetricCounts, Metrics } from "mailroom";

export type Granularity = Metrics["granularity"];

/**
 * The ranges the analytics page offers, each a whole number of UTC buckets ending with the one
 * under way: the last 24 hours by hour, the rest by day. `id` is its value in the query string
 * (`?range=24h`); the default has none, so the page's plain address shows it.
 */
export const ANALYTICS_RANGES = [
  { id: "24h", label: "Last 24 hours", granularity: "hour", buckets: 24 },
  { id: "7d", label: "Last 7 days", granularity: "day", buckets: 7 },
  { id: "30d", label: "Last 30 days", granularity: "day", buckets: 30 },
  { id: "90d", label: "Last 90 days", granularity: "day", buckets: 90 },
] as const satisfies ReadonlyArray<{ id: string; label: string; granularity: Granularity; buckets: number }>;

export type AnalyticsRange = (typeof ANALYTICS_RANGES)[number];

export const DEFAULT_RANGE: AnalyticsRange = ANALYTICS_RANGES[1];

const BUCKET_MS: Record<Granularity, number> = { hour: 3_600_000, day: 86_400_000 };

/** The range a `?range=` value names; anything else (none, an old link's) is the default. */
export function analyticsRange(value: string | null): AnalyticsRange {
  return ANALYTICS_RANGES.find((range) => range.id === value) ?? DEFAULT_RANGE;
}

export interface AnalyticsFilters {
  range: AnalyticsRange;
  /** A message tag, as the message log filters by it. */
  tag?: string;
  /** A template's slug. */
  template?: string;
}

/** The page's filters from its query string (`?range=&tag=&template=`). */
export function analyticsFilters(params: URLSearchParams): AnalyticsFilters {
  const tag = params.get("tag")?.trim();
  const template = params.get("template")?.trim();
  return { range: analyticsRange(params.get("range")), ...(tag ? { tag } : {}), ...(template ? { template } : {}) };
}

/**
 * getMetrics' query for the filters at `now`: the range's buckets, the last one the bucket `now`
 * is in, so the figures include what happened a moment ago. Both ends are bucket boundaries,
 * which the server keeps as they are (it rounds `from` down and `to` up).
 */
export function metricsQuery(filters: AnalyticsFilters, now = new Date()): GetMetricsParams {
  const { granularity, buckets } = filters.range;
  const size = BUCKET_MS[granularity];
  const end = (Math.floor(now.getTime() / size) + 1) * size;
  return {
    from: new Date(end - buckets * size).toISOString(),
    to: new Date(end).toISOString(),
    granularity,
    ...(filters.tag ? { tag: filters.tag } : {}),
    ...(filters.template ? { template: filters.template } : {}),
  };
}

const COUNTS = [
  "accepted",
  "delivered",
  "deferred",
  "bounced",
  "hard_bounced",
  "soft_bounced",
  "failed",
  "suppressed",
  "canceled",
  "opened",
  "unique_opened",
  "machine_opened",
  "clicked",
  "unique_clicked",
  "machine_clicked",
  "complained",
  "unsubscribed",
  "replied",
] as const satisfies ReadonlyArray<keyof MetricCounts>;

/** Whether nothing at all happened: every count is zero (the rates are then all null). */
export function hasNoMail(counts: MetricCounts): boolean {
  return COUNTS.every((name) => counts[name] === 0);
}

// Buckets are UTC hours and days: they are named in UTC, and the page says so.
const utcDay = new Intl.DateTimeFormat(undefined, { weekday: "short", day: "numeric", month: "short", timeZone: "UTC" });
const utcShortDay = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short", timeZone: "UTC" });
const utcHour = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: "UTC" });

/** A bucket by its start, for the table and the chart's tooltips: "Sat, Nov 21", or "Nov 21, 14:00". */
export function bucketLabel(start: string, granularity: Granularity): string {
  const date = new Date(start);
  return granularity === "day" ? utcDay.format(date) : `${utcShortDay.format(date)}, ${utcHour.format(date)}`;
}

/** A bucket as the chart's axis names it, shorter: "Nov 21", or "14:00". */
export function bucketTick(start: string, granularity: Granularity): string {
  const date = new Date(start);
  return granularity === "day" ? utcShortDay.format(date) : utcHour.format(date);
}

/**
 * The range the answer covers, in words (UTC): its first and last day ("Sun, Nov 15 – Sat, Nov
 * 21"), or its first hour's start and its last hour's end ("Nov 21, 15:00 – Nov 22, 15:00").
 */
export function coveredRange({ from, to, granularity }: Pick<Metrics, "from" | "to" | "granularity">): string {
  if (granularity === "day") return `${bucketLabel(from, "day")} – ${bucketLabel(new Date(new Date(to).getTime() - BUCKET_MS.day).toISOString(), "day")}`;
  return `${bucketLabel(from, "hour")} – ${bucketLabel(to, "hour")}`;
}

/**
 * The value axis of a bar chart of counts: a whole step of 1, 2 or 5 times a power of ten, and
 * the ticks from 0 to the first multiple of it at or above `highest` (at most about 5 ticks).
 */
export function countTicks(highest: number): number[] {
  const rough = Math.max(1, highest / 4);
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((factor) => factor * power).find((candidate) => candidate >= rough) ?? power * 10;
  const top = Math.max(step, Math.ceil(highest / step) * step);
  return Array.from({ length: top / step + 1 }, (_, index) => index * step);
}

/**
 * Which buckets the chart's axis names: the last one (now) and every `n`-th before it, so that
 * at most about 8 labels share the axis (24 hours: every third; 90 days: every twelfth).
 */
export function labelledBuckets(count: number, most = 8): number[] {
  const every = Math.max(1, Math.ceil(count / most));
  return Array.from({ length: count }, (_, index) => index).filter((index) => (count - 1 - index) % every === 0);
}
