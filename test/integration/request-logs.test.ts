import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runMaintenance } from "../../src/maintenance.js";
import { databases, type TestDatabase } from "../helpers/databases.js";
import { signedUp } from "../helpers/dashboard-session.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

interface RequestLog {
  id: string;
  object: string;
  environment: string;
  method: string;
  path: string;
  operation: string | null;
  status: number;
  error_code: string | null;
  error: Record<string, unknown> | null;
  duration_ms: number;
  credential: { type: string; id: string };
  ip_address: string | null;
  user_agent: string | null;
  idempotency_key: string | null;
  idempotent_replayed: boolean;
  created_at: string;
}

const quietLog = { info() {}, warn() {}, error() {} };

describe.each(databases)("Request log ($name)", (database: TestDatabase) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(database);
  });
  afterEach(async () => t.close());

  /** The entries written so far (they are written about once a second; tests do not wait). */
  const logs = async (query = "", key?: string): Promise<RequestLog[]> => {
    await t.runtime.services.requestLogs.flush();
    const res = await t.call({ method: "GET", url: `/v1/request-logs${query}`, ...(key ? { key } : {}) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };
  /** A key's id, found without a request (which would be logged). */
  const keyIdOf = async (key: string) => (await t.runtime.services.auth.authenticate(key, "127.0.0.1")).credential.id;

  describe("listRequestLogs", () => {
    it("records an accepted send under its Request-Id, with its key, address, agent and Idempotency-Key", async () => {
      const sent = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage(), headers: { "idempotency-key": "order-1042", "user-agent": "acme-shop/2.1" } });
      expect(sent.statusCode).toBe(202);
      const [entry] = await logs();
      expect(entry).toEqual({
        id: sent.headers["request-id"],
        object: "request_log",
        environment: "sandbox",
        method: "POST",
        path: "/v1/messages",
        operation: "createMessage",
        status: 202,
        error_code: null,
        error: null,
        duration_ms: expect.any(Number),
        credential: { type: "api_key", id: await keyIdOf(t.workspace.sandboxKey) },
        ip_address: "127.0.0.1",
        user_agent: "acme-shop/2.1",
        idempotency_key: "order-1042",
        idempotent_replayed: false,
        created_at: new Date(t.clock.now()).toISOString(),
      });
      expect(entry!.duration_ms).toBeGreaterThan(0);
    });

    it("keeps the problem a failed request was answered with, and marks a replayed answer", async () => {
      const refused = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ to: "ada@" }) });
      expect(refused.statusCode).toBe(422);
      const first = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage(), headers: { "idempotency-key": "k-1" } });
      const replay = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage(), headers: { "idempotency-key": "k-1" } });
      expect(replay.headers["idempotent-replayed"]).toBe("true");

      const [replayed, original, failed] = await logs();
      expect(failed).toMatchObject({ id: refused.headers["request-id"], status: 422, error_code: "validation_failed", error: refused.json() });
      expect(failed!.error).toMatchObject({ errors: [{ pointer: "/to" }] });
      expect(original).toMatchObject({ id: first.headers["request-id"], status: 202, idempotent_replayed: false });
      expect(replayed).toMatchObject({ id: replay.headers["request-id"], status: 202, idempotency_key: "k-1", idempotent_replayed: true });
    });

    it("records refusals of a known credential (permission, rate limit) but not an unknown key's, nor reads of the log", async () => {
      const created = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "sender", permission: "sending_access" } });
      const sender = created.json().secret as string;
      expect((await t.call({ method: "GET", url: "/v1/domains", key: sender })).statusCode).toBe(403);
      expect((await t.call({ method: "GET", url: "/v1/workspace", key: "svc_test_nope" })).statusCode).toBe(401);
      await logs(); // a read of the log: not logged
      await t.call({ method: "GET", url: `/v1/request-logs/${created.headers["request-id"]}` });

      const entries = await logs();
      expect(entries.map((e) => [e.operation, e.status, e.error_code])).toEqual([
        ["listDomains", 403, "insufficient_permission"],
        ["createApiKey", 201, null],
      ]);
      expect(entries[0]!.credential).toEqual({ type: "api_key", id: created.json().id });
    });

    it("records a known key's request refused for its caller's address (allowed_ips), at the address it came from", async () => {
      const created = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "office", restrictions: { allowed_ips: ["203.0.113.0/24"] } } });
      const refused = await t.call({ method: "GET", url: "/v1/workspace", key: created.json().secret, remoteAddress: "198.51.100.4" });
      expect(refused.statusCode).toBe(403);
      const [entry] = await logs();
      expect(entry).toMatchObject({ id: refused.headers["request-id"], operation: "getWorkspace", status: 403, error_code: "ip_not_allowed", ip_address: "198.51.100.4", credential: { type: "api_key", id: created.json().id } });
    });

    it("records a request refused by the rate limit", async () => {
      await t.restart({ RATE_LIMIT_REQUESTS: "1" });
      expect((await t.call({ method: "GET", url: "/v1/workspace" })).statusCode).toBe(200);
      expect((await t.call({ method: "GET", url: "/v1/workspace" })).statusCode).toBe(429);
      await t.runtime.services.requestLogs.flush();
      const entries = (await t.runtime.repositories.requestLogs.list({ workspaceId: t.workspace.id, environment: "sandbox" }, {}, { limit: 10 })).data;
      expect(entries.map((e) => [e.status, e.error_code])).toEqual([
        [429, "rate_limited"],
        [200, null],
      ]);
    });

    it("records a member's requests (the dashboard's) under their user id", async () => {
      const owner = await signedUp(t, { email: "ada@acme.example", password: "correct horse battery staple", workspace_name: "Acme" });
      const token = await owner.session.token(owner.workspaceId);
      expect((await t.call({ method: "GET", url: "/v1/workspace", key: token })).statusCode).toBe(200);
      expect((await logs("", token))[0]).toMatchObject({ operation: "getWorkspace", credential: { type: "user", id: owner.userId } });
    });

    it("filters by status or status class, method, operation, credential and time, newest first", async () => {
      const created = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "second" } });
      const second = created.json().secret as string;
      await t.call({ method: "POST", url: "/v1/messages", payload: aMessage() });
      t.clock.advance(60_000);
      await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ to: "bob@" }) });
      await t.call({ method: "GET", url: "/v1/messages/msg_nothing", key: second });
      const ops = (list: RequestLog[]) => list.map((e) => `${e.operation} ${e.status}`);

      expect(ops(await logs())).toEqual(["getMessage 404", "createMessage 422", "createMessage 202", "createApiKey 201"]);
      expect(ops(await logs("?status=4xx"))).toEqual(["getMessage 404", "createMessage 422"]);
      expect(ops(await logs("?status=422"))).toEqual(["createMessage 422"]);
      expect(ops(await logs("?status=2xx&method=POST&operation=createMessage"))).toEqual(["createMessage 202"]);
      expect(ops(await logs("?method=GET"))).toEqual(["getMessage 404"]);
      expect(ops(await logs(`?credential_id=${created.json().id}`))).toEqual(["getMessage 404"]);
      const since = new Date(t.clock.now()).toISOString();
      expect(ops(await logs(`?created_after=${since}`))).toEqual(["getMessage 404", "createMessage 422"]);
      expect(ops(await logs(`?created_before=${since}`))).toEqual(["createMessage 202", "createApiKey 201"]);
      const page = await t.call({ method: "GET", url: "/v1/request-logs?limit=3" });
      expect(page.json()).toMatchObject({ has_more: true, next_cursor: expect.any(String) });
      expect(ops((await t.call({ method: "GET", url: `/v1/request-logs?after=${page.json().next_cursor}` })).json().data)).toEqual(["createApiKey 201"]);
    });

    it("shows each environment its own requests, and no other workspace's", async () => {
      const live = await t.call({ method: "GET", url: "/v1/workspace", key: t.workspace.liveKey });
      const other = await t.call({ method: "GET", url: "/v1/workspace", key: t.other.sandboxKey });
      await t.call({ method: "GET", url: "/v1/workspace" });
      expect((await logs()).map((e) => e.environment)).toEqual(["sandbox"]);
      expect((await logs("", t.workspace.liveKey)).map((e) => e.id)).toEqual([live.headers["request-id"]]);
      expect((await logs("", t.other.sandboxKey)).map((e) => e.id)).toEqual([other.headers["request-id"]]);
    });

    it.each(["?status=4x", "?status=600", "?method=TRACE", "?operation=create-message", "?created_after=yesterday"])("refuses %s with 422", async (query) => {
      const res = await t.call({ method: "GET", url: `/v1/request-logs${query}` });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ location: "query" }] });
    });
  });

  describe("getRequestLog", () => {
    it("finds a request by its Request-Id, and 404s another environment's or workspace's", async () => {
      const sent = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ to: "ada@" }) });
      const id = sent.headers["request-id"] as string;
      await t.runtime.services.requestLogs.flush();
      const found = await t.call({ method: "GET", url: `/v1/request-logs/${id}` });
      expect(found.statusCode, found.body).toBe(200);
      expect(found.json()).toMatchObject({ id, status: 422, error_code: "validation_failed", error: { request_id: id } });
      for (const key of [t.workspace.liveKey, t.other.sandboxKey]) {
        const res = await t.call({ method: "GET", url: `/v1/request-logs/${id}`, key });
        expect(res.statusCode).toBe(404);
        expect(res.json()).toMatchObject({ code: "not_found" });
      }
      expect((await t.call({ method: "GET", url: "/v1/request-logs/req_nothing" })).statusCode).toBe(404);
    });

    it("needs a full_access key", async () => {
      const created = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "sender", permission: "sending_access" } });
      const res = await t.call({ method: "GET", url: `/v1/request-logs/${created.headers["request-id"]}`, key: created.json().secret });
      expect(res.statusCode).toBe(403);
      expect((await t.call({ method: "GET", url: "/v1/request-logs", key: created.json().secret })).statusCode).toBe(403);
    });
  });

  describe("retention", () => {
    it("removes entries older than REQUEST_LOG_RETENTION_DAYS in the maintenance round", async () => {
      await t.restart({ REQUEST_LOG_RETENTION_DAYS: "2" });
      await t.call({ method: "GET", url: "/v1/workspace" });
      t.clock.advance(36 * 3_600_000);
      await t.call({ method: "GET", url: "/v1/domains" });
      await t.runtime.services.requestLogs.flush();
      t.clock.advance(13 * 3_600_000); // the first is now 49 hours old, the second 13
      await runMaintenance(t.runtime, quietLog);
      expect((await logs()).map((e) => e.operation)).toEqual(["listDomains"]);
    });

    it("keeps no log at all with REQUEST_LOG_RETENTION_DAYS=0", async () => {
      await t.restart({ REQUEST_LOG_RETENTION_DAYS: "0" });
      await t.call({ method: "GET", url: "/v1/workspace" });
      expect(await logs()).toEqual([]);
    });
  });
});
