import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import { expect } from "vitest";
import { buildApp } from "../../src/app.js";
import { loadConfig, type Config } from "../../src/config.js";
import { ManualClock } from "../../src/domain/clock.js";
import type { Lifecycle } from "../../src/http/readiness.js";
import { createRuntime, type Runtime } from "../../src/runtime.js";
import type { TestDatabase } from "./databases.js";

export interface TestApp {
  app: FastifyInstance;
  runtime: Runtime;
  clock: ManualClock;
  lifecycle: Lifecycle;
  /** A workspace with a full-access key per environment. */
  workspace: { id: string; sandboxKey: string; liveKey: string };
  /** A second, unrelated workspace (tenant isolation tests). */
  other: { id: string; sandboxKey: string; liveKey: string };
  /** Calls the API with a key (default: the workspace's sandbox key). */
  call(options: InjectOptions & { key?: string | null }): Promise<LightMyRequestResponse>;
  /**
   * Adds a sending domain to the workspace and marks it verified without DNS, so live mail may be
   * sent from it (test/integration/domains.test.ts and live-delivery.test.ts verify through DNS).
   */
  verifiedDomain(name: string): Promise<void>;
  /** Runs the delivery worker until no job is due. */
  drain(): Promise<void>;
  /** Runs the webhook dispatcher until no delivery is due (at the test clock's now). */
  drainWebhooks(): Promise<void>;
  /**
   * Closes the app and runtime as a process exit would, then opens a new runtime and app on the
   * same database (same clock, workspaces and keys). `app` and `runtime` point at the new ones.
   * `changes` to the environment apply from then on (a new SECRET_KEY, say).
   */
  restart(changes?: Record<string, string>): Promise<void>;
  close(): Promise<void>;
}

/**
 * Test apps not closed yet, with the test that made each. A test that never closes its app leaves
 * its MariaDB database behind; test/helpers/database-pool.ts closes what a file left open and
 * fails the file, naming the test.
 */
export const openTestApps = new Map<TestApp, string>();

/** SQLite generates its secret into DATA_DIR; MySQL needs one given (every node shares it). */
const TEST_SECRET_KEY = "0123456789abcdef".repeat(4);

/**
 * A fresh database, runtime and app for one test, with a manual clock. The worker is not
 * started: tests drive it with `drain()` so that every step is deterministic.
 */
export async function createTestApp(database: TestDatabase, env: Record<string, string> = {}): Promise<TestApp> {
  const db = await database.createMigrated();
  try {
    const configWith = (changes: Record<string, string>): Config => loadConfig({
      DATABASE_URL: db.url,
      DATA_DIR: db.dataDir,
      LOG_LEVEL: "silent",
      // No test reaches a real resolver: port 1 on loopback refuses at once, so live mail a test
      // did not point at its own DNS server is deferred (4.4.3) instead of leaving the machine.
      DNS_SERVERS: "127.0.0.1:1",
      // Webhook receivers in tests listen on loopback; the SSRF tests turn the guard back on.
      WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
      // Attachment URLs in tests are loopback servers too; attachment-urls.test.ts turns the guard on.
      ATTACHMENT_FETCH_ALLOW_PRIVATE_TARGETS: "true",
      // Messages are composed on the worker's event loop: a compose thread takes ~0.5 s to start,
      // and most tests build a fresh app. The live harness (test/helpers/live-delivery.ts) uses
      // the thread as production does, and test/unit/compose-threads.test.ts tests the pool.
      DELIVERY_COMPOSE_THREADS: "0",
      ...(database.name === "mysql" ? { SECRET_KEY: TEST_SECRET_KEY } : {}),
      ...env,
      ...changes,
    });
    let config = configWith({});
    const clock = new ManualClock(Date.now());
    const lifecycle: Lifecycle = { ready: true };
    const open = async () => {
      const runtime = await createRuntime(config, { clock });
      const app = await buildApp({ runtime, lifecycle, logger: false });
      await app.ready();
      return { runtime, app };
    };
    let { runtime, app } = await open();
    const first = await runtime.services.workspace.bootstrap("Acme");
    const second = await runtime.services.workspace.bootstrap("Globex");
    const workspace = { id: first.workspace_id, sandboxKey: first.sandbox_key, liveKey: first.live_key };
    const other = { id: second.workspace_id, sandboxKey: second.sandbox_key, liveKey: second.live_key };
    const shutdown = async () => {
      await app.close();
      await runtime.close();
    };
    const testApp: TestApp = {
      app,
      runtime,
      clock,
      lifecycle,
      workspace,
      other,
      call: ({ key, headers, ...options }) =>
        app.inject({
          ...options,
          headers: { ...(key === null ? {} : { authorization: `Bearer ${key ?? workspace.sandboxKey}` }), ...headers },
        }),
      async verifiedDomain(name) {
        const principal = { workspaceId: workspace.id, environment: "live" as const, credential: { kind: "api_key" as const, id: "test", permission: "full_access" as const } };
        const domain = await runtime.services.domains.create(principal, { name });
        const now = clock.now();
        const records = domain.records.map((record) => ({ ...record, status: "verified" as const, found: [record.value] }));
        const stored = (await runtime.repositories.domains.find(workspace.id, domain.id))!;
        // Verified by fiat: no DNS publishes it, so no automatic check, and no domain event.
        const check = { status: "verified" as const, records, dkim_keys: stored.dkim_keys, verified_at: now, last_checked_at: now, failing_since: null, next_check_at: null };
        await runtime.repositories.domains.saveCheck(workspace.id, domain.id, stored, check, []);
      },
      async drain() {
        for (let i = 0; i < 100; i++) if ((await runtime.worker.tick()) === 0) return;
        throw new Error("the worker did not drain in 100 ticks");
      },
      async drainWebhooks() {
        for (let i = 0; i < 100; i++) if ((await runtime.dispatcher.tick()) === 0) return;
        throw new Error("the webhook dispatcher did not drain in 100 ticks");
      },
      async restart(changes) {
        await shutdown();
        if (changes) config = configWith(changes);
        ({ runtime, app } = await open());
        testApp.runtime = runtime;
        testApp.app = app;
      },
      async close() {
        // A second close (an afterEach that closes whatever the last test left) is a no-op: a
        // MariaDB database must not go back to the pool twice.
        if (!openTestApps.delete(testApp)) return;
        try {
          await shutdown();
        } finally {
          await db.drop();
        }
      },
    };
    const { currentTestName, testPath } = expect.getState();
    openTestApps.set(testApp, `${currentTestName ?? "a hook outside any test"} (${testPath ?? "unknown file"})`);
    return testApp;
  } catch (error) {
    await db.drop();
    throw error;
  }
}

/** A minimal valid message body. */
export const aMessage = (overrides: Record<string, unknown> = {}) => ({
  from: "Acme <hello@acme.example>",
  to: "ada@example.com",
  subject: "Welcome",
  html: "<p>Hello Ada</p>",
  ...overrides,
});
