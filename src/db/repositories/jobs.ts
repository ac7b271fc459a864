import type { Knex } from "knex";
import type { Dialect, JobClaim, JobRow } from "../dialects/dialect.js";
import { queueStats, toNumber, toNumberOrNull } from "../rows.js";

export type { JobRow };

export class JobsRepository {
  constructor(
    private readonly knex: Knex,
    private readonly dialect: Dialect,
  ) {}

  async claim(claim: JobClaim): Promise<JobRow[]> {
    const rows = await this.dialect.claimJobs(this.knex, claim);
    return rows.map((row) => ({ ...row, run_at: toNumber(row.run_at), attempts: Number(row.attempts), locked_until: toNumberOrNull(row.locked_until), content_bytes: Number(row.content_bytes) }));
  }

  /** Extends the leases a worker still holds (a job taken over by another worker is left alone). */
  async renewLeases(workerId: string, ids: readonly number[], leaseUntil: number): Promise<void> {
    for (let i = 0; i < ids.length; i += 500) {
      await this.knex("jobs").whereIn("id", ids.slice(i, i + 500)).andWhere({ locked_by: workerId }).update({ locked_until: leaseUntil });
    }
  }

  /** Gives leased jobs back (a worker stopping before it processed them). */
  async release(workerId: string, ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.knex("jobs").whereIn("id", ids).andWhere({ locked_by: workerId }).update({ locked_by: null, locked_until: null });
  }

  /** Queue depth and the age of the oldest due job, for /metrics. */
  async stats(now: number): Promise<{ depth: number; due: number; oldestDueAgeSeconds: number }> {
    const total = (await this.knex("jobs").count({ n: "*" }).first()) as { n: number | string };
    const due = (await this.knex("jobs").where("run_at", "<=", now).count({ n: "*" }).min({ oldest: "run_at" }).first()) as { n: number | string; oldest: number | string | null };
    return queueStats(total.n, due.n, due.oldest, now);
  }
}
