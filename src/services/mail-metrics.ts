import { parseInstant, toIso, type Clock } from "../domain/clock.js";
import type { Scope } from "../domain/environments.js";
import { ValidationError } from "../domain/errors.js";
import { addEvents, addUniqueEngagers, BUCKET_MS, bucketStart, DEFAULT_BUCKETS, emptyTally, MAX_BUCKETS, withRates, type Granularity, type Tally } from "../domain/mail-metrics.js";
import type { MailMetricsRepository, MetricFilters, MetricWindow } from "../db/repositories/mail-metrics.js";
import type { components } from "../../generated/v1.js";

type Metrics = components["schemas"]["Metrics"];

export interface MetricsQuery extends MetricFilters {
  from?: string | undefined;
  to?: string | undefined;
  granularity?: Granularity | undefined;
}

/**
 * getMetrics: an environment's events counted per UTC hour or day, with totals and rates
 * (docs/metrics.md). Counted when asked, from the events, so a figure and the events behind it
 * never disagree; a workspace that has one event has its metrics.
 */
export class MailMetricsService {
  constructor(
    private readonly metrics: MailMetricsRepository,
    private readonly clock: Clock,
  ) {}

  async get(scope: Scope, query: MetricsQuery): Promise<Metrics> {
    const granularity = query.granularity ?? "day";
    const window = this.windowOf(query, granularity);
    const filters: MetricFilters = { tag: query.tag, template: query.template };
    const [counts, perBucket, overall] = await Promise.all([
      this.metrics.eventCounts(scope, window, filters),
      this.metrics.uniqueEngagers(scope, window, filters, true),
      this.metrics.uniqueEngagers(scope, window, filters, false),
    ]);

    const buckets = new Map<number, Tally>();
    for (let start = window.from; start < window.to; start += window.bucketMs) buckets.set(start, emptyTally());
    const totals = emptyTally();
    for (const count of counts) {
      addEvents(buckets.get(count.bucket)!, count);
      addEvents(totals, count);
    }
    for (const engagers of perBucket) addUniqueEngagers(buckets.get(engagers.bucket!)!, engagers.type, engagers.recipients);
    // Unique over the whole range, not the sum of the buckets': a recipient who opened on two days is one.
    for (const engagers of overall) addUniqueEngagers(totals, engagers.type, engagers.recipients);

    return {
      object: "metrics",
      environment: scope.environment,
      granularity,
      from: toIso(window.from),
      to: toIso(window.to),
      tag: query.tag ?? null,
      template: query.template ?? null,
      totals: withRates(totals),
      buckets: [...buckets].map(([start, tally]) => ({ start: toIso(start), ...withRates(tally) })),
    };
  }

  /** A date-time parameter as an instant; 422 naming it for the one admitted form that names none (hour 24, see parseInstant). */
  private static instantOf(value: string, pointer: string): number {
    const at = parseInstant(value);
    if (Number.isNaN(at)) throw new ValidationError([{ location: "query", pointer, message: "must be an RFC 3339 date-time" }]);
    return at;
  }

  /** Whole buckets covering [from, to): `from` rounded down, `to` up; 422 naming the parameter when the range is empty or too long. */
  private windowOf(query: MetricsQuery, granularity: Granularity): MetricWindow {
    const bucketMs = BUCKET_MS[granularity];
    const toMs = query.to === undefined ? this.clock.now() : MailMetricsService.instantOf(query.to, "/to");
    const fromMs = query.from === undefined ? undefined : MailMetricsService.instantOf(query.from, "/from");
    if (fromMs !== undefined && fromMs >= toMs) throw new ValidationError([{ location: "query", pointer: "/from", message: "must be before `to`" }]);
    const to = bucketStart(toMs - 1, granularity) + bucketMs;
    const from = fromMs === undefined ? to - DEFAULT_BUCKETS[granularity] * bucketMs : bucketStart(fromMs, granularity);
    if ((to - from) / bucketMs > MAX_BUCKETS[granularity]) {
      throw new ValidationError([{ location: "query", pointer: "/to", message: `must be at most ${MAX_BUCKETS[granularity]} ${granularity}s after \`from\`` }]);
    }
    return { from, to, bucketMs };
  }
}
