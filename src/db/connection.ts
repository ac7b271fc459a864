import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import knexFactory, { type Knex } from "knex";
import { mysqlDialect } from "./dialects/mysql.js";
import { sqliteDialect } from "./dialects/sqlite.js";
import type { Dialect } from "./dialects/dialect.js";
import { migrationSource } from "./migrations/index.js";

export interface Database {
  knex: Knex;
  dialect: Dialect;
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
    // SQLite has one writer; one connection makes that explicit and lets group commit batch.
    pool: {
      min: 1,
      max: 1,
      afterCreate(conn: { pragma(sql: string): unknown }, done: (err: Error | null, conn: unknown) => void) {
        // WAL lets readers proceed during a write; FULL makes every commit durable before the 2xx.
        conn.pragma("journal_mode = WAL");
        conn.pragma("synchronous = FULL");
        conn.pragma("busy_timeout = 5000");
        conn.pragma("foreign_keys = ON");
        done(null, conn);
      },
    },
  });
  return { knex, dialect: sqliteDialect, close: () => knex.destroy() };
}

function openMysql(url: string): Database {
  const knex = knexFactory({
    client: "mysql2",
    connection: { uri: url, charset: "utf8mb4", supportBigNumbers: true, bigNumberStrings: false, timezone: "Z" } as Knex.MySql2ConnectionConfig,
    pool: { min: 0, max: 10 },
  });
  return { knex, dialect: mysqlDialect, close: () => knex.destroy() };
}

export async function migrate(db: Database): Promise<void> {
  await db.knex.migrate.latest({ migrationSource });
}
