import { createServer, type Server as NetServer } from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/connection.js";
import { databases } from "../helpers/databases.js";
import { apiBase, bootstrapped, killServer, startServer, waitForLog, withTimeout, type Server } from "../helpers/server-process.js";
import { aMessage } from "../helpers/test-app.js";

/** A port on loopback that another process holds, as a second `make run` or a stale server would. */
async function takenPort(): Promise<{ port: number; release(): Promise<void> }> {
  const holder: NetServer = createServer();
  await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
  return { port: (holder.address() as AddressInfo).port, release: () => new Promise((resolve) => holder.close(() => resolve())) };
}

let server: Server | null = null;
let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  if (server) await killServer(server);
  server = null;
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

describe.each(databases)("starting serve ($name)", (database) => {
  /** A database with one sandbox message queued by an API-only process (no worker took it). */
  const withQueuedMessage = async () => {
    const db = await database.create();
    cleanups.push(db.drop);
    const { env, sandboxKey } = await bootstrapped(database, db, { SHUTDOWN_GRACE_MS: "10000" });
    const api = startServer(env, ["api"]);
    server = api;
    const base = await apiBase(api);
    const sent = await fetch(`${base}/v1/messages`, { method: "POST", headers: { authorization: `Bearer ${sandboxKey}`, "content-type": "application/json" }, body: JSON.stringify(aMessage({ to: "delivered@simulator.test" })) });
    expect(sent.status).toBe(202);
    const messageId = ((await sent.json()) as { id: string }).id;
    api.child.kill("SIGTERM");
    expect(await withTimeout(api.exited, 30_000, "the API process's exit")).toEqual({ code: 0, signal: null });
    server = null;
    return { db, env, messageId };
  };

  /** The message's status and its job's lock, as the failed start left them. */
  const leftBehind = async (url: string, messageId: string) => {
    const check = openDatabase(url);
    try {
      const message = (await check.knex("messages").where("id", messageId).first("status")) as { status: string };
      const jobs = (await check.knex("jobs").where("message_id", messageId).select("locked_by")) as Array<{ locked_by: string | null }>;
      return { status: message.status, jobs };
    } finally {
      await check.close();
    }
  };

  it.each([
    ["the HTTP API's", "PORT"],
    ["the inbound SMTP server's", "INBOUND_SMTP_PORT"],
  ])("stops with one line and takes no job when %s port is in use: every door is bound before the worker starts", { timeout: 120_000 }, async (_door, variable) => {
    const { db, env, messageId } = await withQueuedMessage();
    const taken = await takenPort();
    cleanups.push(taken.release);

    server = startServer({ ...env, [variable]: String(taken.port) });
    const exit = await withTimeout(server.exited, 60_000, "the failed start's exit");
    expect(exit, server.stdout + server.stderr).toEqual({ code: 1, signal: null });
    expect(server.stderr.trim()).toBe(`port ${taken.port} on 127.0.0.1 is in use (${variable}): another process listens there; stop it or set ${variable} to a free port`);
    // The worker never started: the message waits, unclaimed, for the next process to send it.
    expect(await leftBehind(db.url, messageId)).toEqual({ status: "queued", jobs: [{ locked_by: null }] });
    expect(server.records.some((r) => r.msg === "mailroom is running")).toBe(false);
  });

  it("stops cleanly on SIGTERM during start-up, before any door opens", { timeout: 120_000 }, async () => {
    const { db, env, messageId } = await withQueuedMessage();
    // Start-up waits on the migration lock (as behind another node's migration) until the test frees it.
    const lock = openDatabase(db.url);
    cleanups.push(() => lock.close());
    await lock.knex("knex_migrations_lock").update({ is_locked: 1 });

    server = startServer(env);
    await waitForLog(server, (r) => r.msg === "starting", 60_000);
    server.child.kill("SIGTERM");
    await waitForLog(server, (r) => typeof r.msg === "string" && r.msg.startsWith("shutting down"), 10_000);
    await lock.knex("knex_migrations_lock").update({ is_locked: 0 });

    const exit = await withTimeout(server.exited, 30_000, "the server's exit");
    expect(exit, server.stdout + server.stderr).toEqual({ code: 0, signal: null });
    expect(server.records.at(-1)?.msg).toBe("stopped");
    expect(server.records.some((r) => r.msg === "mailroom is running" || String(r.msg).startsWith("Server listening"))).toBe(false);
    expect(await leftBehind(db.url, messageId)).toEqual({ status: "queued", jobs: [{ locked_by: null }] });
  });
});
