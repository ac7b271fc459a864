import { mkdirSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import knexFactory, { type Knex } from "knex";
import { credentialUrlProblem } from "../domain/redact.js";
import { mysqlDialect } from "./dialects/mysql.js";
import { sqliteDialect } from "./dialects/sqlite.js";
import type { Dialect } from "./dialects/dialect.js";
import { migrationSource } from "./migrations/index.js";
import { inlineReports, SqliteReportThread, type ReportReader } from "./report-reader.js";

export interface Database {
  knex: Knex;
  dialect: Dialect;
  /** Where reads that scan many rows run (report-reader.ts). */
  reports: ReportReader;
  close(): Promise<void>;
}

/**
 * Opens the database named by DATABASE_URL: `sqlite:PATH` (embedded; `sqlite::memory:` for
 * throwaway use) or `mysql://user:pass@host:port/db`.
 */
export function openDatabase(url: string): Database {
  if (url.startsWith("sqlite:")) return openSqlite(url.slice("sqlite:".length));
  return openMysql(url.replace(/^mariadb:/, "mysql:"));
}

function openSqlite(path: string): Database {
  const filename = path === ":memory:" ? ":memory:" : resolve(path);
  if (filename !== ":memory:") mkdirSync(dirname(filename), { recursive: true });
  const knex = knexFactory({
    client: "better-sqlite3",
    connection: { filename },
    useNullAsDefault: true,
    // Knex otherwise rewrites a failed query's message to the SQL with every value inlined
    // (message bodies, recipients, password hashes), and failures are logged.
    compileSqlOnError: false,
    // SQLite has one writer; one connection makes that explicit and lets group commit batch.
    pool: {
      min: 1,
      max: 1,
      afterCreate(conn: RawSqlite, done: (err: Error | null, conn: unknown) => void) {
        // WAL lets readers proceed during a write. Every commit is durable before the 2xx: the
        // WAL is synced after each write transaction, off the event loop (tuneConnection).
        conn.pragma("journal_mode = WAL");
        conn.pragma(filename === ":memory:" ? "synchronous = FULL" : "synchronous = NORMAL");
        conn.pragma("busy_timeout = 5000");
        conn.pragma("foreign_keys = ON");
        tuneConnection(conn, filename === ":memory:" ? null : `${filename}-wal`);
        done(null, conn);
      },
    },
  });
  const reports = filename === ":memory:" ? inlineReports : new SqliteReportThread(filename);
  return {
    knex,
    dialect: sqliteDialect,
    reports,
    close: async () => {
      await reports.close();
      await knex.destroy();
    },
  };
}

/** The part of a better-sqlite3 connection and its statements that knex uses. */
interface RawStatement {
  readonly readonly: boolean;
  run(...bindings: unknown[]): unknown;
  all(...bindings: unknown[]): unknown;
}
interface RawSqlite {
  readonly inTransaction: boolean;
  pragma(sql: string): unknown;
  close(): unknown;
  prepare(sql: string): RawStatement;
}

const STATEMENT_CACHE_SIZE = 200;

/**
 * Two things knex's better-sqlite3 client does not do, patched into the connection it uses:
 *
 * - Statement cache. Knex prepares every query anew; the group commit and the hot paths run the
 *   same few statements all the time, and preparing one costs about as much as running it.
 * - Durable commits off the event loop (`walPath` null: in-memory, nothing to sync).
 *   better-sqlite3 is synchronous, so with synchronous=FULL every commit's fsync stalls the whole
 *   process (0.2 ms on a quiet disk, 10 ms on a busy one). Instead the connection runs with
 *   synchronous=NORMAL (a commit writes the WAL without syncing it) and the statement that ends
 *   a write transaction - COMMIT, or a write outside a transaction - returns a promise that
 *   settles once the WAL has been fdatasync'ed on libuv's thread pool. FULL is exactly NORMAL
 *   plus that sync after each commit. Knex awaits the promise before it releases the pool's only
 *   connection, so no write resolves, and no other statement of the process sees its data,
 *   before it is durable; meanwhile the event loop keeps parsing and answering requests (the
 *   group commit's next batch forms meanwhile).
 */
function tuneConnection(conn: RawSqlite, walPath: string | null): void {
  const prepare = conn.prepare.bind(conn);
  const wal = walPath === null ? null : fileSyncer(walPath);
  if (wal !== null) {
    const close = conn.close.bind(conn);
    conn.close = () => {
      wal.close();
      return close();
    };
  }
  const cache = new Map<string, RawStatement>();
  let dirty = false; // a write happened since the WAL was last synced
  // Runs a statement; the one that ends a write transaction (COMMIT, or a write outside a
  // transaction) answers once the WAL is synced.
  const durable = <T>(statement: RawStatement, execute: () => T): T | Promise<T> => {
    const result = execute();
    if (!statement.readonly) dirty = true; // COMMIT itself counts as read-only
    if (!dirty || conn.inTransaction) return result;
    dirty = false;
    return wal!.sync().then(() => result);
  };
  conn.prepare = (sql: string) => {
    const cached = cache.get(sql);
    if (cached) {
      cache.delete(sql); // most recently used last
      cache.set(sql, cached);
      return cached;
    }
    const statement = prepare(sql);
    if (wal !== null) {
      const run = statement.run.bind(statement);
      const all = statement.all.bind(statement);
      statement.run = (...bindings: unknown[]) => durable(statement, () => run(...bindings));
      statement.all = (...bindings: unknown[]) => durable(statement, () => all(...bindings));
    }
    cache.set(sql, statement);
    if (cache.size > STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    return statement;
  };
}

/**
 * fdatasync of a file through a handle kept open between calls. The WAL stays the same file while
 * its connection is open (SQLite deletes it only when the last connection closes), and the
 * handle is closed with the connection.
 */
function fileSyncer(path: string): { sync(): Promise<void>; close(): void } {
  let handle: Promise<FileHandle> | null = null;
  const sync = async (): Promise<void> => {
    handle ??= open(path, "r");
    const file = await handle.catch((error: unknown) => {
      handle = null;
      throw error;
    });
    await file.datasync();
  };
  const close = () => {
    void handle?.then((file) => file.close()).catch(() => {});
    handle = null;
  };
  return { sync, close };
}

function openMysql(url: string): Database {
  // loadConfig has checked DATABASE_URL; a URL from elsewhere (tests) is checked here, because
  // mysql2 parses it only as it connects, with an error that carries it, password included.
  const problem = credentialUrlProblem(url);
  if (problem !== null) throw new Error(`the database URL ${problem}`);
  const knex = knexFactory({
    client: "mysql2",
    connection: { uri: url, charset: "utf8mb4", supportBigNumbers: true, bigNumberStrings: false, timezone: "Z" } as Knex.MySql2ConnectionConfig,
    compileSqlOnError: false, // as for SQLite; mysql2's own `sql` property is dropped by the log serializer (app.ts)
    pool: {
      min: 0,
      max: 10,
      // READ COMMITTED, not InnoDB's REPEATABLE READ: under it a locking read (a worker's claim,
      // FOR UPDATE SKIP LOCKED) also locks the gaps between the rows it scans, and deadlocks with
      // the inserts of newly accepted jobs into those gaps. Nothing here relies on gap locks:
      // every check-then-write is guarded by a unique key or a lock on an existing row.
      afterCreate(conn: { query(sql: string, callback: (error: Error | null) => void): void }, done: (error: Error | null, conn: unknown) => void) {
        conn.query("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", (error) => done(error, conn));
      },
    },
  });
  return { knex, dialect: mysqlDialect, reports: inlineReports, close: () => knex.destroy() };
}

/**
 * The migration lock stayed taken through the wait: another process is migrating, or one was
 * killed while migrating and left it taken (Knex frees it only when a migration ends).
 */
export class MigrationLockedError extends Error {
  override name = "MigrationLockedError";
}

/** Knex's lock table, beside its knex_migrations (its default table name). */
const LOCK_TABLE = "knex_migrations_lock";

/**
 * Applies pending migrations. Several processes may start at once (api and worker nodes on one
 * MySQL); Knex lets one hold the migration lock and fails the others, which here wait for it.
 * The lock is never freed here: a process that waited in vain cannot tell a dead holder from a
 * slow one, so the operator decides (`migrate --unlock`).
 */
export async function migrate(db: Database, waitMs = 60_000): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    // A lock seen taken is waited on without trying: at each refusal Knex logs two lines to
    // stdout, whose advice (`knex migrate:unlock`) needs a knexfile this project does not have.
    if (!(await migrationLockTaken(db))) {
      try {
        await db.knex.migrate.latest({ migrationSource });
        return;
      } catch (error) {
        if ((error as { name?: string }).name !== "MigrationLocked") throw error;
      }
    }
    if (Date.now() >= deadline) {
      throw new MigrationLockedError(`the migration lock (${LOCK_TABLE}) stayed taken for ${Math.round(waitMs / 1000)} s: another process may be migrating; if none is (one was killed while migrating), free it with \`mailroom-server migrate --unlock\` and start again (docs/deployment.md#a-stale-migration-lock)`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function migrationLockTaken(db: Database): Promise<boolean> {
  return (await db.knex.schema.hasTable(LOCK_TABLE)) && (await db.knex(LOCK_TABLE).where("is_locked", 1).first()) !== undefined;
}

/** Frees the migration lock, whoever holds it; false when it was not taken. */
export async function unlockMigrations(db: Database): Promise<boolean> {
  const taken = await migrationLockTaken(db);
  await db.knex.migrate.forceFreeMigrationsLock({ migrationSource });
  return taken;
}
