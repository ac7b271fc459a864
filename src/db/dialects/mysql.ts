import type { Dialect, JobRow } from "./dialect.js";

const DEADLOCK = 1213;
const LOCK_WAIT_TIMEOUT = 1205;
const DUPLICATE_KEY = 1062;

export const mysqlDialect: Dialect = {
  name: "mysql",
  writerConcurrency: 4,

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
