import type { components } from "../../generated/v1.js";
import type { EventType } from "./events.js";

/**
 * What happened to an environment's mail over time (getMetrics, docs/metrics.md): counts of its
 * events per UTC hour or day and the rates derived from them. Not to be confused with the
 * Prometheus gauges of src/metrics.ts, which are about the process.
 */
export type MetricCounts = components["schemas"]["MetricCounts"];
export type Granularity = components["schemas"]["Metrics"]["granularity"];
export type BounceType = "hard" | "soft";

type CountName = Exclude<keyof MetricCounts, `${string}_rate`>;
export type Tally = Record<CountName, number>;

export const BUCKET_MS: Record<Granularity, number> = { hour: 3_600_000, day: 86_400_000 };
/** The most buckets one answer holds: a leap year of days, or 31 days of hours. */
export const MAX_BUCKETS: Record<Granularity, number> = { hour: 744, day: 366 };
/** The range when the caller gives no `from`: a week of days, or a day of hours. */
export const DEFAULT_BUCKETS: Record<Granularity, number> = { hour: 24, day: 7 };

/** The event types counted as they are, one count per event. */
const COUNTED: Partial<Record<EventType, CountName>> = {
  "message.delivered": "delivered",
  "message.deferred": "deferred",
  "message.bounced": "bounced",
  "message.failed": "failed",
  "message.suppressed": "suppressed",
  "message.canceled": "canceled",
  "message.complained": "complained",
  "message.unsubscribed": "unsubscribed",
  "message.replied": "replied",
};

/** Opens and clicks: people's and machines' counted apart, and people's also once per recipient. */
const ENGAGEMENT: Partial<Record<EventType, { human: CountName; machine: CountName; unique: CountName }>> = {
  "message.opened": { human: "opened", machine: "machine_opened", unique: "unique_opened" },
  "message.clicked": { human: "clicked", machine: "machine_clicked", unique: "unique_clicked" },
};

/** Bounces are also counted by their type, within `bounced`. */
const BOUNCE_COUNTS: Record<BounceType, CountName> = { hard: "hard_bounced", soft: "soft_bounced" };

/** The event types whose distinct recipients make `unique_opened` and `unique_clicked`. */
export const UNIQUE_ENGAGEMENT_TYPES = Object.keys(ENGAGEMENT) as EventType[];

export function emptyTally(): Tally {
  return {
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
  };
}

/** Events of one type counted in SQL; `firsts` are those that were their message's first event. */
export interface EventCount {
  type: EventType;
  automated: boolean;
  /** A bounce's type; null for other events (and a bounce recorded without one). */
  bounceType: BounceType | null;
  events: number;
  firsts: number;
}

/**
 * Adds counted events to a tally. A message is accepted once, by its first event (`queued`, or
 * `scheduled` when it waits): a later `scheduled` (rescheduling) or `queued` (a scheduled one
 * coming due) is not a new message.
 */
export function addEvents(tally: Tally, count: EventCount): void {
  tally.accepted += count.firsts;
  const engagement = ENGAGEMENT[count.type];
  if (engagement) {
    tally[count.automated ? engagement.machine : engagement.human] += count.events;
    return;
  }
  const name = COUNTED[count.type];
  if (name) tally[name] += count.events;
  if (count.type === "message.bounced" && count.bounceType !== null) tally[BOUNCE_COUNTS[count.bounceType]] += count.events;
}

/** Distinct recipients who opened or clicked, counted in SQL. */
export function addUniqueEngagers(tally: Tally, type: EventType, recipients: number): void {
  const engagement = ENGAGEMENT[type];
  if (engagement) tally[engagement.unique] += recipients;
}

/**
 * The tally with its rates. Delivery and bounce rates are over the hand-offs that ended
 * (delivered, bounced or failed); complaint, open and click rates over deliveries. Null when
 * there is nothing to divide by; four decimals, which is finer than any dashboard shows.
 */
export function withRates(tally: Tally): MetricCounts {
  const ended = tally.delivered + tally.bounced + tally.failed;
  return {
    ...tally,
    delivery_rate: ratio(tally.delivered, ended),
    bounce_rate: ratio(tally.bounced, ended),
    complaint_rate: ratio(tally.complained, tally.delivered),
    open_rate: ratio(tally.unique_opened, tally.delivered),
    click_rate: ratio(tally.unique_clicked, tally.delivered),
  };
}

function ratio(part: number, whole: number): number | null {
  return whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000;
}

/** The start of the bucket an instant falls in (UTC hours and days are whole multiples from the epoch). */
export function bucketStart(ms: number, granularity: Granularity): number {
  return ms - (((ms % BUCKET_MS[granularity]) + BUCKET_MS[granularity]) % BUCKET_MS[granularity]);
}
