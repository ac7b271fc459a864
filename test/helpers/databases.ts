import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import knexFactory, { type Knex } from "knex";
import { migrate, openDatabase } from "../../src/db/connection.js";

/**
 * The databases every integration test runs against (Backstage's `it.each(databases)`):
 * SQLite always, MySQL/MariaDB too when TEST_MYSQL_URL is set.
 */
export interface TestDatabase {
  name: "sqlite" | "mysql";
  /** A fresh, empty database; `drop()` removes it. */
  create(): Promise<CreatedDatabase>;
  /**
   * A database with every migration applied and no rows: what a fresh database is once a server
   * has started on it. Its own for the test, like create()'s; `drop()` ends it. Much cheaper than
   * migrating a fresh one (on MariaDB, a second per test: creating forty-odd InnoDB tables).
   */
  createMigrated(): Promise<CreatedDatabase>;
}

export interface CreatedDatabase {
  url: string;
  dataDir: string;
  drop(): Promise<void>;
}

const newDataDir = () => mkdtempSync(join(tmpdir(), "mailroom-test-"));

/** A SQLite test database is a copy of one migrated once per test file. */
let sqliteTemplate: Promise<string> | null = null;

function migratedSqliteTemplate(): Promise<string> {
  sqliteTemplate ??= (async () => {
    const dir = newDataDir();
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "template.db");
    const db = openDatabase(`sqlite:${file}`);
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
    // Closing the last connection checkpoints the WAL into the file and removes it.
    if (existsSync(`${file}-wal`)) throw new Error(`the SQLite template kept a WAL after closing: ${file}-wal`);
    return file;
  })();
  return sqliteTemplate;
}

const sqlite: TestDatabase = {
  name: "sqlite",
  async create() {
    const dataDir = newDataDir();
    return { url: `sqlite:${join(dataDir, "mailroom.db")}`, dataDir, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  },
  async createMigrated() {
    const template = await migratedSqliteTemplate();
    const created = await this.create();
    copyFileSync(template, created.url.slice("sqlite:".length));
    return created;
  },
};

/**
 * MariaDB databases that a test has finished with, emptied, for the next test of the same file.
 * A database goes back only when its schema is still the one the migrations made (a test may
 * rename a table, or roll migrations back) and the migration lock is free; otherwise it is
 * dropped. test/helpers/database-pool.ts drops the pool after each file.
 */
interface Pooled {
  name: string;
  url: string;
}
const mysqlPool: Pooled[] = [];
let migratedSchema: string | null = null;

/** Columns, types, defaults and indexes of every table: equal strings, equal schemas. */
async function schemaOf(admin: Knex, database: string): Promise<string> {
  const [columns] = await admin.raw(
    `SELECT table_name, column_name, column_type, is_nullable, column_default, extra FROM information_schema.columns
     WHERE table_schema = ? ORDER BY table_name, ordinal_position`, [database]);
  const [indexes] = await admin.raw(
    `SELECT table_name, index_name, seq_in_index, column_name, non_unique FROM information_schema.statistics
     WHERE table_schema = ? ORDER BY table_name, index_name, seq_in_index`, [database]);
  return JSON.stringify([columns, indexes]);
}

/** Empties every table but the migrations' own, and restarts auto-increment ids at 1, as in a new database. */
async function emptyForReuse(admin: Knex, database: string): Promise<boolean> {
  if ((await schemaOf(admin, database)) !== migratedSchema) return false;
  const [locks] = await admin.raw(`SELECT is_locked FROM \`${database}\`.knex_migrations_lock`);
  if ((locks as Array<{ is_locked: number }>).some((row) => row.is_locked)) return false;
  const [tables] = await admin.raw(
    `SELECT table_name AS name, auto_increment FROM information_schema.tables WHERE table_schema = ? AND table_name NOT LIKE 'knex\\_migrations%'`, [database]);
  await admin.transaction(async (trx) => {
    // A test that left a connection holding locks makes this fail fast; the database is then dropped.
    await trx.raw("SET SESSION innodb_lock_wait_timeout = 2, lock_wait_timeout = 2, foreign_key_checks = 0");
    for (const table of tables as Array<{ name: string }>) await trx.raw(`DELETE FROM \`${database}\`.\`${table.name}\``);
    await trx.raw("SET SESSION foreign_key_checks = 1");
  });
  for (const table of tables as Array<{ name: string; auto_increment: number | null }>) {
    if (table.auto_increment !== null && table.auto_increment > 1) await admin.raw(`ALTER TABLE \`${database}\`.\`${table.name}\` AUTO_INCREMENT = 1`);
  }
  return true;
}

let mysqlAdmin: Knex | null = null;
const adminOf = (baseUrl: string): Knex => (mysqlAdmin ??= knexFactory({ client: "mysql2", connection: { uri: baseUrl } as never, pool: { min: 0, max: 1 } }));

/** Drops the databases pooled by this test file (test/helpers/database-pool.ts runs it after each file). */
export async function dropPooledDatabases(): Promise<void> {
  if (!mysqlAdmin) return;
  for (const pooled of mysqlPool.splice(0)) await mysqlAdmin.raw(`DROP DATABASE IF EXISTS \`${pooled.name}\``);
  await mysqlAdmin.destroy();
  mysqlAdmin = null;
}

/** A new, empty database beside the one TEST_MYSQL_URL names. */
async function newMysqlDatabase(baseUrl: string): Promise<Pooled> {
  const url = new URL(baseUrl);
  const name = `${url.pathname.slice(1) || "mailroom_test"}_${randomBytes(4).toString("hex")}`;
  await adminOf(baseUrl).raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

const mysql = (baseUrl: string): TestDatabase => ({
  name: "mysql",
  async create() {
    const { name, url } = await newMysqlDatabase(baseUrl);
    const dataDir = newDataDir();
    return {
      url,
      dataDir,
      drop: async () => {
        await adminOf(baseUrl).raw(`DROP DATABASE IF EXISTS \`${name}\``);
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  },
  async createMigrated() {
    let pooled = mysqlPool.pop();
    if (!pooled) {
      pooled = await newMysqlDatabase(baseUrl);
      const db = openDatabase(pooled.url);
      try {
        await migrate(db);
      } finally {
        await db.close();
      }
      migratedSchema ??= await schemaOf(adminOf(baseUrl), pooled.name);
    }
    const { name, url } = pooled;
    const dataDir = newDataDir();
    return {
      url,
      dataDir,
      drop: async () => {
        rmSync(dataDir, { recursive: true, force: true });
        const admin = adminOf(baseUrl);
        const reusable = await emptyForReuse(admin, name).catch(() => false);
        if (reusable) mysqlPool.push({ name, url });
        else await admin.raw(`DROP DATABASE IF EXISTS \`${name}\``);
      },
    };
  },
});

export const databases: TestDatabase[] = [sqlite, ...(process.env.TEST_MYSQL_URL ? [mysql(process.env.TEST_MYSQL_URL)] : [])];
