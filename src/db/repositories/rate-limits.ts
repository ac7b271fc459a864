import type { Knex } from "knex";
import type { Dialect } from "../dialects/dialect.js";
import type { BatchWriter } from "../group-commit.js";
import { inLockOrder } from "../lock-order.js";

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
      // By bucket, not in arrival order: two batches could otherwise lock the same counters in opposite orders.
      for (const [bucket, { count, expiresAt }] of inLockOrder(perBucket)) {
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

  /**
   * Adds one to every counter, all or none, outside the group commit (rare events: sign-in
   * attempts). When any would pass its limit, the transaction is rolled back and the answer is
   * false. Each increment returns the counter's new value under the row's lock, so however many
   * callers arrive at once, at most `limit` of them get through. Callers list shared buckets in
   * one order (the sign-in throttle: address, then client) so that they queue, not deadlock.
   */
  async incrementWithinLimits(counters: ReadonlyArray<{ bucket: string; limit: number }>, expiresAt: number): Promise<boolean> {
    try {
      await this.knex.transaction(async (trx) => {
        for (const { bucket, limit } of counters) {
          if ((await this.dialect.incrementCounter(trx, bucket, 1, expiresAt)) > limit) throw new OverLimit();
        }
      });
      return true;
    } catch (error) {
      if (error instanceof OverLimit) return false;
      throw error;
    }
  }

  /** Takes one back from a counter (an attempt that turned out not to count). */
  async decrement(bucket: string): Promise<void> {
    await this.knex("rate_limit_counters").where({ bucket }).where("count", ">", 0).decrement("count", 1);
  }

  async reset(bucket: string): Promise<void> {
    await this.knex("rate_limit_counters").where({ bucket }).delete();
  }

  async pruneExpired(now: number): Promise<number> {
    return this.knex("rate_limit_counters").where("expires_at", "<=", now).delete();
  }
}

/** Rolls back incrementWithinLimits's transaction; never leaves the repository. */
class OverLimit extends Error {}
