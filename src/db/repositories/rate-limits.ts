import type { Knex } from "knex";
import type { Dialect } from "../dialects/dialect.js";
import type { BatchWriter } from "../group-commit.js";

export interface HitItem {
  bucket: string;
  expiresAt: number;
}

export class RateLimitsRepository {
  /**
   * Counts one request per item. Items of the same bucket in one batch share one upsert and are
   * numbered in arrival order, so every request learns its exact position in the window.
   */
  readonly hitWriter: BatchWriter<HitItem, number> = {
    name: "rate-limit-hit",
    write: async (trx, items) => {
      const perBucket = new Map<string, { count: number; expiresAt: number }>();
      for (const item of items) {
        const entry = perBucket.get(item.bucket) ?? { count: 0, expiresAt: item.expiresAt };
        entry.count++;
        perBucket.set(item.bucket, entry);
      }
      const firstPosition = new Map<string, number>();
      for (const [bucket, { count, expiresAt }] of perBucket) {
        const after = await this.dialect.incrementCounter(trx, bucket, count, expiresAt);
        firstPosition.set(bucket, after - count + 1);
      }
      return items.map((item) => {
        const position = firstPosition.get(item.bucket)!;
        firstPosition.set(item.bucket, position + 1);
        return position;
      });
    },
  };

  constructor(
    private readonly knex: Knex,
    private readonly dialect: Dialect,
  ) {}

  /** A counter's value, 0 when it does not exist or has expired. */
  async count(bucket: string, now: number): Promise<number> {
    const row = (await this.knex("rate_limit_counters").where({ bucket }).where("expires_at", ">", now).first("count")) as { count: number } | undefined;
    return row ? Number(row.count) : 0;
  }

  /** Adds one to a counter outside the group commit (rare events: failed sign-ins). */
  async increment(bucket: string, expiresAt: number): Promise<number> {
    return this.knex.transaction((trx) => this.dialect.incrementCounter(trx, bucket, 1, expiresAt));
  }

  async reset(bucket: string): Promise<void> {
    await this.knex("rate_limit_counters").where({ bucket }).delete();
  }

  async pruneExpired(now: number): Promise<number> {
    return this.knex("rate_limit_counters").where("expires_at", "<=", now).delete();
  }
}
