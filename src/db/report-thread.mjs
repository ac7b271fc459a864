// The entry of the SQLite report thread (src/db/report-reader.ts): a read-only connection of its
// own to the database file, running the long reads that would otherwise stall the event loop
// (better-sqlite3 is synchronous). Plain JavaScript, since it needs no project code.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

const db = new Database(workerData.filename, { readonly: true, fileMustExist: true });
db.pragma("busy_timeout = 5000");

parentPort.on("message", ({ id, sql, bindings }) => {
  try {
    // knex turns booleans and dates into numbers as it runs a query; a raw statement does not.
    const values = bindings.map((value) => (typeof value === "boolean" ? Number(value) : value instanceof Date ? value.valueOf() : value));
    parentPort.postMessage({ id, rows: db.prepare(sql).all(...values) });
  } catch (error) {
    parentPort.postMessage({ id, error: { message: error.message, code: error.code } });
  }
});
