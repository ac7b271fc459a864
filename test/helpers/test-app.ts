import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import { buildApp } from "../../src/app.js";
import { loadConfig, type Config } from "../../src/config.js";
import { ManualClock } from "../../src/domain/clock.js";
import type { Lifecycle } from "../../src/http/handlers.js";
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
  /** Runs the delivery worker until no job is due. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A fresh database, runtime and app for one test, with a manual clock. The worker is not
 * started: tests drive it with `drain()` so that every step is deterministic.
 */
export async function createTestApp(database: TestDatabase, env: Record<string, string> = {}): Promise<TestApp> {
  const db = await database.create();
  const config: Config = loadConfig({ DATABASE_URL: db.url, DATA_DIR: db.dataDir, LOG_LEVEL: "silent", ...env });
  const clock = new ManualClock(Date.now());
  const runtime = await createRuntime(config, { clock });
  const lifecycle: Lifecycle = { ready: true };
  const app = await buildApp({ runtime, lifecycle, logger: false });
  await app.ready();
  const first = await runtime.services.workspace.bootstrap("Acme");
  const second = await runtime.services.workspace.bootstrap("Globex");
  const workspace = { id: first.workspace_id, sandboxKey: first.sandbox_key, liveKey: first.live_key };
  const other = { id: second.workspace_id, sandboxKey: second.sandbox_key, liveKey: second.live_key };
  return {
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
    async drain() {
      for (let i = 0; i < 100; i++) if ((await runtime.worker.tick()) === 0) return;
      throw new Error("the worker did not drain in 100 ticks");
    },
    async close() {
      await app.close();
      await runtime.close();
      await db.drop();
    },
  };
}

/** A minimal valid message body. */
export const aMessage = (overrides: Record<string, unknown> = {}) => ({
  from: "Acme <hello@acme.example>",
  to: "ada@example.com",
  subject: "Welcome",
  html: "<p>Hello Ada</p>",
  ...overrides,
});
