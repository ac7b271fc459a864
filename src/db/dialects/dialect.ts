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
  /** The size of the message's content as accepted: what the worker takes in hand to deliver it. */
  content_bytes: number;
}

export interface JobClaim {
  now: number;
  limit: number;
  leaseUntil: number;
  workerId: string;
  /** Only jobs of these environments (a worker claims what it has transports for). */
  environments: readonly string[];
}

export interface WebhookDeliveryRow {
  endpoint_id: string;
  event_id: string;
  state: "pending" | "succeeded" | "failed";
  attempts: number;
  due_at: number;
  locked_by: string | null;
  locked_until: number | null;
  last_attempt_at: number | null;
  event_created_at: number;
  payload: string | null;
  created_at: number;
}

export interface WebhookClaim {
  now: number;
  limit: number;
  leaseUntil: number;
  dispatcherId: string;
  /** Endpoints this dispatcher already holds enough of (its per-endpoint cap): claim none of theirs. */
  excludeEndpoints: readonly string[];
}

/**
 * The few things SQLite and MySQL/MariaDB do differently (DESIGN.md §2 traps). Nothing outside
 * src/db/dialects branches on the database.
 */
export interface Dialect {
  name: "sqlite" | "mysql";
  /** Takes up to `limit` due jobs, leasing them to `workerId` until `leaseUntil`. */
  claimJobs(knex: Knex, claim: JobClaim): Promise<JobRow[]>;
  /**
   * Takes up to `limit` due webhook deliveries of enabled endpoints, leasing them to `dispatcherId`.
   * Parked ones (a disabled endpoint's: src/webhooks/parking.ts) are not even looked at.
   */
  claimWebhookDeliveries(knex: Knex, claim: WebhookClaim): Promise<WebhookDeliveryRow[]>;
  /** Adds `by` to a counter row, creating it, and returns the new value. */
  incrementCounter(trx: Knex.Transaction, bucket: string, by: number, expiresAt: number): Promise<number>;
  /**
   * The database server's clock, epoch milliseconds; null where the database has no clock of its
   * own (SQLite: a file that only this machine's processes open, so only this machine's clock).
   */
  serverTime(knex: Knex): Promise<number | null>;
  /** Whether an error means the transaction was chosen as a deadlock victim and may be retried. */
  isRetryable(error: unknown): boolean;
  /** How many group-commit transactions may run at once (one writer on SQLite). */
  writerConcurrency: number;
}
