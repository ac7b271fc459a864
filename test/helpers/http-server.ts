import { databases } from "./databases.js";
import { createTestApp, type TestApp } from "./test-app.js";

export interface TestServer {
  /** e.g. http://127.0.0.1:41234 */
  baseUrl: string;
  /** The full-access sandbox key of the test workspace. */
  sandboxKey: string;
  testApp: TestApp;
  close(): Promise<void>;
}

/**
 * The real server on a loopback port, over a fresh SQLite database, for clients (SDK, CLI) that
 * speak HTTP. The worker is not running: call `testApp.drain()` to process the sandbox queue.
 */
export async function startTestServer(env: Record<string, string> = {}): Promise<TestServer> {
  const sqlite = databases.find((database) => database.name === "sqlite");
  if (!sqlite) throw new Error("no SQLite test database");
  const testApp = await createTestApp(sqlite, env);
  const address = await testApp.app.listen({ host: "127.0.0.1", port: 0 });
  return { baseUrl: address, sandboxKey: testApp.workspace.sandboxKey, testApp, close: () => testApp.close() };
}
