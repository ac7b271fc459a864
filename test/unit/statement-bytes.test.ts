import knexFactory, { type Knex } from "knex";
import { format } from "mysql2";
import { afterAll, describe, expect, it } from "vitest";
import { insertChunked, rowBytes, STATEMENT_ROW_BYTES, updateBytes, updateEach, type RowUpdate } from "../../src/db/rows.js";

// A client that never connects: Knex compiles, mysql2 formats what it would send (values written into the SQL text).
const mysql = knexFactory({ client: "mysql2" });
afterAll(() => mysql.destroy());
type Compiled = { toSQL(): Knex.Sql };
const sent = (query: Compiled): string => {
  const { sql, bindings } = query.toSQL().toNative();
  return format(sql, bindings as Parameters<typeof format>[1]);
};
const bytes = (query: Compiled): number => Buffer.byteLength(sent(query));

/** Statements the chunking functions issue, as mysql2 would send them, instead of running them. */
function recorder(): { db: Knex.Transaction; statements: string[] } {
  const statements: string[] = [];
  const db = Object.assign((table: string) => ({ insert: (rows: object[]) => void statements.push(sent(mysql(table).insert(rows))) }), {
    raw: (sql: string, bindings: Knex.RawBinding[]) => void statements.push(sent(mysql.raw(sql, bindings))),
  });
  return { db: db as unknown as Knex.Transaction, statements };
}

const tricky = {
  id: "msg_01",
  subject: `quotes ' " and \\ backslashes, NUL \0, \b, tab \t, CR LF \r\n, Ctrl-Z \x1a`,
  name: "\\".repeat(200),
  headers: JSON.stringify({ "X-H": '"'.repeat(640) }),
  wide: "é ü 中文 😀 \u2028",
  nothing: null,
  flag: true,
  off: false,
  count: 42,
  negative: -7,
  fraction: 0.125,
  stamp: 1_767_225_600_000,
  content: Buffer.from([0, 1, 0x27, 0x5c, 0xff]),
  empty: "",
};

describe("statement bytes (mysql2's client-side formatting)", () => {
  it("counts a row exactly as it lengthens a multi-row INSERT", () => {
    for (const row of [tricky, { id: "plain", subject: "hello" }, { only: null }]) {
      const one = bytes(mysql("messages").insert([row]));
      const two = bytes(mysql("messages").insert([row, row]));
      expect(rowBytes(row), JSON.stringify(Object.keys(row))).toBe(two - one);
    }
  });

  it("counts an updateEach row exactly as it lengthens the CASE statement", async () => {
    const row: RowUpdate = { id: "msg_01", match: { workspace_id: 'ws_"1"' }, set: { mime: tricky.subject, text: tricky.wide, status: "sent", attempts: 3, detail: null } };
    const other: RowUpdate = { ...row, id: "msg_02" };
    const one = recorder();
    await updateEach(one.db, "messages", [row]);
    const two = recorder();
    await updateEach(two.db, "messages", [row, other]);
    expect(updateBytes(other)).toBe(Buffer.byteLength(two.statements[0]!) - Buffer.byteLength(one.statements[0]!));
  });

  it("splits rows into INSERTs of at most the budget by the bytes they carry, escapes included, and a larger row goes alone", async () => {
    // What 50 messages of a valid batch hold: headers of quotes and display names of backslashes,
    // which the statement doubles (one INSERT of them was 19.9 MB: past max_allowed_packet).
    const row = (i: number) => ({
      id: `msg_${i}`,
      to_list: JSON.stringify(Array.from({ length: 50 }, (_, k) => ({ name: "\\".repeat(200), email: `r${k}@example.com` }))),
      headers: JSON.stringify(Object.fromEntries(Array.from({ length: 50 }, (_, k) => [`X-H${k}`, '"'.repeat(640)]))),
      metadata: JSON.stringify(Object.fromEntries(Array.from({ length: 50 }, (_, k) => [`k${k}`, '"'.repeat(500)]))),
      subject: `hello ${i}`,
    });
    const rows = [...Array.from({ length: 50 }, (_, i) => row(i)), { id: "big", html: "\n".repeat(5 * 1024 * 1024) }, row(50)];
    const { db, statements } = recorder();
    await insertChunked(db, "messages", rows);
    expect(statements.length).toBeGreaterThan(3);
    const sizes = statements.map((s) => Buffer.byteLength(s));
    const big = statements.findIndex((s) => s.includes("'big'"));
    expect(sizes[big]).toBeGreaterThan(10 * 1024 * 1024);
    expect(statements[big]!.match(/\), \(/g)).toBeNull(); // alone
    for (const [i, size] of sizes.entries()) if (i !== big) expect(size).toBeLessThanOrEqual(STATEMENT_ROW_BYTES + 1024);
    expect(statements.join("").match(/'msg_\d+'/g)).toHaveLength(51);
  }, 30_000); // formats some 20 MB of SQL: slow on a busy machine
});
