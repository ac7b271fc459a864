import { describe, expect, it } from "vitest";
import type { ApiKeyWithSecret, PageBody as Page, RequestLog } from "mailroom";
import type { TestServer } from "../../test/helpers/http-server.js";
import { FROM, contractExample, page, problemOf, runCli, stubApi, useTestServer } from "./helpers.js";

/*
 * `mailroom request-logs list` and `get` against the real server (a send the CLI made and the
 * server refused is found in the log under the request id the error showed) and against a
 * stand-in answering the contract's examples: the query each flag sends, and what it prints in
 * JSON and on a terminal.
 */
let server: TestServer;
let env: Record<string, string>;
useTestServer((started) => ({ server, env } = started));

const stubEnv = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };
const [refused, read] = contractExample<Page<RequestLog>>("RequestLogPage").data as [RequestLog, RequestLog];
const forbidden = contractExample<RequestLog>("FailedRequestLog");

/** Runs `mailroom …` through the CLI, as the test's sandbox key; fails the test unless it exits 0. */
async function cli<T>(...argv: string[]): Promise<T> {
  const result = await runCli(argv, { env });
  expect(result.code, result.stderr).toBe(0);
  return result.json<T>();
}

/** The server writes its log about once a second; a test does not wait for that. */
const flushed = () => server.testApp.runtime.services.requestLogs.flush();

describe("mailroom request-logs against the real server", () => {
  it("finds a refused send by --status 4xx, and gets it by the request id its error showed", async () => {
    const send = await runCli(["send", "--from", FROM, "--to", "not-an-address", "--subject", "Hi", "--text", "Hi"], { env });
    expect(send.code).toBe(1);
    const problem = problemOf(send);
    expect(problem).toMatchObject({ status: 422, code: "validation_failed", request_id: expect.stringMatching(/^req_/) });
    await flushed();

    const { data } = await cli<Page<RequestLog>>("request-logs", "list", "--status", "4xx");

    expect(data[0]).toMatchObject({
      id: problem.request_id,
      object: "request_log",
      environment: "sandbox",
      method: "POST",
      path: "/v1/messages",
      operation: "createMessage",
      status: 422,
      error_code: "validation_failed",
      credential: { type: "api_key", id: expect.stringMatching(/^key_/) },
    });
    expect(data.every((log) => log.status >= 400 && log.status < 500)).toBe(true);
    const log = await cli<RequestLog>("request-logs", "get", String(problem.request_id), "--json");
    expect(log).toMatchObject({ id: problem.request_id, status: 422, error_code: "validation_failed", error: problem });
  });

  it("shows a refused request's problem on a terminal, a line per failing field", async () => {
    const send = await runCli(["send", "--from", FROM, "--to", "not-an-address", "--subject", "Hi", "--text", "Hi"], { env, tty: true });
    const requestId = /^Request id: (req_\S+)$/m.exec(send.stderr)?.[1];
    expect(requestId, send.stderr).toBeDefined();
    await flushed();

    const result = await runCli(["request-logs", "get", requestId ?? ""], { env, tty: true });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^id\\s+${requestId}$`, "m"));
    expect(result.stdout).toMatch(/^status\s+422$/m);
    expect(result.stdout).toMatch(/^Answered 422 validation_failed: Validation failed$/m);
    expect(result.stdout).toMatch(/^ {2}\/to\/0: .+$/m);
  });

  it("exits 1 with the API's 404 for a request id it does not know", async () => {
    const result = await runCli(["request-logs", "get", "req_01jd3k8m2q5v7w9x1y3z5a7b9c"], { env });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 404 });
  });

  it("exits 1 with the API's 403 for a key that may only send", async () => {
    const sender = await cli<ApiKeyWithSecret>("api-keys", "create", "--name", "Sender", "--permission", "sending_access");

    const result = await runCli(["request-logs", "list"], { env: { ...env, MAILROOM_API_KEY: sender.secret } });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 403 });
  });
});

describe("mailroom request-logs list", () => {
  it("prints one page as the API sent it, passing --status, --method, --operation, --credential-id, --created-after, --created-before, --limit and --after", async () => {
    const api = stubApi(200, page([refused], "cur_2"));

    const result = await runCli(
      [
        ...["request-logs", "list", "--status", "422", "--method", "POST", "--operation", "createMessage", "--credential-id", "key_01jd3k8m2q5v7w9x1y3z5a7b9c"],
        ...["--created-after", "2026-11-01T00:00:00Z", "--created-before", "2026-11-22T00:00:00+01:00", "--limit", "5", "--after", "cur_1"],
      ],
      { env: stubEnv, fetch: api.fetch },
    );

    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toEqual(page([refused], "cur_2"));
    expect(api.seen.map((seen) => `${seen.method} ${decodeURIComponent(seen.target)}`)).toEqual([
      "GET /v1/request-logs?limit=5&after=cur_1&created_after=2026-11-01T00:00:00.000Z&created_before=2026-11-21T23:00:00.000Z" +
        "&status=422&method=POST&operation=createMessage&credential_id=key_01jd3k8m2q5v7w9x1y3z5a7b9c",
    ]);
  });

  it("takes a status class, a method in any case, and --created-after 1h as an hour ago", async () => {
    const api = stubApi(200, page([]));
    const before = Date.now();

    const result = await runCli(["request-logs", "list", "--status", "5xx", "--method", "delete", "--created-after", "1h"], { env: stubEnv, fetch: api.fetch });
    const after = Date.now();

    expect(result.code, result.stderr).toBe(0);
    const query = new URL(`http://x${api.seen[0]?.target}`).searchParams;
    expect([query.get("status"), query.get("method")]).toEqual(["5xx", "DELETE"]);
    const createdAfter = Date.parse(query.get("created_after") ?? "");
    expect(createdAfter).toBeGreaterThanOrEqual(before - 3_600_000);
    expect(createdAfter).toBeLessThanOrEqual(after - 3_600_000);
  });

  it.each(["4x", "4XX", "600", "42", "4xxx", "error"])("refuses --status %j before any request", async (status) => {
    const api = stubApi(200, page([]));

    const result = await runCli(["request-logs", "list", "--status", status], { env: stubEnv, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toEqual({ error: "usage", message: `--status takes a status (422) or a class (2xx, 3xx, 4xx, 5xx); got "${status}".` });
    expect(api.seen).toEqual([]);
  });

  it("refuses a --method the API does not have before any request", async () => {
    const api = stubApi(200, page([]));

    const result = await runCli(["request-logs", "list", "--method", "HEAD"], { env: stubEnv, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toMatchObject({ error: "usage" });
    expect(api.seen).toEqual([]);
  });

  it("refuses --no-method before any request, naming the flag rather than failing to read it", async () => {
    const api = stubApi(200, page([]));

    const result = await runCli(["request-logs", "list", "--no-method"], { env: stubEnv, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result).message).toContain("--no-method: --method has no --no- form");
    expect(problemOf(result).message).not.toContain("toUpperCase");
    expect(api.seen).toEqual([]);
  });

  it("prints every request of every page with --all, keeping the filters on each page", async () => {
    const api = stubApi((request) => ({
      status: 200,
      body: new URL(request.url).searchParams.get("after") === "cur_2" ? page([{ ...refused, id: "req_2" }]) : page([refused], "cur_2"),
    }));

    const result = await runCli(["request-logs", "list", "--status", "4xx", "--all"], { env: stubEnv, fetch: api.fetch });

    expect(result.json<{ data: RequestLog[] }>().data.map((log) => log.id)).toEqual([refused.id, "req_2"]);
    expect(api.seen.map((seen) => seen.target)).toEqual(["/v1/request-logs?limit=20&status=4xx", "/v1/request-logs?limit=20&status=4xx&after=cur_2"]);
  });

  it("prints when, the method, path, status, error code, time taken, who and the request id as a table on a terminal", async () => {
    const result = await runCli(["request-logs", "list"], { env: stubEnv, tty: true, fetch: stubApi(200, page([refused, read], "cur_2")).fetch });

    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^TIME\s+METHOD\s+PATH\s+STATUS\s+CODE\s+MS\s+CREDENTIAL\s+REQUEST ID$/);
    expect(lines[1]?.split(/\s{2,}/)).toEqual([
      "2026-11-21T10:42:00.000Z",
      "POST",
      "/v1/messages",
      "422",
      "validation_failed",
      "3.2",
      "key_01jd3k8m2q5v7w9x1y3z5a7b9c",
      "req_01jd3k8m2q5v7w9x1y3z5a7b9f",
    ]);
    // An answer without an error leaves its CODE empty; a member is named by their user id.
    expect(lines[2]?.split(/\s{2,}/)).toEqual([
      "2026-11-21T10:41:00.000Z",
      "GET",
      "/v1/messages/msg_01jd3k8m2q5v7w9x1y3z5a7b9c",
      "200",
      "1.4",
      "usr_01jd3k8m2q5v7w9x1y3z5a7b9a",
      "req_01jd3k8m2q5v7w9x1y3z5a7b9e",
    ]);
    expect(lines.at(-1)).toBe("More: --after cur_2 (or --all)");
  });

  it("shortens a path past 50 characters, as the other lists shorten their long cells", async () => {
    const long = { ...read, path: `/v1/templates/${"x".repeat(80)}/versions` };

    const result = await runCli(["request-logs", "list"], { env: stubEnv, tty: true, fetch: stubApi(200, page([long])).fetch });

    const row = result.stdout.trimEnd().split("\n")[1] ?? "";
    expect(row.split(/\s{2,}/)[2]).toBe(`/v1/templates/${"x".repeat(35)}…`);
  });
});

describe("mailroom request-logs get", () => {
  it("gets one request by its id and prints it as the API sent it", async () => {
    const api = stubApi(200, forbidden);

    const result = await runCli(["request-logs", "get", forbidden.id], { env: stubEnv, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toEqual(forbidden);
    expect(api.seen.map((seen) => `${seen.method} ${seen.target}`)).toEqual([`GET /v1/request-logs/${forbidden.id}`]);
  });

  it("shows every field on a terminal, then the problem's code and detail for a failed request", async () => {
    const result = await runCli(["request-logs", "get", forbidden.id], { env: stubEnv, tty: true, fetch: stubApi(200, forbidden).fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trimEnd().split("\n").map((line) => line.split(/\s{2,}/))).toEqual([
      ["id", "req_01jd3k8m2q5v7w9x1y3z5a7b9c"],
      ["environment", "live"],
      ["method", "POST"],
      ["path", "/v1/messages"],
      ["operation", "createMessage"],
      ["status", "403"],
      ["error_code", "sender_not_allowed"],
      ["duration_ms", "2.1"],
      ["credential", "api_key key_01jd3k8m2q5v7w9x1y3z5a7b9c"],
      ["ip_address", "203.0.113.7"],
      ["user_agent", "curl/8.5.0"],
      ["created_at", "2026-11-21T10:40:00.000Z"],
      [""],
      ["Answered 403 sender_not_allowed: This key may only send from acme.example, not from news.acme.example."],
    ]);
  });

  it("shows a failed request's field errors as pointer: message, and its Idempotency-Key", async () => {
    const result = await runCli(["request-logs", "get", refused.id], { env: stubEnv, tty: true, fetch: stubApi(200, refused).fetch });

    expect(result.stdout).toMatch(/^idempotency_key\s+order-1042-receipt$/m);
    expect(result.stdout).toMatch(/^idempotent_replayed\s+no$/m);
    expect(result.stdout).toMatch(/\n\nAnswered 422 validation_failed: Validation failed\n {2}\/to\/0: must be an email address\n$/);
  });

  it("shows a failed request's detail above its field errors when it says more than they do", async () => {
    const fromField = { location: "body", pointer: "/from", message: "hello@news.acme.example is not at a domain this key may send from" };
    const withField = { ...forbidden, error: { ...forbidden.error, errors: [fromField] } } as RequestLog;

    const result = await runCli(["request-logs", "get", forbidden.id], { env: stubEnv, tty: true, fetch: stubApi(200, withField).fetch });

    expect(result.stdout).toMatch(/\n\nAnswered 403 sender_not_allowed: This key may only send from acme\.example, not from news\.acme\.example\.\n {2}\/from: hello@news\.acme\.example is not at a domain this key may send from\n$/);
  });

  it("shows a request that succeeded without a problem", async () => {
    const result = await runCli(["request-logs", "get", read.id], { env: stubEnv, tty: true, fetch: stubApi(200, read).fetch });

    expect(result.stdout).toMatch(/^credential\s+user usr_01jd3k8m2q5v7w9x1y3z5a7b9a$/m);
    expect(result.stdout).not.toMatch(/error_code|idempotent_replayed|Answered/);
  });
});
