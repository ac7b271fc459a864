import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import knexFactory from "knex";

/**
 * The databases every integration test runs against (Backstage's `it.each(databases)`):
 * SQLite always, MySQL/MariaDB too when TEST_MYSQL_URL is set.
 */
export interface TestDatabase {
  name: "sqlite" | "mysql";
  /** A fresh, empty database; `drop()` removes it. */
  create(): Promise<{ url: string; dataDir: string; drop(): Promise<void> }>;
}

const sqlite: TestDatabase = {
  name: "sqlite",
  async create() {
    const dataDir = mkdtempSync(join(tmpdir(), "mailroom-test-"));
    return { url: `sqlite:${join(dataDir, "mailroom.db")}`, dataDir, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  },
};

const mysql = (baseUrl: string): TestDatabase => ({
  name: "mysql",
  async create() {
    const url = new URL(baseUrl);
    const database = `${url.pathname.slice(1) || "mailroom_test"}_${randomBytes(4).toString("hex")}`;
    const admin = knexFactory({ client: "mysql2", connection: { uri: baseUrl } as never });
    await admin.raw(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    await admin.destroy();
    url.pathname = `/${database}`;
    const dataDir = mkdtempSync(join(tmpdir(), "mailroom-test-"));
    return {
      url: url.toString(),
      dataDir,
      drop: async () => {
        const dropper = knexFactory({ client: "mysql2", connection: { uri: baseUrl } as never });
        await dropper.raw(`DROP DATABASE IF EXISTS \`${database}\``);
        await dropper.destroy();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  },
});

export const databases: TestDatabase[] = [sqlite, ...(process.env.TEST_MYSQL_URL ? [mysql(process.env.TEST_MYSQL_URL)] : [])];
