import type { FastifyInstance } from "fastify";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { buildApp } from "../../src/app.js";
import { generateSecret } from "../../src/domain/api-key-secret.js";
import { databases } from "../helpers/databases.js";
import { DashboardSession, signedUp } from "../helpers/dashboard-session.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

/** Every log line the app writes, as pino writes them (JSON, one per line). */
class MemoryStream {
  readonly lines: string[] = [];
  write(line: string): void {
    this.lines.push(line);
  }
  get text(): string {
    return this.lines.join("");
  }
  records(): Array<Record<string, unknown>> {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }
}

const SECRET_PATTERN = /svc_(live|test)_[0-9A-Za-z]{38}/;

describe.each(databases)("logging ($name)", (database) => {
  let t: TestApp;
  let app: FastifyInstance;
  let logs: MemoryStream;
  beforeEach(async () => {
    t = await createTestApp(database);
    logs = new MemoryStream();
    // A second app on the same runtime, logging everything it can into memory.
    app = await buildApp({ runtime: t.runtime, lifecycle: t.lifecycle, logger: { level: "trace", stream: logs } });
    await app.ready();
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await app.close();
    await t.close();
  });

  const call = (method: "GET" | "POST" | "PATCH" | "DELETE", url: string, key: string | null, payload?: object) =>
    app.inject({ method, url, ...(payload ? { payload } : {}), headers: key === null ? {} : { authorization: `Bearer ${key}` } });

  describe("every operation", () => {
    it("never writes a key secret to the logs, at any level", async () => {
      const secrets = [t.workspace.sandboxKey, t.workspace.liveKey];
      const created = await call("POST", "/v1/api-keys", t.workspace.sandboxKey, { name: "Logged?" });
      expect(created.statusCode).toBe(201);
      secrets.push(created.json().secret);
      const sending = await call("POST", "/v1/api-keys", t.workspace.sandboxKey, { name: "Sender", permission: "sending_access" });
      secrets.push(sending.json().secret);
      const rotated = await call("POST", `/v1/api-keys/${created.json().id}/rotate`, created.json().secret, { overlap_seconds: 60 });
      expect(rotated.statusCode).toBe(200);
      secrets.push(rotated.json().secret);
      const unknown = generateSecret("sandbox");
      secrets.push(unknown);

      const answers = [
        await call("GET", "/v1/workspace", rotated.json().secret),
        await call("GET", "/v1/api-keys", created.json().secret),
        await call("POST", "/v1/messages", sending.json().secret, aMessage()),
        await call("GET", "/v1/api-keys", sending.json().secret), // 403
        await call("GET", "/v1/workspace", unknown), // 401
        await call("POST", "/v1/api-keys", t.workspace.liveKey, { name: "x".repeat(200) }), // 422
        await call("DELETE", `/v1/api-keys/${created.json().id}`, t.workspace.sandboxKey),
        await call("GET", "/v1/workspace", created.json().secret), // 401, revoked
      ];
      expect(answers.map((res) => res.statusCode)).toEqual([200, 200, 202, 403, 401, 422, 200, 401]);

      // The capture is real: every request was logged, by its id.
      for (const res of answers) expect(logs.text).toContain(res.headers["request-id"] as string);
      for (const secret of secrets) {
        expect(logs.text).not.toContain(secret);
        expect(logs.text).not.toContain(secret.slice(9, 41)); // the random part alone
      }
      expect(logs.text).not.toMatch(SECRET_PATTERN);
    });

    it("logs an unexpected error with its request id, without the secret of the call", async () => {
      vi.spyOn(t.runtime.services.apiKeys, "rotate").mockRejectedValueOnce(new Error("disk on fire"));
      const key = (await call("POST", "/v1/api-keys", t.workspace.sandboxKey, { name: "Doomed" })).json();
      const res = await call("POST", `/v1/api-keys/${key.id}/rotate`, key.secret, {});
      expect(res.statusCode).toBe(500);
      const failure = logs.records().find((record) => record.reqId === res.headers["request-id"] && record.level === 50);
      expect(failure).toBeDefined();
      expect(JSON.stringify(failure)).toContain("disk on fire");
      expect(logs.text).not.toContain(key.secret);
    });

    it("never writes an invitation's secret to the logs: not from its link, its preview, nor a sign-in page that returns to it", async () => {
      const owner = await signedUp(t, { email: "ada@acme.example", workspace_name: "Acme" });
      const token = await owner.session.token(owner.workspaceId);
      const invitation = await call("POST", "/v1/invitations", token, { email: "grace@acme.example" });
      expect(invitation.statusCode).toBe(201);
      const secret = new URL(invitation.json().accept_url).pathname.split("/").pop()!;
      const html = { accept: "text/html" };

      const answers = [
        await app.inject({ method: "GET", url: `/invitations/${secret}`, headers: html }),
        await app.inject({ method: "GET", url: `/auth/invitations/${secret}` }),
        await app.inject({ method: "GET", url: `/sign-in?next=${encodeURIComponent(`/invitations/${secret}`)}`, headers: html }),
      ];
      expect(answers[1]!.statusCode).toBe(200);

      for (const res of [invitation, ...answers]) expect(logs.text).toContain(res.headers["request-id"] as string);
      expect(logs.text).toContain("/auth/invitations/[redacted]");
      expect(logs.text).not.toContain(secret);
    });

    it("never writes a message's content or a password hash to the logs when the database fails", async () => {
      // A write that fails as a deadlock, a lock timeout or a lost connection would.
      const failWrites = async (table: string, event: "INSERT" | "UPDATE") => {
        const name = `fail_${table}_${event.toLowerCase()}`;
        await t.runtime.db.knex.raw(
          database.name === "sqlite"
            ? `CREATE TRIGGER ${name} BEFORE ${event} ON ${table} BEGIN SELECT RAISE(ABORT, 'simulated lock timeout'); END`
            : `CREATE TRIGGER ${name} BEFORE ${event} ON ${table} FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'simulated lock timeout'`,
        );
        return () => t.runtime.db.knex.raw(`DROP TRIGGER IF EXISTS ${name}`);
      };
      await signedUp(t, { email: "ada@acme.example", workspace_name: "Acme" });
      const session = new DashboardSession({ ...t, app } as TestApp);
      expect((await session.signIn("ada@acme.example")).statusCode).toBe(200);

      const restoreMessages = await failWrites("messages", "INSERT");
      const restoreUsers = await failWrites("users", "UPDATE");
      try {
        const sent = await call("POST", "/v1/messages", t.workspace.sandboxKey, aMessage({ to: "patient-4711@clinic.example", subject: "Your test result", html: "<p>CONFIDENTIAL-BODY reset token 9f8e7d</p>" }));
        expect(sent.statusCode, sent.body).toBe(500);
        const changed = await session.post("/auth/password", { current_password: "correct horse battery", new_password: "a new and secret passphrase" });
        expect(changed.statusCode, changed.body).toBe(500);

        // The failures are logged, by request, with what went wrong...
        for (const res of [sent, changed]) {
          const failure = logs.records().find((record) => record.reqId === res.headers["request-id"] && record.level === 50);
          expect(JSON.stringify(failure)).toContain("simulated lock timeout");
        }
        // ...but not the values the failed statements carried.
        for (const content of ["patient-4711", "Your test result", "CONFIDENTIAL-BODY", "9f8e7d", "scrypt$", "a new and secret passphrase"]) expect(logs.text).not.toContain(content);
      } finally {
        await restoreMessages();
        await restoreUsers();
      }
    });

    it("drops a database error's statement and values (sql, bindings) from what is logged of it", async () => {
      const error = Object.assign(new Error("Deadlock found when trying to get lock"), { code: "ER_LOCK_DEADLOCK", sql: "INSERT INTO messages VALUES ('CONFIDENTIAL-BODY')", bindings: ["CONFIDENTIAL-BODY"] });
      app.log.error({ err: new Error("wrapped", { cause: error }) }, "a failure with a cause");
      app.log.error({ err: error }, "a failure");
      app.log.error({ err: new AggregateError([error], "several") }, "several failures");
      expect(logs.text).toContain("ER_LOCK_DEADLOCK");
      expect(logs.text).toContain("Deadlock found");
      expect(logs.text).not.toContain("CONFIDENTIAL-BODY");
    });

    it("redacts credentials from anything logged with request headers or a secret field", async () => {
      const secret = t.workspace.sandboxKey;
      app.log.info({ req: { headers: { authorization: `Bearer ${secret}`, cookie: `session=${secret}` } } }, "request headers");
      app.log.info({ headers: { authorization: `Bearer ${secret}` } }, "bare headers");
      app.log.info({ key: { id: "key_1", secret } }, "a key");
      expect(logs.lines.length).toBeGreaterThanOrEqual(3);
      expect(logs.text).not.toContain(secret);
      expect(logs.text).toContain("[redacted]");
    });
  });
});
