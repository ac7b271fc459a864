import type { Knex } from "knex";

export interface JobRow {
  id: number;
  kind: string;
  message_id: string;
  workspace_id: string;
  environment: string;
  run_at: number;
  attempts: number;
  locked_by: string | null;
  locked_until: number | null;
}

export interface JobClaim {
  now: number;
  limit: number;
  leaseUntil: number;
  workerId: string;
  /** Only jobs of these environments (a worker claims what it has transports for). */
  environments: readonly string[];
}

/**
 * The few things SQLite and MySQL/MariaDB do differently (DESIGN.md §2 traps). Nothing outside
 * src/db/dialects branches on the database.
 */
export interface Dialect {
  name: "sqlite" | "mysql";
  /** Takes up to `limit` due jobs, leasing them to `workerId` until `leaseUntil`. */
  claimJobs(knex: Knex, claim: JobClaim): Promise<JobRow[]>;
  /** Adds `by` to a counter row, creating it, and returns the new value. */
  incrementCounter(trx: Knex.Transaction, bucket: string, by: number, expiresAt: number): Promise<number>;
  /** Whether an error means the transaction was chosen as a deadlock victim and may be retried. */
  isRetryable(error: unknown): boolean;
  /** How many group-commit transactions may run at once (one writer on SQLite). */
  writerConcurrency: number;
}
