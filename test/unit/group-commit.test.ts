import type { Knex } from "knex";
import { describe, expect, it } from "vitest";
import type { Dialect } from "../../src/db/dialects/dialect.js";
import { GroupCommit, type BatchWriter } from "../../src/db/group-commit.js";

const DEADLOCK = Object.assign(new Error("Deadlock found when trying to get lock"), { errno: 1213 });

/** A database whose first `failures` transactions are deadlock victims; records when each began. */
function flakyDatabase(failures: number) {
  const began: number[] = [];
  const knex = {
    transaction: async <T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> => {
      began.push(performance.now());
      const result = await work({} as Knex.Transaction);
      if (began.length <= failures) throw DEADLOCK;
      return result;
    },
  } as unknown as Knex;
  const dialect = { writerConcurrency: 1, isRetryable: (error: unknown) => error === DEADLOCK } as unknown as Dialect;
  return { groupCommit: new GroupCommit(knex, dialect), began };
}

const echo: BatchWriter<string, string> = { name: "echo", write: async (_trx, items) => items.map((item) => `${item} written`) };

describe("GroupCommit", () => {
  it("writes a batch again when a deadlock rolled it back, waiting longer before each attempt", async () => {
    const { groupCommit, began } = flakyDatabase(4);
    expect(await Promise.all([groupCommit.submit(echo, "a"), groupCommit.submit(echo, "b")])).toEqual(["a written", "b written"]);
    expect(began).toHaveLength(5);
    const waits = began.slice(1).map((at, i) => at - began[i]!);
    // 5 ms doubling, each between half and one and a half times its step.
    waits.forEach((wait, i) => expect(wait).toBeGreaterThanOrEqual(0.5 * 5 * 2 ** i - 1));
    expect(waits[3]).toBeGreaterThan(waits[0]!);
  });

  it("fails every submission of a batch that is still deadlocked after the last attempt", async () => {
    const { groupCommit, began } = flakyDatabase(Infinity);
    const results = await Promise.allSettled([groupCommit.submit(echo, "a"), groupCommit.submit(echo, "b")]);
    expect(results).toEqual([
      { status: "rejected", reason: DEADLOCK },
      { status: "rejected", reason: DEADLOCK },
    ]);
    expect(began).toHaveLength(6);
  });

  it("does not replay a batch that failed for any other reason", async () => {
    const broken = Object.assign(new Error("no such table"), { errno: 1146 });
    let attempts = 0;
    const knex = { transaction: async () => { attempts++; throw broken; } } as unknown as Knex;
    const groupCommit = new GroupCommit(knex, { writerConcurrency: 1, isRetryable: () => false } as unknown as Dialect);
    await expect(groupCommit.submit(echo, "a")).rejects.toBe(broken);
    expect(attempts).toBe(1);
  });
});
