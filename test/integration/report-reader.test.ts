import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrate, openDatabase, type Database } from "../../src/db/connection.js";
import { databases } from "../helpers/databases.js";

/**
 * The report reader (src/db/report-reader.ts): long reads must not stall the event loop. On
 * SQLite that takes a thread of its own, since better-sqlite3 runs a statement synchronously;
 * on MySQL the driver is asynchronous already.
 */
describe.each(databases)("report reader ($name)", (database) => {
  let db: Database;
  let drop: () => Promise<void>;
  beforeEach(async () => {
    const created = await database.create();
    drop = created.drop;
    db = openDatabase(created.url);
    await migrate(db);
  });
  afterEach(async () => {
    await db.close();
    await drop();
  });

  /** A read that takes a while: counting a recursive sequence of numbers, row by row. */
  const slowCount = (upTo: number) =>
    db.knex.select(db.knex.raw("count(*) as n")).from(db.knex.raw(`(with recursive c(x) as (select 1 union all select x + 1 from c where x < ${upTo}) select x from c) as t`));

  /** How many times a 1 ms timer fired while `work` ran: close to none when the event loop was blocked. */
  async function ticksDuring(work: () => Promise<unknown>): Promise<number> {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      await work();
    } finally {
      clearInterval(timer);
    }
    return ticks;
  }

  it("answers a long read while the event loop keeps running", async () => {
    const upTo = database.name === "sqlite" ? 2_000_000 : 1_000;
    let rows: Array<{ n: unknown }> = [];
    const ticks = await ticksDuring(async () => {
      rows = await db.reports.rows<{ n: unknown }>(slowCount(upTo));
    });
    expect(rows.map((row) => Number(row.n))).toEqual([upTo]);
    if (database.name === "sqlite") {
      expect(ticks).toBeGreaterThan(10);
      // The same read on the main connection holds the event loop for as long as it runs.
      expect(await ticksDuring(() => slowCount(upTo))).toBeLessThan(ticks / 4);
    }
  });

  it("sees what the main connection committed, and fails a bad read without losing the next", async () => {
    await db.knex("workspaces").insert({ id: "ws_report", name: "Report", created_at: 1, updated_at: 1 });
    const rows = await db.reports.rows<{ id: string; name: string }>(db.knex("workspaces").select("id", "name").where("id", "ws_report"));
    expect(rows).toEqual([{ id: "ws_report", name: "Report" }]);
    await expect(db.reports.rows(db.knex("no_such_table").select("*"))).rejects.toThrow(/no_such_table/);
    expect(await db.reports.rows(db.knex("workspaces").count({ n: "*" }))).toHaveLength(1);
  });
});
