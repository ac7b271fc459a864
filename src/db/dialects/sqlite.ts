import type { Dialect, JobRow, WebhookDeliveryRow } from "./dialect.js";

export const sqliteDialect: Dialect = {
  name: "sqlite",
  writerConcurrency: 1,

  async serverTime() {
    return null;
  },

  // SQLite serialises writers, so one UPDATE … RETURNING is an atomic claim (.skipLocked() throws here).
  async claimJobs(knex, { now, limit, leaseUntil, workerId, environments }) {
    if (environments.length === 0) return [];
    const rows = await knex.raw(
      `UPDATE jobs SET locked_by = ?, locked_until = ?, attempts = attempts + 1
        WHERE id IN (SELECT id FROM jobs WHERE run_at <= ? AND (locked_until IS NULL OR locked_until < ?)
                       AND environment IN (${environments.map(() => "?").join(", ")})
                     ORDER BY run_at, id LIMIT ?)
        RETURNING *`,
      [workerId, leaseUntil, now, now, ...environments, limit],
    );
    return rows as JobRow[];
  },

  // The same single-statement claim; RETURNING gives no order, the caller sorts.
  async claimWebhookDeliveries(knex, { now, limit, leaseUntil, dispatcherId, excludeEndpoints }) {
    const excluded = excludeEndpoints.length === 0 ? "" : `AND d.endpoint_id NOT IN (${excludeEndpoints.map(() => "?").join(", ")})`;
    const rows = await knex.raw(
      `UPDATE webhook_deliveries SET locked_by = ?, locked_until = ?
        WHERE (endpoint_id, event_id) IN (
          SELECT d.endpoint_id, d.event_id FROM webhook_deliveries d
           WHERE d.state = 'pending' AND d.parked = 0 AND d.due_at <= ? AND (d.locked_until IS NULL OR d.locked_until < ?) ${excluded}
             AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = d.endpoint_id AND w.enabled = 1)
           ORDER BY d.due_at, d.event_id LIMIT ?)
        RETURNING *`,
      [dispatcherId, leaseUntil, now, now, ...excludeEndpoints, limit],
    );
    return rows as WebhookDeliveryRow[];
  },

  async incrementCounter(trx, bucket, by, expiresAt) {
    const rows = (await trx.raw(
      `INSERT INTO rate_limit_counters (bucket, count, expires_at) VALUES (?, ?, ?)
       ON CONFLICT (bucket) DO UPDATE SET count = count + excluded.count RETURNING count`,
      [bucket, by, expiresAt],
    )) as Array<{ count: number }>;
    return rows[0]!.count;
  },

  isRetryable(error) {
    return (error as { code?: string }).code === "SQLITE_BUSY";
  },
};
