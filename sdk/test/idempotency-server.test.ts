import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../test/helpers/http-server.js";
import { actorOf } from "../../src/domain/environments.js";
import { IdempotencyService } from "../../src/services/idempotency.js";
import { ConflictError, Mailroom } from "../src/index.js";
import { aMessage } from "./helpers.js";

/**
 * A `409 idempotency_key_in_use` from the real server, whose lock is not the default 60 s: the
 * SDK waits for its timeout plus the lock the server says it keeps (`lock_seconds`).
 */
describe("a key in use, against a server with a 1 s lock", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ IDEMPOTENCY_LOCK_SECONDS: "1" });
  });
  afterAll(async () => server?.close());

  it("is waited out for the timeout plus the server's lock, then thrown as a ConflictError carrying the key", async () => {
    const body = aMessage();
    // The first request holds the key and is still running: the test's clock stands still, so its lock never runs out.
    const principal = await server.testApp.runtime.services.auth.authenticate(server.sandboxKey, "127.0.0.1");
    const scope = { workspaceId: principal.workspaceId, environment: principal.environment };
    await server.testApp.runtime.services.idempotency.claim(scope, "still-running", IdempotencyService.fingerprint("createMessage", "/v1/messages", body), actorOf(principal.credential));
    const mr = new Mailroom({ apiKey: server.sandboxKey, baseUrl: server.baseUrl, timeout: 500, maxRetries: 1 });

    const started = Date.now();
    const error = await mr.messages.create(body, { idempotencyKey: "still-running" }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ code: "idempotency_key_in_use", idempotency_key: "still-running", problem: { lock_seconds: 1 } });
    // 0.5 s timeout + 1 s lock, polled once a second: two or three polls, not a minute of them.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
