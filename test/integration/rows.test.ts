import { format } from "mysql2";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../src/db/connection.js";
import { insertChunked, updateEach } from "../../src/db/rows.js";
import { databases, type TestDatabase } from "../helpers/databases.js";

describe.each(databases)("updateEach ($name)", (database: TestDatabase) => {
  let created: Awaited<ReturnType<TestDatabase["create"]>>;
  let db: Database;

  beforeEach(async () => {
    created = await database.create();
    db = openDatabase(created.url);
    await db.knex.schema.createTable("things", (t) => {
      t.string("id").primary();
      t.string("owner").notNullable();
      t.string("status").notNullable();
      t.text("body").nullable();
      t.integer("attempts").notNullable().defaultTo(0);
    });
    await db.knex("things").insert(Array.from({ length: 250 }, (_, i) => ({ id: `t${i}`, owner: i % 2 === 0 ? "even" : "odd", status: "queued", body: null })));
  });

  afterEach(async () => {
    await db.close();
    await created.drop();
  });

  const rows = () => db.knex("things").orderBy("id").select("id", "owner", "status", "body", "attempts");

  it("gives each row its own values, in statements of at most 100 rows", async () => {
    const updates = Array.from({ length: 250 }, (_, i) => ({ id: `t${i}`, set: { status: `s${i}`, attempts: i, body: i % 3 === 0 ? null : "x".repeat(i) } }));
    await db.knex.transaction((trx) => updateEach(trx, "things", updates));
    const after = await rows();
    for (const row of after) {
      const i = Number(row.id.slice(1));
      expect(row).toMatchObject({ status: `s${i}`, attempts: i, body: i % 3 === 0 ? null : "x".repeat(i) });
    }
  });

  it("leaves a row alone when its extra condition does not match", async () => {
    await db.knex.transaction((trx) =>
      updateEach(trx, "things", [
        { id: "t0", match: { owner: "even" }, set: { status: "sent" } },
        { id: "t1", match: { owner: "even" }, set: { status: "sent" } }, // t1 is odd's
      ]),
    );
    const byId = new Map((await rows()).map((row) => [row.id, row.status]));
    expect([byId.get("t0"), byId.get("t1")]).toEqual(["sent", "queued"]);
  });

  it("takes a row given twice in order (the later wins), and rows that set different columns", async () => {
    await db.knex.transaction((trx) =>
      updateEach(trx, "things", [
        { id: "t0", set: { status: "first", attempts: 1 } },
        { id: "t2", set: { body: "only the body" } },
        { id: "t0", set: { status: "second" } },
      ]),
    );
    const byId = new Map((await rows()).map((row) => [row.id, row]));
    expect(byId.get("t0")).toMatchObject({ status: "second", attempts: 1 });
    expect(byId.get("t2")).toMatchObject({ status: "queued", body: "only the body" });
  });
});

describe.each(databases)("insertChunked ($name)", (database: TestDatabase) => {
  let created: Awaited<ReturnType<TestDatabase["create"]>>;
  let db: Database;

  beforeEach(async () => {
    created = await database.create();
    db = openDatabase(created.url);
    await db.knex.schema.createTable("things", (t) => {
      t.string("id").primary();
      t.text("body", "mediumtext").notNullable();
    });
  });

  afterEach(async () => {
    await db.close();
    await created.drop();
  });

  it("keeps every statement under MySQL's packet by the bytes its rows carry as sent, escapes included", async () => {
    // 60 rows of 300 KiB of quotes: 36 MiB as mysql2 writes them into SQL (each quote escaped), in
    // far fewer rows than a statement may hold. MariaDB closes the connection on a statement past
    // its max_allowed_packet (16 MiB by default); SQLite binds them, so the statements are measured.
    const rows = Array.from({ length: 60 }, (_, i) => ({ id: `t${String(i).padStart(2, "0")}`, body: `${i}${'"'.repeat(300 * 1024)}` }));
    const sent: number[] = [];
    db.knex.on("query", (query: { sql: string; bindings?: unknown[] }) => {
      if (/^insert/i.test(query.sql)) sent.push(Buffer.byteLength(format(query.sql, (query.bindings ?? []) as Parameters<typeof format>[1])));
    });
    await db.knex.transaction((trx) => insertChunked(trx, "things", rows));
    expect(sent.length).toBeGreaterThan(1);
    for (const bytes of sent) expect(bytes).toBeLessThan(16 * 1024 * 1024);
    const stored = await db.knex("things").orderBy("id").select("id", "body");
    expect(stored).toEqual(rows);
  });
});
