import type { LightMyRequestResponse } from "fastify";
import { STATUS_CODES } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { newId } from "../../src/domain/ids.js";
import { loadSpec } from "../../src/http/spec.js";
import { databases } from "../helpers/databases.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

const REQUEST_ID = /^req_[0-9a-z]{26}$/;

/** A problem document as RFC 9457 and the contract describe it, tied to its response. */
function expectProblem(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(body).toMatchObject({ type: `https://mailroom.dev/problems/${code}`, status, code, title: expect.any(String), detail: expect.any(String) });
  expect(body.request_id).toMatch(REQUEST_ID);
  expect(body.request_id).toBe(res.headers["request-id"]);
  return body as Record<string, unknown>;
}

/** Sends `request` on a fresh connection and reads the answer until the server closes it. */
function rawExchange(port: number, request: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.end(request));
    const chunks: Buffer[] = [];
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

describe.each(databases)("platform ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(database);
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await t.close();
  });

  describe("getHealth", () => {
    it("answers 200 ok without a key", async () => {
      const res = await t.call({ method: "GET", url: "/health", key: null });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: "ok" });
      expect(res.headers["request-id"]).toMatch(REQUEST_ID);
    });

    it("stays 200 while the server drains for shutdown", async () => {
      t.lifecycle.ready = false;
      expect((await t.call({ method: "GET", url: "/health", key: null })).statusCode).toBe(200);
    });
  });

  describe("getReadiness", () => {
    it("answers 200 ready while the server accepts work", async () => {
      const res = await t.call({ method: "GET", url: "/ready", key: null });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: "ready" });
    });

    it("answers 503 service_unavailable once readiness is off, so load balancers move away", async () => {
      t.lifecycle.ready = false;
      const res = await t.call({ method: "GET", url: "/ready", key: null });
      expectProblem(res, 503, "service_unavailable");
      expect(Number(res.headers["retry-after"])).toBeGreaterThanOrEqual(0);
      t.lifecycle.ready = true;
      expect((await t.call({ method: "GET", url: "/ready", key: null })).statusCode).toBe(200);
    });

    it("answers 503 when the database does not answer, while /health stays 200", async () => {
      await t.runtime.db.knex.destroy();
      expectProblem(await t.call({ method: "GET", url: "/ready", key: null }), 503, "service_unavailable");
      expect((await t.call({ method: "GET", url: "/health", key: null })).statusCode).toBe(200);
    });
  });

  describe("request ids", () => {
    it("puts a fresh request-id header on every answer, equal to the problem's request_id", async () => {
      vi.spyOn(t.runtime.services.workspace, "get").mockRejectedValueOnce(new Error("boom"));
      const answers = [
        await t.call({ method: "GET", url: "/health", key: null }),
        await t.call({ method: "GET", url: "/v1/workspace" }), // the 500
        await t.call({ method: "GET", url: "/v1/workspace" }),
        await t.call({ method: "GET", url: "/v1/openapi.json", key: null }),
        await t.call({ method: "GET", url: "/metrics", key: null }),
        await t.call({ method: "GET", url: "/v1/nothing-here" }),
        await t.call({ method: "GET", url: "/v1/workspace", key: null }),
        await t.call({ method: "POST", url: "/v1/api-keys", payload: {} }),
        await t.call({ method: "POST", url: "/v1/api-keys", payload: "{", headers: { "content-type": "application/json" } }),
      ];
      expect(answers.map((res) => res.statusCode)).toEqual([200, 500, 200, 200, 200, 404, 401, 422, 400]);
      const ids = answers.map((res) => res.headers["request-id"] as string);
      for (const id of ids) expect(id).toMatch(REQUEST_ID);
      expect(new Set(ids).size).toBe(ids.length);
      for (const res of answers.filter((r) => r.statusCode >= 400)) expect(res.json().request_id).toBe(res.headers["request-id"]);
    });

    it("does not take a request id from the client", async () => {
      const res = await t.call({ method: "GET", url: "/v1/workspace", key: null, headers: { "request-id": "req_chosen_by_client" } });
      expect(res.headers["request-id"]).toMatch(REQUEST_ID);
      expect(res.json().request_id).toBe(res.headers["request-id"]);
    });
  });

  describe("unknown routes", () => {
    it("answers 404 not_found as a problem document", async () => {
      const body = expectProblem(await t.call({ method: "GET", url: "/v1/widgets?limit=3" }), 404, "not_found");
      expect(body.detail).toBe("No route GET /v1/widgets.");
      expectProblem(await t.call({ method: "GET", url: "/", key: null }), 404, "not_found");
    });

    it("answers a trailing slash, which leaves an id empty, as the route that is not there, for every collection alike", async () => {
      for (const url of ["/v1/messages/", "/v1/templates/", "/v1/webhooks/", "/v1/api-keys/", "/v1/events/", "/v1/messages//events", "/v1/templates/welcome/versions/"]) {
        for (const key of [undefined, null]) {
          const body = expectProblem(await t.call({ method: "GET", url, ...(key === null ? { key } : {}) }), 404, "not_found");
          expect(body.detail, url).toBe(`No route GET ${url}.`);
        }
      }
      const deletion = expectProblem(await t.call({ method: "DELETE", url: "/v1/webhooks/" }), 404, "not_found");
      expect(deletion.detail).toBe("No route DELETE /v1/webhooks/.");
    });

    it("answers 405 method_not_allowed with Allow for a known path and an undeclared method", async () => {
      const put = await t.call({ method: "PUT", url: "/v1/workspace", payload: { name: "x" } });
      expectProblem(put, 405, "method_not_allowed");
      expect(put.headers.allow).toBe("GET, PATCH");
      const trace = await t.call({ method: "TRACE", url: "/health", key: null });
      expectProblem(trace, 405, "method_not_allowed");
      expect(trace.headers.allow).toBe("GET");
      // QUERY carries a body; Fastify wants a Content-Type before routing, which must not turn into a 500.
      expectProblem(await t.call({ method: "QUERY" as "GET", url: "/v1/messages/msg_x" }), 405, "method_not_allowed");
    });

    it("answers 405 with Allow on the routes outside the contract too: the dashboard's /auth routes and tracking links", async () => {
      const cases: Array<[string, string, string]> = [
        ["GET", "/auth/sign-in", "POST"],
        ["DELETE", "/auth/session", "GET"],
        ["POST", "/t/o/token.gif", "GET"],
        ["PUT", "/t/u/token", "GET, POST"],
      ];
      for (const [method, url, allow] of cases) {
        const res = await t.call({ method: method as "GET", url, key: null });
        const body = expectProblem(res, 405, "method_not_allowed");
        expect(res.headers.allow, `${method} ${url}`).toBe(allow);
        expect(body.detail).toBe(`${url} allows ${allow}.`);
      }
      expectProblem(await t.call({ method: "GET", url: "/auth/nope", key: null }), 404, "not_found");
    });

    it("answers 400 invalid_request as a problem document to a malformed or over-long URL", async () => {
      for (const url of ["/v1/messages/%zz", "/v1/api-keys/%E0%A4%A"]) {
        expectProblem(await t.call({ method: "GET", url }), 400, "invalid_request");
      }
    });

    it("answers what Node's HTTP parser refuses before any route (a bad Content-Length, a space or raw byte in the URL, headers past the limit) as a problem with a request id", async () => {
      await t.app.listen({ port: 0, host: "127.0.0.1" });
      const { port } = t.app.server.address() as AddressInfo;
      const cases: Array<[string, number, string]> = [
        ["POST /v1/suppressions HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n", 400, "The Content-Length is not a number of bytes."],
        ["GET /v1/suppressions?email=a b HTTP/1.1\r\nHost: localhost\r\n\r\n", 400, "The request line is not METHOD URL HTTP/1.1: percent-encode spaces in the URL."],
        [`GET /v1/suppressions?email=ada@b\u00fccher.example HTTP/1.1\r\nHost: localhost\r\n\r\n`, 400, "The URL is not valid: percent-encode spaces and any byte past ASCII."],
        ["GET /v1/messages HTTP/1.1\r\nHost: localhost\r\nBad Header: y\r\n\r\n", 400, "A header field's name or value is not valid HTTP."],
        [`GET /v1/messages HTTP/1.1\r\nHost: localhost\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`, 431, "The request's header fields are larger than the server takes (16 KiB)."],
      ];
      for (const [request, status, detail] of cases) {
        const raw = await rawExchange(port, Buffer.from(request, "latin1"));
        const [head = "", body = ""] = raw.split("\r\n\r\n", 2);
        const [statusLine, ...fields] = head.split("\r\n");
        const headers = Object.fromEntries(fields.map((f) => [f.slice(0, f.indexOf(":")).toLowerCase(), f.slice(f.indexOf(":") + 1).trim()]));
        expect(statusLine, request.slice(0, 60)).toBe(`HTTP/1.1 ${status} ${STATUS_CODES[status]}`);
        expect(headers["content-type"]).toBe("application/problem+json; charset=utf-8");
        expect(headers["request-id"]).toMatch(REQUEST_ID);
        expect(Number(headers["content-length"])).toBe(Buffer.byteLength(body));
        expect(JSON.parse(body)).toEqual({ type: "https://mailroom.dev/problems/invalid_request", title: "Invalid request", status, detail, code: "invalid_request", request_id: headers["request-id"] });
      }
    });

    it("answers 408 request_timeout and closes the connection when a body trickles in past REQUEST_TIMEOUT_MS, and stores nothing", async () => {
      await t.close();
      t = await createTestApp(database, { REQUEST_TIMEOUT_MS: "1000" });
      await t.app.listen({ port: 0, host: "127.0.0.1" });
      const { port } = t.app.server.address() as AddressInfo;
      const body = JSON.stringify(aMessage());
      const started = performance.now();
      // Headers and the body's first bytes, then nothing: the rest never comes.
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, "127.0.0.1", () => {
          socket.write(`POST /v1/messages HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${t.workspace.sandboxKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 20)}`);
        });
        const chunks: Buffer[] = [];
        socket.on("data", (chunk) => chunks.push(chunk));
        socket.on("error", reject);
        socket.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
      });
      expect(performance.now() - started).toBeLessThan(5000);
      const [head = "", answer = ""] = raw.split("\r\n\r\n", 2);
      expect(head.split("\r\n")[0]).toBe("HTTP/1.1 408 Request Timeout");
      expect(head).toMatch(/\r\nConnection: close(\r\n|$)/i);
      expect(JSON.parse(answer)).toMatchObject({ status: 408, code: "request_timeout", request_id: expect.stringMatching(REQUEST_ID) });
      const listed = await t.call({ method: "GET", url: "/v1/messages" });
      expect(listed.json().data).toEqual([]);
    });

    it("answers 422 naming the path parameter when an id is over-long", async () => {
      const body = expectProblem(await t.call({ method: "GET", url: `/v1/api-keys/key_${"0".repeat(200)}` }), 422, "validation_failed");
      expect(body.errors).toEqual([expect.objectContaining({ location: "path", pointer: "/api_key_id" })]);
    });

    // Ajv coerces a string to a number when `x == +x`, and JavaScript's `+` trims whitespace
    // (NBSP included) and reads decimals, exponents and hex: `limit=7%C2%A0` was page size 7.
    it("answers 422 to an integer query or path parameter that is not written as a whole number", async () => {
      const cases: Array<[string, string, string]> = [
        ["/v1/api-keys?limit=7%C2%A0", "query", "/limit"],
        ["/v1/api-keys?limit=%207", "query", "/limit"],
        ["/v1/api-keys?limit=7%0A", "query", "/limit"],
        ["/v1/api-keys?limit=7.0", "query", "/limit"],
        ["/v1/api-keys?limit=1e1", "query", "/limit"],
        ["/v1/api-keys?limit=0x10", "query", "/limit"],
        ["/v1/api-keys?limit=1_0", "query", "/limit"],
        ["/v1/api-keys?limit=%EF%BC%97", "query", "/limit"],
        ["/v1/api-keys?limit=", "query", "/limit"],
        ["/v1/templates/welcome/versions/1.0", "path", "/version"],
        ["/v1/templates/welcome/versions/%201", "path", "/version"],
        [`/v1/inbound/${newId("inbound")}/attachments/0x0`, "path", "/attachment_index"],
      ];
      for (const [url, location, pointer] of cases) {
        const body = expectProblem(await t.call({ method: "GET", url }), 422, "validation_failed");
        expect(body.errors, url).toEqual([{ location, pointer, message: "must be integer" }]);
      }
    });

    it("takes an integer parameter written with digits alone, a sign or leading zeros", async () => {
      for (const url of ["/v1/api-keys?limit=7", "/v1/api-keys?limit=07", "/v1/api-keys?limit=%2B7"]) {
        expect((await t.call({ method: "GET", url })).statusCode, url).toBe(200);
      }
    });
  });

  describe("getOpenApi", () => {
    it("serves the contract as JSON", async () => {
      const res = await t.call({ method: "GET", url: "/v1/openapi.json", key: null });
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-type"]).toMatch(/^application\/json/);
      const contract = res.json();
      expect(contract.openapi).toBe("3.1.0");
      expect(contract).toEqual(JSON.parse(JSON.stringify(loadSpec())));
      expect(Object.keys(contract.paths)).toContain("/v1/messages");
    });
  });

  describe("getPrometheusMetrics (GET /metrics)", () => {
    it("counts requests by operation and status and reports the queue depth", async () => {
      expect((await t.call({ method: "GET", url: "/v1/workspace" })).statusCode).toBe(200);
      expect((await t.call({ method: "GET", url: "/v1/workspace" })).statusCode).toBe(200);
      expect((await t.call({ method: "GET", url: "/v1/workspace", key: null })).statusCode).toBe(401);
      expect((await t.call({ method: "POST", url: "/v1/messages", payload: aMessage() })).statusCode).toBe(202);
      expect((await t.call({ method: "GET", url: "/v1/nothing-here" })).statusCode).toBe(404);
      const res = await t.call({ method: "GET", url: "/metrics", key: null });
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-type"]).toMatch(/^text\/plain/);
      expect(res.body).toContain('mailroom_http_requests_total{operation="getWorkspace",status="200"} 2');
      expect(res.body).toContain('mailroom_http_requests_total{operation="getWorkspace",status="401"} 1');
      expect(res.body).toContain('mailroom_http_requests_total{operation="createMessage",status="202"} 1');
      expect(res.body).toContain('mailroom_http_requests_total{operation="unmatched",status="404"} 1');
      expect(res.body).toMatch(/^mailroom_queue_depth 1$/m);
      expect(res.body).toMatch(/^mailroom_http_request_duration_seconds_bucket\{le="[^"]+",operation="getWorkspace"\} \d+$/m);
    });
  });

  describe("getDocs", () => {
    it("serves the HTML API reference", { timeout: 90_000 }, async () => {
      const res = await t.call({ method: "GET", url: "/docs", key: null });
      expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
      expect(res.headers["content-type"]).toMatch(/^text\/html/);
      expect(res.body).toMatch(/<html/i);
      expect(res.body).toContain("Mailroom API");
    });
  });

  describe("query parameters", () => {
    const messageCount = async () => (await t.call({ method: "GET", url: "/v1/messages?limit=100" })).json().data.length as number;

    // A filter the list does not have used to be ignored: ?message_id= answered every event of
    // the environment, as if it had filtered them.
    it("refuses a query parameter the operation does not declare, naming the ones it takes", async () => {
      const res = await t.call({ method: "GET", url: "/v1/events?message_id=msg_01jd3k8m2q5v7w9x1y3z5a7b9c&limit=5" });
      expectProblem(res, 422, "validation_failed");
      expect(res.json().errors).toEqual([{ location: "query", pointer: "/message_id", message: "is not a parameter of listEvents, which takes limit, after, type, recipient, created_after, created_before" }]);
    });

    it("refuses a query parameter on an operation that takes none", async () => {
      const sent = (await t.call({ method: "POST", url: "/v1/messages", payload: aMessage() })).json();
      const res = await t.call({ method: "GET", url: `/v1/messages/${sent.id}?expand=events` });
      expectProblem(res, 422, "validation_failed");
      expect(res.json().errors).toEqual([{ location: "query", pointer: "/expand", message: "is not a parameter of getMessage, which takes none" }]);
    });

    it("refuses a query parameter on a POST, and sends nothing", async () => {
      const before = await messageCount();
      const res = await t.call({ method: "POST", url: "/v1/messages?dry_run=true", payload: aMessage() });
      expectProblem(res, 422, "validation_failed");
      expect(res.json().errors).toMatchObject([{ location: "query", pointer: "/dry_run" }]);
      expect(await messageCount()).toBe(before);
    });
  });

  describe("request bodies", () => {
    const keyCount = async () => (await t.call({ method: "GET", url: "/v1/api-keys?limit=100" })).json().data.length as number;

    it("answers 415 unsupported_media_type to a body that is not JSON, and stores nothing", async () => {
      const before = await keyCount();
      for (const [type, payload] of [
        ["text/plain", '{"name":"plain"}'],
        ["application/x-www-form-urlencoded", "name=form"],
        ["multipart/form-data; boundary=x", '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nmultipart\r\n--x--\r\n'],
        ["application/problem+json", '{"name":"problem"}'],
        ["application/xml", "<name>xml</name>"],
      ] as const) {
        const res = await t.call({ method: "POST", url: "/v1/api-keys", payload, headers: { "content-type": type } });
        expectProblem(res, 415, "unsupported_media_type");
      }
      const patch = await t.call({ method: "PATCH", url: "/v1/workspace", payload: "name=Hacked", headers: { "content-type": "text/plain" } });
      expectProblem(patch, 415, "unsupported_media_type");
      expect(await keyCount()).toBe(before);
      expect((await t.call({ method: "GET", url: "/v1/workspace" })).json().name).toBe("Acme");
    });

    it("accepts JSON with a charset parameter", async () => {
      const res = await t.call({ method: "POST", url: "/v1/api-keys", payload: JSON.stringify({ name: "utf-8 ✓" }), headers: { "content-type": "application/json; charset=utf-8" } });
      expect(res.statusCode).toBe(201);
      expect(res.json().name).toBe("utf-8 ✓");
    });

    it("answers 400 invalid_json to malformed JSON, and stores nothing", async () => {
      const before = await keyCount();
      for (const payload of ["{", '{"name": "x",}', "{'name': 'x'}", '"name"x']) {
        const res = await t.call({ method: "POST", url: "/v1/api-keys", payload, headers: { "content-type": "application/json" } });
        expectProblem(res, 400, "invalid_json");
      }
      expect(await keyCount()).toBe(before);
    });

    it("answers 400 invalid_json to a body that is not UTF-8, whatever its charset parameter says, and stores nothing", async () => {
      const before = await keyCount();
      const latin1 = Buffer.concat([Buffer.from('{"name": "caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
      for (const type of ["application/json", "application/json; charset=iso-8859-1"]) {
        const body = expectProblem(await t.call({ method: "POST", url: "/v1/api-keys", payload: latin1, headers: { "content-type": type } }), 400, "invalid_json");
        expect(body.detail, type).toContain("UTF-8");
      }
      expect(await keyCount()).toBe(before);
      // RFC 8259: JSON is UTF-8 and a charset parameter changes nothing, so ASCII sent as Latin-1 is read as sent.
      const ascii = await t.call({ method: "POST", url: "/v1/api-keys", payload: '{"name": "cafe"}', headers: { "content-type": "application/json; charset=iso-8859-1" } });
      expect(ascii.statusCode).toBe(201);
    });

    it("answers 415 unsupported_media_type to a body sent with a Content-Encoding, and stores nothing", async () => {
      const before = await keyCount();
      for (const [encoding, payload] of [["gzip", gzipSync('{"name": "zipped"}')], ["br", Buffer.from('{"name": "plain but labelled br"}')]] as const) {
        const body = expectProblem(await t.call({ method: "POST", url: "/v1/api-keys", payload, headers: { "content-type": "application/json", "content-encoding": encoding } }), 415, "unsupported_media_type");
        expect(body.detail, encoding).toContain(`Content-Encoding ${encoding}`);
      }
      expect(await keyCount()).toBe(before);
      const identity = await t.call({ method: "POST", url: "/v1/api-keys", payload: '{"name": "identity"}', headers: { "content-type": "application/json", "content-encoding": "identity" } });
      expect(identity.statusCode).toBe(201);
    });

    it("answers 422 naming a number no JSON reader keeps exactly (past the largest double, or an integer past 2^53), and stores nothing", async () => {
      const before = await keyCount();
      for (const [payload, pointer] of [
        ['{"name": "x", "expires_at": 1e400}', "/expires_at"],
        ['{"name": "x", "expires_at": -1E+999}', "/expires_at"],
        [`{"name": "x", "extra": {"order": [7, ${"9".repeat(400)}]}}`, "/extra/order/1"],
        ['{"name": "x", "extra": {"order": 12345678901234567890123}}', "/extra/order"],
      ]) {
        const body = expectProblem(await t.call({ method: "POST", url: "/v1/api-keys", payload, headers: { "content-type": "application/json" } }), 422, "validation_failed");
        expect(body.errors, payload).toEqual([{ location: "body", pointer, message: expect.stringContaining("send it as a string") }]);
      }
      expect(await keyCount()).toBe(before);
      // The largest integer a double keeps exactly, and a fraction with many digits, are numbers as any other.
      const exact = await t.call({ method: "POST", url: "/v1/api-keys", payload: '{"name": "x", "extra": 9007199254740991}', headers: { "content-type": "application/json" } });
      expect(expectProblem(exact, 422, "validation_failed").errors).toEqual([{ location: "body", pointer: "/extra", message: "is not a known field" }]);
    });

    it("answers 422 naming a string or key with a lone UTF-16 surrogate (no character: it could not be stored as sent), and stores nothing", async () => {
      const before = await keyCount();
      for (const [payload, pointer] of [
        ['{"name": "Key \\ud800"}', "/name"],
        ['{"name": "x", "extra": {"list": ["ok", "\\udfff tail"]}}', "/extra/list/1"],
        // Named by the object that holds the key: a pointer with the surrogate in it would carry it on.
        ['{"name": "x", "extra": {"\\ud83d": 1}}', "/extra"],
      ]) {
        const body = expectProblem(await t.call({ method: "POST", url: "/v1/api-keys", payload, headers: { "content-type": "application/json" } }), 422, "validation_failed");
        expect(body.errors, payload).toEqual([{ location: "body", pointer, message: expect.stringContaining("lone UTF-16 surrogate") }]);
      }
      expect(await keyCount()).toBe(before);
      // A pair is one character, as any other.
      const paired = await t.call({ method: "POST", url: "/v1/api-keys", payload: '{"name": "Key \\ud83d\\ude00"}', headers: { "content-type": "application/json" } });
      expect(paired.statusCode, paired.body).toBe(201);
      expect(paired.json().name).toBe("Key 😀");
    });

    it("answers 422 naming a __proto__ or constructor.prototype key anywhere in a body, and stores nothing", async () => {
      const before = await keyCount();
      for (const [payload, pointer] of [
        ['{"name": "x", "__proto__": {"admin": true}}', "/__proto__"],
        ['{"name": "x", "expires_at": null, "extra": [{"a/b": {"__proto__": 1}}]}', "/extra/0/a~1b/__proto__"],
        ['{"name": "x", "constructor": {"prototype": {"admin": true}}}', "/constructor/prototype"],
      ]) {
        const res = await t.call({ method: "POST", url: "/v1/api-keys", payload, headers: { "content-type": "application/json" } });
        const body = expectProblem(res, 422, "validation_failed");
        expect(body.errors, payload).toEqual([{ location: "body", pointer, message: expect.stringContaining("no request body may use") }]);
      }
      // A key merely called constructor, without a prototype in it, is an ordinary unknown field.
      const plain = await t.call({ method: "POST", url: "/v1/api-keys", payload: '{"name": "x", "constructor": 1}', headers: { "content-type": "application/json" } });
      expect(expectProblem(plain, 422, "validation_failed").errors).toEqual([{ location: "body", pointer: "/constructor", message: "is not a known field" }]);
      expect(await keyCount()).toBe(before);
    });

    it("finds a __proto__ key nested deeper than the call stack goes, and still answers 422", async () => {
      const depth = 100_000;
      const payload = `{"name": "x", "extra": ${"[".repeat(depth)}{"__proto__": 1}${"]".repeat(depth)}}`;
      const res = await t.call({ method: "POST", url: "/v1/api-keys", payload, headers: { "content-type": "application/json" } });
      const [error] = expectProblem(res, 422, "validation_failed").errors as Array<{ pointer: string }>;
      expect(error!.pointer).toBe(`/extra${"/0".repeat(depth)}/__proto__`);
    });

    it("answers 422 to a JSON body that is not an object", async () => {
      for (const payload of ["[]", '"name"', "42", "null"]) {
        const res = await t.call({ method: "POST", url: "/v1/api-keys", payload, headers: { "content-type": "application/json" } });
        expectProblem(res, 422, "validation_failed");
      }
    });

    it("answers 422 validation_failed when a required body is missing or empty", async () => {
      const before = await keyCount();
      for (const [method, url] of [["POST", "/v1/api-keys"], ["PATCH", "/v1/workspace"], ["POST", "/v1/messages"]] as const) {
        for (const sent of [{}, { payload: "", headers: { "content-type": "application/json" } }]) {
          const body = expectProblem(await t.call({ method, url, ...sent }), 422, "validation_failed");
          expect(body.errors, `${method} ${url}`).toEqual([{ location: "body", pointer: "", message: "is required" }]);
        }
      }
      expect(await keyCount()).toBe(before);
      expect((await t.call({ method: "GET", url: "/v1/messages" })).json().data).toEqual([]);
    });

    it("says what a field must be: a union's forms, an enum's values, a pattern in words", async () => {
      const errorsOf = async (options: Parameters<TestApp["call"]>[0]) => expectProblem(await t.call(options), 422, "validation_failed").errors as unknown[];
      expect(await errorsOf({ method: "PATCH", url: "/v1/workspace", payload: { monthly_quota: 0 } })).toEqual([
        { location: "body", pointer: "/monthly_quota", message: "must be an integer from 1 to 1000000000, or null" },
      ]);
      const inline = { filename: "a.txt", content: "aGk=" };
      expect(await errorsOf({ method: "POST", url: "/v1/messages", payload: aMessage({ attachments: [{ ...inline, url: "https://files.example/a.txt" }, { filename: "b.txt" }] }) })).toEqual([
        { location: "body", pointer: "/attachments/0", message: "must have filename and content, or url, not more than one of these" },
        { location: "body", pointer: "/attachments/1", message: "must have filename and content, or url" },
      ]);
      expect(await errorsOf({ method: "POST", url: "/v1/templates/welcome/render", payload: { version: "latest" } })).toEqual([
        { location: "body", pointer: "/version", message: 'must be an integer from 1 to 1000000, or "draft"' },
      ]);
      const [type] = await errorsOf({ method: "GET", url: "/v1/events?type=bogus" });
      expect(type).toEqual({ location: "query", pointer: "/type", message: expect.stringMatching(/^must be one of: message\.queued, .*message\.replied/) });
      // Two enums in a oneOf read as one list.
      const [eventType] = await errorsOf({ method: "POST", url: "/v1/webhooks", payload: { url: "https://hooks.example/x", event_types: ["bogus"] } });
      expect(eventType).toEqual({ location: "body", pointer: "/event_types/0", message: expect.stringMatching(/^must be one of: message\.queued, .*domain\.verified/) });
      expect(await errorsOf({ method: "POST", url: "/v1/webhooks", payload: { url: "ftp://files.example/hooks" } })).toEqual([
        { location: "body", pointer: "/url", message: "must be an http:// or https:// URL" },
      ]);
      expect(await errorsOf({ method: "POST", url: "/v1/messages", payload: aMessage(), headers: { "idempotency-key": "k".repeat(256) } })).toEqual([
        { location: "header", pointer: "/idempotency-key", message: expect.stringMatching(/^must be 1 to 255 printable ASCII characters without spaces/) },
      ]);
      // An update that names no field to change.
      expect(await errorsOf({ method: "PATCH", url: "/v1/workspace", payload: {} })).toEqual([{ location: "body", pointer: "", message: "must have at least one field" }]);
      // Every pattern of the contract has its words (test/contract/patterns.test.ts); these are read from it.
      expect(await errorsOf({ method: "POST", url: "/v1/messages", payload: aMessage({ tags: ["two words"], headers: { "X Bad": "1" }, attachments: [{ filename: "a.txt", url: "ftp://files.example/a" }] }) })).toEqual([
        { location: "body", pointer: "/headers/X Bad", message: "the name must be a header field name: printable ASCII characters, no spaces or colons" },
        { location: "body", pointer: "/attachments/0/url", message: "must be an http:// or https:// URL" },
        { location: "body", pointer: "/tags/0", message: "must be letters, digits and _ . : - only" },
      ]);
      expect(await errorsOf({ method: "GET", url: "/v1/messages?after=bogus" })).toEqual([
        { location: "query", pointer: "/after", message: "must be the previous page's next_cursor (a message id, msg_…)" },
      ]);
      expect((await t.call({ method: "GET", url: "/v1/messages" })).json().data).toEqual([]);
    });

    it("says what is wrong with the form a union field was given in, once, at the value that is wrong", async () => {
      const errorsOf = async (to: unknown) => expectProblem(await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ to }) }), 422, "validation_failed").errors as unknown[];
      // A string is the one-address form: only what that form says is wrong with it.
      expect(await errorsOf("x")).toEqual([{ location: "body", pointer: "/to", message: "must NOT have fewer than 3 characters" }]);
      // A list is the list form: the address in it that is wrong, once, not also the list.
      expect(await errorsOf(["ada@example.com", "x"])).toEqual([{ location: "body", pointer: "/to/1", message: "must NOT have fewer than 3 characters" }]);
      expect(await errorsOf([])).toEqual([{ location: "body", pointer: "/to", message: "must NOT have fewer than 1 items" }]);
      // A value of neither form's type: both forms.
      expect(await errorsOf(42)).toEqual([{ location: "body", pointer: "/to", message: "must be string, or be array" }]);
    });

    it("lists a field once, however many rules it broke, naming each, and counts fields, not rules", async () => {
      const one = expectProblem(await t.call({ method: "POST", url: "/v1/domains", payload: { name: "acme.example", return_path_subdomain: "" } }), 422, "validation_failed");
      const message = "must NOT have fewer than 1 characters; must be one DNS label: letters, digits and hyphens, not starting or ending with a hyphen";
      expect(one.errors).toEqual([{ location: "body", pointer: "/return_path_subdomain", message }]);
      expect(one.detail).toBe(`/return_path_subdomain: ${message}`);
      const two = expectProblem(await t.call({ method: "POST", url: "/v1/domains", payload: { name: "", return_path_subdomain: "" } }), 422, "validation_failed");
      expect(two.detail).toBe("2 fields are invalid.");
    });

    it("answers 413 payload_too_large to a body over the limit", async () => {
      await t.close();
      t = await createTestApp(database, { BODY_LIMIT_BYTES: "2048" });
      const res = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ html: `<p>${"x".repeat(4096)}</p>` }) });
      expectProblem(res, 413, "payload_too_large");
      expect((await t.call({ method: "GET", url: "/v1/messages" })).json().data).toEqual([]);
    });
  });

  describe("internal errors", () => {
    it("answers a generic 500 that leaks nothing but the request id", async () => {
      const internal = Object.assign(new Error("SQLITE_CORRUPT: select * from api_key_secrets where digest = 'deadbeef' (password=hunter2)"), {
        code: "SQLITE_CORRUPT",
        sql: "select * from api_key_secrets",
      });
      vi.spyOn(t.runtime.services.workspace, "get").mockRejectedValueOnce(internal);
      const res = await t.call({ method: "GET", url: "/v1/workspace" });
      const body = expectProblem(res, 500, "internal_error");
      expect(Object.keys(body).sort()).toEqual(["code", "detail", "request_id", "status", "title", "type"]);
      expect(body.detail).toContain(res.headers["request-id"]);
      for (const leak of ["SQLITE", "api_key_secrets", "hunter2", "deadbeef", "select", "at ", ".ts"]) expect(res.body).not.toContain(leak);
      // The next call works: nothing was left broken.
      expect((await t.call({ method: "GET", url: "/v1/workspace" })).statusCode).toBe(200);
    });

    it("answers 503 service_unavailable with Retry-After when the database cannot be reached", async () => {
      const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:3306"), { code: "ECONNREFUSED" });
      vi.spyOn(t.runtime.services.workspace, "get").mockRejectedValueOnce(refused);
      const res = await t.call({ method: "GET", url: "/v1/workspace" });
      expectProblem(res, 503, "service_unavailable");
      expect(res.headers["retry-after"]).toBe("1");
      expect(res.body).not.toContain("3306");
    });

    it("answers a thrown non-Error with the same generic 500", async () => {
      vi.spyOn(t.runtime.services.workspace, "get").mockRejectedValueOnce({ statusCode: 418, message: "teapot internals" });
      const res = await t.call({ method: "GET", url: "/v1/workspace" });
      expectProblem(res, 500, "internal_error");
      expect(res.body).not.toContain("teapot");
    });
  });
});
