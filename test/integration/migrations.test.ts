import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { migrate, openDatabase, type Database } from "../../src/db/connection.js";
import { databases } from "../helpers/databases.js";
import { LAUNCHER, ROOT } from "../helpers/server-process.js";

/*
 * Knex's migration lock (the row of knex_migrations_lock) stays taken when a process dies while
 * migrating; every later start, which migrates, then fails until an operator frees it
 * (docs/deployment.md#a-stale-migration-lock).
 */
describe.each(databases)("the migration lock ($name)", (database) => {
  let db: Database;
  let env: NodeJS.ProcessEnv;
  let drop: () => Promise<void>;

  beforeEach(async () => {
    const created = await database.create();
    drop = created.drop;
    env = { ...process.env, DATABASE_URL: created.url, DATA_DIR: created.dataDir, ...(database.name === "mysql" ? { SECRET_KEY: randomBytes(32).toString("hex") } : {}) };
    db = openDatabase(created.url);
    await migrate(db);
  });

  afterEach(async () => {
    await db.close();
    await drop();
  });

  /** As a process killed in the middle of migrating leaves it. */
  const leaveLockTaken = () => db.knex("knex_migrations_lock").update({ is_locked: 1 });
  const unlock = () => promisify(execFile)(LAUNCHER, ["migrate", "--unlock"], { cwd: ROOT, env, timeout: 60_000 });

  it("refuses to migrate past a lock left taken, naming the command that frees it", async () => {
    await leaveLockTaken();
    const log = vi.spyOn(console, "log");
    await expect(migrate(db, 0)).rejects.toThrow(/another process may be migrating.*free it with `mailroom-server migrate --unlock`/);
    // Nor Knex's advice on stdout, which names a command this project does not have.
    expect(log.mock.calls.flat().join("\n")).not.toMatch(/migrate:unlock/);
    log.mockRestore();
    // Not freed behind the operator's back: another process may really be migrating.
    expect(await db.knex("knex_migrations_lock").pluck("is_locked")).toEqual([1]);
  });

  it("frees a lock left taken with `mailroom-server migrate --unlock`, after which migrating works", async () => {
    await leaveLockTaken();
    const { stdout } = await unlock();
    expect(stdout.trim()).toBe("migration lock freed");
    expect(await db.knex("knex_migrations_lock").pluck("is_locked")).toEqual([0]);
    await expect(migrate(db, 0)).resolves.toBeUndefined();
  });

  it("says so when `migrate --unlock` finds the lock free", async () => {
    const { stdout } = await unlock();
    expect(stdout.trim()).toBe("the migration lock was not taken; nothing to free");
  });
});
