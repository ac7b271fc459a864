import type { Knex } from "knex";
import type { Scope } from "../../domain/environments.js";
import type { EventType } from "../../domain/events.js";
import { idTimeBound } from "../../domain/ids.js";
import { UNIQUE_ENGAGEMENT_TYPES, type BounceType, type EventCount } from "../../domain/mail-metrics.js";
import type { ReportReader } from "../report-reader.js";
import { toNumber } from "../rows.js";

/** A range of whole buckets: [from, to), in epoch ms, cut into buckets of `bucketMs`. */
export interface MetricWindow {
  from: number;
  to: number;
  bucketMs: number;
}

export interface MetricFilters {
  tag?: string | undefined;
  template?: string | undefined;
}

export interface BucketEventCount extends EventCount {
  bucket: number;
}

export interface UniqueEngagers {
  /** The bucket's start; null when counted over the whole window. */
  bucket: number | null;
  type: EventType;
  recipients: number;
}

/**
 * An event's id is made from the clock that also stamps its `created_at`, a moment apart at most
 * (an open is stamped when its request arrived, its id when it is written). The id range, with
 * this much slack on each side, lets the (scope, id) index find the window; `created_at` then
 * decides exactly.
 */
const ID_SLACK_MS = 3_600_000;

/**
 * Metrics read from the events themselves (docs/metrics.md), so that they never disagree with
 * what listEvents shows: one grouped scan of the window's events per question, run by the
 * report reader (a thread of its own on SQLite), since a range can hold millions of events.
 */
export class MailMetricsRepository {
  constructor(
    private readonly knex: Knex,
    private readonly reports: ReportReader,
  ) {}

  /** Events per bucket, type, automated flag and bounce type, with how many were their message's first. */
  async eventCounts(scope: Scope, window: MetricWindow, filters: MetricFilters): Promise<BucketEventCount[]> {
    const rows = await this.reports.rows<{ type: EventType; automated: unknown; bounce_type: BounceType | null; bucket: unknown; events: unknown; firsts: unknown }>(
      this.events(scope, window, filters)
        .select("e.type", "e.automated", "e.bounce_type", this.knex.raw(`${bucketOf(window)} as bucket`))
        .count({ events: "*" })
        .sum({ firsts: this.knex.raw("case when e.sequence = 1 then 1 else 0 end") })
        .groupBy("e.type", "e.automated", "e.bounce_type", "bucket"),
    );
    return rows.map((row) => ({
      type: row.type,
      automated: Boolean(toNumber(row.automated)),
      bounceType: row.bounce_type ?? null,
      bucket: toNumber(row.bucket),
      events: toNumber(row.events),
      firsts: toNumber(row.firsts ?? 0),
    }));
  }

  /** Distinct recipients with a person's open or click, per bucket or over the whole window. */
  async uniqueEngagers(scope: Scope, window: MetricWindow, filters: MetricFilters, perBucket: boolean): Promise<UniqueEngagers[]> {
    const distinct = this.events(scope, window, filters)
      .distinct(["e.type", "e.message_id", "e.recipient", ...(perBucket ? [this.knex.raw(`${bucketOf(window)} as bucket`)] : [])])
      .whereIn("e.type", UNIQUE_ENGAGEMENT_TYPES)
      .andWhere("e.automated", false);
    const grouped = this.knex.from(distinct.as("u")).select("u.type").count({ recipients: "*" }).groupBy("u.type");
    if (perBucket) grouped.select("u.bucket").groupBy("u.bucket");
    const rows = await this.reports.rows<{ type: EventType; bucket?: unknown; recipients: unknown }>(grouped);
    return rows.map((row) => ({ type: row.type, bucket: perBucket ? toNumber(row.bucket) : null, recipients: toNumber(row.recipients) }));
  }

  private events(scope: Scope, window: MetricWindow, filters: MetricFilters): Knex.QueryBuilder {
    const query = this.knex("events as e")
      .where({ "e.workspace_id": scope.workspaceId, "e.environment": scope.environment })
      .andWhere("e.id", ">=", idTimeBound("event", window.from - ID_SLACK_MS))
      .andWhere("e.id", "<", idTimeBound("event", window.to + ID_SLACK_MS))
      .andWhere("e.created_at", ">=", window.from)
      .andWhere("e.created_at", "<", window.to);
    if (filters.tag !== undefined) {
      const tag = filters.tag;
      query.join("message_tags as t", (on) => on.on("t.message_id", "e.message_id").andOnVal("t.tag", tag));
    }
    if (filters.template !== undefined) query.join("messages as m", "m.id", "e.message_id").andWhere("m.template_slug", filters.template);
    return query;
  }
}

/** The start of an event's bucket, in SQL both dialects read the same way (integer arithmetic). */
function bucketOf(window: MetricWindow): string {
  // Buckets are whole multiples of their size from the epoch: UTC hours and days.
  return `(e.created_at - (e.created_at % ${Math.trunc(window.bucketMs)}))`;
}
