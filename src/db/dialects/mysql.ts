import type { Dialect, JobRow, WebhookDeliveryRow } from "./dialect.js";

const DEADLOCK = 1213;
const LOCK_WAIT_TIMEOUT = 1205;
const DUPLICATE_KEY = 1062;

export const mysqlDialect: Dialect = {
  name: "mysql",
  writerConcurrency: 4,

  // Microseconds since the epoch in UTC arithmetic only: UNIX_TIMESTAMP(NOW()) would go through
  // the session's time zone, which is ambiguous for an hour a year where it has daylight saving.
  async serverTime(knex) {
    const [rows] = (await knex.raw("SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) AS us")) as [Array<{ us: number | string }>];
    return Math.round(Number(rows[0]!.us) / 1000);
  },

  // MariaDB has no UPDATE … RETURNING: lock due rows with SKIP LOCKED (so concurrent workers
  // take disjoint sets without waiting), lease them, and return what was locked.
  async claimJobs(knex, { now, limit, leaseUntil, workerId, environments }) {
    if (environments.length === 0) return [];
    return knex.transaction(async (trx) => {
      const rows = (await trx("jobs")
        .where("run_at", "<=", now)
        .whereIn("environment", environments)
        .andWhere((q) => q.whereNull("locked_until").orWhere("locked_until", "<", now))
        .orderBy([{ column: "run_at" }, { column: "id" }])
        .limit(limit)
        .forUpdate()
        .skipLocked()) as JobRow[];
      if (rows.length === 0) return [];
      await trx("jobs")
        .whereIn("id", rows.map((row) => row.id))
        .update({ locked_by: workerId, locked_until: leaseUntil, attempts: trx.raw("attempts + 1") });
      return rows.map((row) => ({ ...row, locked_by: workerId, locked_until: leaseUntil, attempts: row.attempts + 1 }));
    });
  },

  // As for jobs. The enabled check is a subquery, not a join: a locking read locks the rows of a
  // joined table (every claimer would queue behind one endpoint row), not those of a subquery.
  async claimWebhookDeliveries(knex, { now, limit, leaseUntil, dispatcherId, excludeEndpoints }) {
    return knex.transaction(async (trx) => {
      const query = trx("webhook_deliveries as d")
        .where("d.state", "pending")
        .andWhere("d.parked", false)
        .andWhere("d.due_at", "<=", now)
        .andWhere((q) => q.whereNull("d.locked_until").orWhere("d.locked_until", "<", now))
        .whereExists((q) => q.select(trx.raw("1")).from("webhook_endpoints as w").whereRaw("w.id = d.endpoint_id").andWhere("w.enabled", true));
      if (excludeEndpoints.length > 0) query.whereNotIn("d.endpoint_id", excludeEndpoints);
      const rows = (await query.select("d.*").orderBy([{ column: "d.due_at" }, { column: "d.event_id" }]).limit(limit).forUpdate().skipLocked()) as WebhookDeliveryRow[];
      if (rows.length === 0) return [];
      await trx("webhook_deliveries")
        .whereIn(["endpoint_id", "event_id"], rows.map((row) => [row.endpoint_id, row.event_id]))
        .update({ locked_by: dispatcherId, locked_until: leaseUntil });
      return rows.map((row) => ({ ...row, locked_by: dispatcherId, locked_until: leaseUntil }));
    });
  },

  async incrementCounter(trx, bucket, by, expiresAt) {
    await trx.raw(
      `INSERT INTO rate_limit_counters (bucket, count, expires_at) VALUES (?, ?, ?)
       ON DUPLICATE KEY UPDATE count = count + VALUES(count)`,
      [bucket, by, expiresAt],
    );
    const row = (await trx("rate_limit_counters").where({ bucket }).first("count")) as { count: number };
    return Number(row.count);
  },

  isRetryable(error) {
    const errno = (error as { errno?: number }).errno;
    // A duplicate key here means another node committed the same Idempotency-Key between this
    // batch's lookup and its insert; replaying the batch finds that row and returns it.
    return errno === DEADLOCK || errno === LOCK_WAIT_TIMEOUT || errno === DUPLICATE_KEY;
  },
};
