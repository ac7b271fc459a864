import type { Knex } from "knex";
import { describe, expect, it, vi } from "vitest";
import type { Dialect } from "../../src/db/dialects/dialect.js";
import { GroupCommit, type BatchWriter } from "../../src/db/group-commit.js";

const DEADLOCK = Object.assign(new Error("Deadlock found when trying to get lock"), { errno: 1213 });

/** A database whose first `failures` transactions are deadlock victims; logs each attempt. */
function flakyDatabase(failures: number) {
  const log: Array<"attempt" | number> = [];
  let attempts = 0;
  const knex = {
    transaction: async <T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> => {
      attempts++;
      log.push("attempt");
      const result = await work({} as Knex.Transaction);
      if (attempts <= failures) throw DEADLOCK;
      return result;
    },
  } as unknown as Knex;
  const dialect = { writerConcurrency: 1, isRetryable: (error: unknown) => error === DEADLOCK } as unknown as Dialect;
  return { groupCommit: new GroupCommit(knex, dialect), log, attempts: () => attempts };
}

const echo: BatchWriter<string, string> = { name: "echo", write: async (_trx, items) => items.map((item) => `${item} written`) };

describe("GroupCommit", () => {
  it("writes a batch again when a deadlock rolled it back, waiting longer before each attempt", async () => {
    const { groupCommit, log } = flakyDatabase(4);
    // Each wait is read from the timer it asks for and logged when it fires, not measured with a
    // clock: a loaded machine stretches measured waits (a late first wait outlasted the fourth).
    const realSetTimeout = globalThis.setTimeout;
    const timer = vi.spyOn(globalThis, "setTimeout").mockImplementation(((callback: () => void, ms: number) =>
      realSetTimeout(() => {
        log.push(ms);
        callback();
      }, ms)) as unknown as typeof setTimeout);
    try {
      expect(await Promise.all([groupCommit.submit(echo, "a"), groupCommit.submit(echo, "b")])).toEqual(["a written", "b written"]);
    } finally {
      timer.mockRestore();
    }
    const waits = log.filter((entry) => typeof entry === "number");
    expect(waits).toHaveLength(4);
    // Every attempt after the first begins only once its wait is over.
    expect(log).toEqual(["attempt", ...waits.flatMap((wait) => [wait, "attempt"])]);
    // 5 ms doubling, each between half and one and a half times its step.
    waits.forEach((wait, i) => expect(wait).toBeGreaterThanOrEqual(0.5 * 5 * 2 ** i));
    waits.forEach((wait, i) => expect(wait).toBeLessThan(1.5 * 5 * 2 ** i));
    expect(waits[3]).toBeGreaterThan(waits[0]!);
  });

  it("fails every submission of a batch that is still deadlocked after the last attempt", async () => {
    const { groupCommit, attempts } = flakyDatabase(Infinity);
    const results = await Promise.allSettled([groupCommit.submit(echo, "a"), groupCommit.submit(echo, "b")]);
    expect(results).toEqual([
      { status: "rejected", reason: DEADLOCK },
      { status: "rejected", reason: DEADLOCK },
    ]);
    expect(attempts()).toBe(6);
  });

  it("does not replay a batch that failed for any other reason", async () => {
    const broken = Object.assign(new Error("no such table"), { errno: 1146 });
    let attempts = 0;
    const knex = { transaction: async () => { attempts++; throw broken; } } as unknown as Knex;
    const groupCommit = new GroupCommit(knex, { writerConcurrency: 1, isRetryable: () => false } as unknown as Dialect);
    await expect(groupCommit.submit(echo, "a")).rejects.toBe(broken);
    expect(attempts).toBe(1);
  });

  describe("a submission that fails its statement", () => {
    const TOO_LONG = Object.assign(new Error("Data too long for column 'metadata' at row 3"), { errno: 1406, code: "ER_DATA_TOO_LONG" });

    /** A database that fails any transaction writing a "poison" item, and records what each committed. */
    function poisonableDatabase() {
      const committed: string[][] = [];
      const knex = {
        transaction: async <T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> => {
          const written: string[] = [];
          const trx = { written } as unknown as Knex.Transaction;
          const result = await work(trx);
          if (written.some((item) => item.startsWith("poison"))) throw TOO_LONG;
          committed.push(written);
          return result;
        },
      } as unknown as Knex;
      const dialect = { writerConcurrency: 1, isRetryable: () => false } as unknown as Dialect;
      const recording = (name: string): BatchWriter<string, string> => ({
        name,
        write: async (trx, items) => {
          (trx as unknown as { written: string[] }).written.push(...items);
          return items.map((item) => `${item} written`);
        },
      });
      return { groupCommit: new GroupCommit(knex, dialect), committed, accepts: recording("message-accept"), claims: recording("idempotency-claim") };
    }

    it("fails alone with its own error: the other submissions of its batch, of any writer, are written", async () => {
      const { groupCommit, committed, accepts, claims } = poisonableDatabase();
      const results = await Promise.allSettled([
        groupCommit.submit(accepts, "a"),
        groupCommit.submit(claims, "claim-1"),
        groupCommit.submit(accepts, "poison"),
        groupCommit.submit(accepts, "b"),
        groupCommit.submit(claims, "claim-2"),
      ]);
      expect(results).toEqual([
        { status: "fulfilled", value: "a written" },
        { status: "fulfilled", value: "claim-1 written" },
        { status: "rejected", reason: TOO_LONG },
        { status: "fulfilled", value: "b written" },
        { status: "fulfilled", value: "claim-2 written" },
      ]);
      // Each good submission is committed exactly once, and the poisoned one never.
      expect(committed.flat().sort()).toEqual(["a", "b", "claim-1", "claim-2"]);
    });

    it("isolates each of several among many, still committing the rest in groups rather than one by one", async () => {
      const { groupCommit, committed, accepts } = poisonableDatabase();
      const items = Array.from({ length: 64 }, (_, i) => (i === 5 || i === 40 ? `poison-${i}` : `item-${i}`));
      const results = await Promise.allSettled(items.map((item) => groupCommit.submit(accepts, item)));
      expect(results.filter((r) => r.status === "rejected").map((r) => (r as PromiseRejectedResult).reason)).toEqual([TOO_LONG, TOO_LONG]);
      expect(results.map((r) => r.status === "rejected")).toEqual(items.map((item) => item.startsWith("poison")));
      expect(committed.flat().sort()).toEqual(items.filter((item) => !item.startsWith("poison")).sort());
      expect(committed.length).toBeLessThan(20);
    });

    it("never splits items submitted together: they fail together with one poisoned among them, the others are written", async () => {
      const { groupCommit, committed, accepts } = poisonableDatabase();
      const unit = groupCommit.submitTogether(accepts, ["u-1", "poison-u", "u-2"]);
      const results = await Promise.allSettled([groupCommit.submit(accepts, "a"), ...unit, groupCommit.submit(accepts, "b")]);
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "rejected", "rejected", "fulfilled"]);
      expect(committed.flat().sort()).toEqual(["a", "b"]);
    });

    it("writes items submitted together in one transaction even when they straddle a full batch", async () => {
      const { committed, accepts } = poisonableDatabase();
      const knex = { transaction: async <T>(work: (trx: Knex.Transaction) => Promise<T>) => {
        const written: string[] = [];
        const result = await work({ written } as unknown as Knex.Transaction);
        committed.push(written);
        return result;
      } } as unknown as Knex;
      const groupCommit = new GroupCommit(knex, { writerConcurrency: 1, isRetryable: () => false } as unknown as Dialect, 4);
      await Promise.all([groupCommit.submit(accepts, "a"), groupCommit.submit(accepts, "b"), groupCommit.submit(accepts, "c"), ...groupCommit.submitTogether(accepts, ["u-1", "u-2", "u-3"]), groupCommit.submit(accepts, "d")]);
      expect(committed).toEqual([["a", "b", "c", "u-1", "u-2", "u-3"], ["d"]]);
    });

    it("still fails the whole batch, without splitting it, when the database does not answer", async () => {
      const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
      let attempts = 0;
      const knex = { transaction: async () => { attempts++; throw refused; } } as unknown as Knex;
      const groupCommit = new GroupCommit(knex, { writerConcurrency: 1, isRetryable: () => false } as unknown as Dialect);
      const results = await Promise.allSettled([groupCommit.submit(echo, "a"), groupCommit.submit(echo, "b"), groupCommit.submit(echo, "c")]);
      expect(results).toEqual([0, 1, 2].map(() => ({ status: "rejected", reason: refused })));
      expect(attempts).toBe(1);
    });
  });
});
