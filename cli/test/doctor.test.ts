import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Domain, DomainRecord } from "mailroom";
import { startDnsServer, type DnsServer } from "../../test/helpers/dns-server.js";
import { startTestServer, type TestServer } from "../../test/helpers/http-server.js";
import { closedPort, cliEnv, runCli, useTestServer } from "./helpers.js";

interface CheckReport {
  name: string;
  status: "pass" | "warn" | "fail" | "skip";
  detail: string;
  fix?: string;
}

const CHECKS = ["api_key", "server", "authentication", "default_sender", "sending_domains", "webhooks", "usage"];

/** Runs `mailroom doctor` piped (JSON); answers the exit code, the document and each check by name. */
async function doctor(env: Record<string, string>, ...flags: string[]) {
  const result = await runCli(["doctor", ...flags], { env });
  const report = result.json<{ ok: boolean; checks: CheckReport[] }>();
  const check = (name: string) => report.checks.find((candidate) => candidate.name === name) as CheckReport;
  const statuses = Object.fromEntries(report.checks.map(({ name, status }) => [name, status]));
  return { code: result.code, report, check, statuses };
}

/** Calls the API as a test set-up step (not through the CLI under test); answers the JSON body. */
async function call(server: TestServer, key: string, method: "GET" | "POST" | "PATCH" | "DELETE", url: string, payload?: Record<string, unknown>) {
  const response = await server.testApp.call({ method, url, key, ...(payload ? { payload } : {}) });
  expect(response.statusCode, response.body).toBeLessThan(300);
  return response.json() as Record<string, unknown>;
}

describe("mailroom doctor, on a healthy sandbox set-up", () => {
  let server: TestServer;
  let env: Record<string, string>;
  useTestServer((started) => ({ server, env } = started));
  beforeAll(async () => {
    await call(server, server.sandboxKey, "PATCH", "/v1/workspace", { default_from: "Acme <hello@acme.example>" });
  });

  it("passes every check, in order, and exits 0", async () => {
    const { code, report } = await doctor(env);

    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    expect(report.checks.map(({ name, status }) => [name, status])).toEqual(CHECKS.map((name) => [name, "pass"]));
  });

  it("says what it found: the key's environment, the server, the workspace, the sender", async () => {
    const { check } = await doctor(env);

    expect(check("api_key").detail).toBe(`a sandbox API key (${server.sandboxKey.slice(0, 9)}…${server.sandboxKey.slice(-4)})`);
    expect(check("server").detail).toBe(`${server.baseUrl} is up and ready`);
    expect(check("authentication").detail).toBe(`workspace "Acme" (${server.testApp.workspace.id}), sandbox`);
    expect(check("default_sender").detail).toBe("Acme <hello@acme.example>");
    expect(check("sending_domains").detail).toContain("sandbox never delivers");
    expect(check("usage").detail).toContain("sandbox mail never counts");
  });

  it("prints one JSON document when piped: ok, and each check's name, status and detail (a fix only for warn and fail)", async () => {
    const result = await runCli(["doctor"], { env });

    const document = result.json<{ ok: boolean; checks: CheckReport[] }>();
    expect(Object.keys(document)).toEqual(["ok", "checks"]);
    for (const check of document.checks) expect(Object.keys(check)).toEqual(["name", "status", "detail"]);
    expect(result.stderr).toBe("");
  });

  it("prints the same document with --json on a terminal", async () => {
    const [piped, forced] = await Promise.all([runCli(["doctor"], { env }), runCli(["doctor", "--json"], { env, tty: true })]);

    expect(forced.json()).toEqual(piped.json());
  });

  it("fails only the check whose request gets an answer it does not expect, and runs the others", async () => {
    const brokenWebhooks = (request: Request) =>
      new URL(request.url).pathname === "/v1/webhooks"
        ? Promise.resolve(Response.json({ status: 500, code: "internal_error", title: "Internal error", request_id: "req_broken" }, { status: 500, headers: { "content-type": "application/problem+json" } }))
        : fetch(request);

    const result = await runCli(["doctor"], { env, fetch: brokenWebhooks });

    expect(result.code).toBe(1);
    const { checks } = result.json<{ checks: CheckReport[] }>();
    expect(checks.map(({ status }) => status)).toEqual(["pass", "pass", "pass", "pass", "pass", "fail", "pass"]);
    expect(checks[5]).toMatchObject({ name: "webhooks", detail: "500 internal_error (request req_broken)" });
  });

  it("prints one line per check on a terminal, then the count of each status", async () => {
    const result = await runCli(["doctor"], { env, tty: true });

    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines.slice(0, CHECKS.length).map((line) => line.split(/\s+/).slice(0, 2))).toEqual(CHECKS.map((name) => ["pass", name]));
    expect(lines[1]).toBe(`pass  server           ${server.baseUrl} is up and ready`);
    expect(lines.at(-1)).toBe("7 pass");
    expect(result.stderr).toBe("");
  });
});

describe("mailroom doctor, with a key or server missing", () => {
  let server: TestServer;
  let env: Record<string, string>;
  useTestServer((started) => ({ server, env } = started));

  it("fails api_key without a key, still checks the server, skips the rest, and exits 1", async () => {
    const { code, report, check, statuses } = await doctor({ MAILROOM_BASE_URL: server.baseUrl });

    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    expect(statuses).toEqual({ api_key: "fail", server: "pass", authentication: "skip", default_sender: "skip", sending_domains: "skip", webhooks: "skip", usage: "skip" });
    expect(check("api_key")).toMatchObject({ detail: "no API key", fix: expect.stringMatching(/MAILROOM_API_KEY.*--api-key/) });
    expect(check("authentication").detail).toBe("needs a well-formed API key (see api_key)");
  });

  it("fails api_key for a value that is not a Mailroom key, and sends it nowhere", async () => {
    const sent: Array<string | null> = [];
    const recording = (request: Request) => (sent.push(request.headers.get("authorization")), fetch(request));

    const result = await runCli(["doctor"], { env: cliEnv(server, "sk_test_51Habcdefghijklmnopqrstuvwxyz"), fetch: recording });

    expect(result.code).toBe(1);
    const { checks } = result.json<{ checks: CheckReport[] }>();
    expect(checks.slice(0, 3)).toMatchObject([
      { name: "api_key", status: "fail", detail: "sk_test_5…wxyz is not a Mailroom key: one starts with svc_test_ (sandbox) or svc_live_ (live)" },
      { name: "server", status: "pass" },
      { name: "authentication", status: "skip" },
    ]);
    expect(sent).toHaveLength(2);
    for (const authorization of sent) expect(authorization).not.toContain("sk_test_");
  });

  it("fails api_key for a key with a character outside printable ASCII, and sends it nowhere", async () => {
    const sent: Array<string | null> = [];
    const recording = (request: Request) => (sent.push(request.headers.get("authorization")), fetch(request));

    const result = await runCli(["doctor"], { env: cliEnv(server, "svc_test_abcdefghijklmnopqrstuvwxyzé"), fetch: recording });

    expect(result.code, result.stderr).toBe(1);
    expect(result.json<{ checks: CheckReport[] }>().checks.slice(0, 3)).toMatchObject([
      { name: "api_key", status: "fail" },
      { name: "server", status: "pass" },
      { name: "authentication", status: "skip" },
    ]);
    for (const authorization of sent) expect(authorization).not.toContain("svc_test_");
  });

  it("says so on a terminal, with the fix under the failed check, and exits 1", async () => {
    const result = await runCli(["doctor"], { env: { MAILROOM_BASE_URL: server.baseUrl }, tty: true });

    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^fail {2}api_key {10}no API key\n {23}fix: Set MAILROOM_API_KEY /);
    expect(result.stdout.trimEnd().split("\n").at(-1)).toBe("1 pass, 1 fail, 5 skip");
  });

  it("fails server with the URL it tried when nothing answers there, and skips what needs it", async () => {
    const baseUrl = `http://127.0.0.1:${await closedPort()}`;

    const { code, check, statuses } = await doctor({ MAILROOM_API_KEY: server.sandboxKey, MAILROOM_BASE_URL: baseUrl });

    expect(code).toBe(1);
    expect(statuses).toMatchObject({ api_key: "pass", server: "fail", authentication: "skip", usage: "skip" });
    expect(check("server")).toEqual({
      name: "server",
      status: "fail",
      detail: `no answer from ${baseUrl}: Could not reach the Mailroom API: ECONNREFUSED`,
      fix: `Is the server running at ${baseUrl}? Start one with \`make run\`, or set MAILROOM_BASE_URL.`,
    });
    expect(check("authentication").detail).toBe("needs the server to answer (see server)");
  });

  it("takes the server from --base-url over MAILROOM_BASE_URL", async () => {
    const { code, check } = await doctor({ MAILROOM_API_KEY: server.sandboxKey, MAILROOM_BASE_URL: `http://127.0.0.1:${await closedPort()}` }, "--base-url", server.baseUrl);

    expect(code).toBe(0);
    expect(check("server").detail).toBe(`${server.baseUrl} is up and ready`);
  });

  it("fails server while the server is not ready", async () => {
    server.testApp.lifecycle.ready = false;
    try {
      const { code, check, statuses } = await doctor(env);

      expect(code).toBe(1);
      expect(check("server")).toMatchObject({ status: "fail", detail: expect.stringMatching(new RegExp(`^${server.baseUrl} is up but not ready`)) });
      expect(statuses.authentication).toBe("skip");
    } finally {
      server.testApp.lifecycle.ready = true;
    }
  });
});

describe("mailroom doctor, with a key the server refuses or limits", () => {
  let server: TestServer;
  useTestServer((started) => ({ server } = started));

  const createKey = async (permission: "full_access" | "sending_access") =>
    (await call(server, server.sandboxKey, "POST", "/v1/api-keys", { name: `doctor ${permission}`, permission })) as { id: string; secret: string };

  it("fails authentication for a key the server does not know, naming how to get one, and exits 1", async () => {
    const { code, check, statuses } = await doctor(cliEnv(server, "svc_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"));

    expect(code).toBe(1);
    expect(statuses).toEqual({ api_key: "pass", server: "pass", authentication: "fail", default_sender: "skip", sending_domains: "skip", webhooks: "skip", usage: "skip" });
    expect(check("authentication")).toMatchObject({
      detail: "the server refused the key: it is invalid, revoked or expired (invalid_api_key)",
      fix: expect.stringContaining("mailroom api-keys create"),
    });
  });

  it("fails authentication for a user access token the server does not take, saying tokens last 15 minutes and how to get a new one", async () => {
    const { code, check, statuses } = await doctor(cliEnv(server, "mru_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"));

    expect(code).toBe(1);
    expect(statuses).toMatchObject({ api_key: "pass", server: "pass", authentication: "fail" });
    const { detail, fix } = check("authentication") as { detail: string; fix: string };
    expect(detail).toMatch(/^the server refused the user access token: it is invalid or expired \(a token lasts 15 minutes\) \(\w+\)$/);
    expect(fix).toContain("POST /auth/token");
    expect(fix).not.toContain("api-keys create");
  });

  it("fails authentication for a revoked key", async () => {
    const key = await createKey("full_access");
    expect((await doctor(cliEnv(server, key.secret))).code).toBe(0);
    await call(server, server.sandboxKey, "DELETE", `/v1/api-keys/${key.id}`);

    const { code, statuses } = await doctor(cliEnv(server, key.secret));

    expect(code).toBe(1);
    expect(statuses.authentication).toBe("fail");
  });

  it("warns for a sending_access key, which can send but not read the workspace, skips the rest, and exits 0", async () => {
    const key = await createKey("sending_access");

    const { code, report, check } = await doctor(cliEnv(server, key.secret));

    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    expect(report.checks.map(({ status }) => status)).toEqual(["pass", "pass", "warn", "skip", "skip", "skip", "skip"]);
    expect(check("authentication")).toMatchObject({ detail: expect.stringContaining("can send, but may not read the workspace (insufficient_permission)"), fix: "Run `MAILROOM_API_KEY=<a full_access key> mailroom doctor` to check the rest." });
    expect(check("webhooks").detail).toBe("needs a full_access key the server accepts (see authentication)");
  });

  it("takes the key from --api-key over MAILROOM_API_KEY", async () => {
    const { code, statuses } = await doctor(cliEnv(server, "svc_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"), "--api-key", server.sandboxKey);

    expect(code).toBe(0);
    expect(statuses.authentication).toBe("pass");
  });
});

describe("mailroom doctor, in sandbox with things to improve", () => {
  let server: TestServer;
  let env: Record<string, string>;
  useTestServer((started) => ({ server, env } = started));

  it("warns that every send must give a from without a default sender, and still exits 0", async () => {
    const { code, check } = await doctor(env);

    expect(code).toBe(0);
    expect(check("default_sender")).toMatchObject({ status: "warn", fix: expect.stringContaining("mailroom workspace update --default-from") });
  });

  it("warns naming each disabled webhook endpoint and how to enable it again", async () => {
    const enabled = await call(server, server.sandboxKey, "POST", "/v1/webhooks", { url: "http://127.0.0.1:9/up" });
    const disabled = await call(server, server.sandboxKey, "POST", "/v1/webhooks", { url: "http://127.0.0.1:9/off", enabled: false });

    const { code, check } = await doctor(env);

    expect(code).toBe(0);
    expect(check("webhooks")).toEqual({
      name: "webhooks",
      status: "warn",
      detail: `2 endpoints, 1 disabled: ${disabled.id as string} http://127.0.0.1:9/off (manual)`,
      fix: `Once the receiver answers 2xx: mailroom webhooks update ${disabled.id as string} --enabled true`,
    });
    expect(check("webhooks").detail).not.toContain(enabled.id as string);
  });
});

describe("mailroom doctor, with a live key and sending domains in DNS", () => {
  let dns: DnsServer;
  let server: TestServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    dns = await startDnsServer();
    server = await startTestServer({ DNS_SERVERS: dns.address, SENDING_HOSTNAME: "mail.mailroom.test" });
    env = cliEnv(server, server.testApp.workspace.liveKey);
  });
  afterAll(async () => {
    await server?.close();
    await dns?.close();
  });

  const live = () => server.testApp.workspace.liveKey;
  const addDomain = async (name: string) => (await call(server, live(), "POST", "/v1/domains", { name })) as unknown as Domain;
  const verify = async (domain: Domain) => (await call(server, live(), "POST", `/v1/domains/${domain.id}/verify`)) as unknown as Domain;
  const publish = (record: DomainRecord) =>
    dns.add(record.name, record.type === "MX" ? { type: "MX", priority: record.priority ?? 10, exchange: `${record.value}.` } : { type: "TXT", value: record.value });
  const sendFrom = (mailbox: string) => call(server, live(), "PATCH", "/v1/workspace", { default_from: mailbox });

  it("fails sending_domains when the workspace has no domain at all", async () => {
    const { code, check } = await doctor(env);

    expect(code).toBe(1);
    expect(check("authentication").detail).toMatch(/, live$/);
    expect(check("sending_domains")).toMatchObject({ status: "fail", detail: "no sending domain: live mail is only sent from a verified one", fix: expect.stringContaining("mailroom domains create --name") });
  });

  it("fails sending_domains when the default sender's domain is not verified, naming the command that verifies it", async () => {
    const domain = await addDomain("pending.example");
    await sendFrom("Acme <hello@Pending.Example>");

    const { code, report, check } = await doctor(env);

    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    expect(check("sending_domains")).toMatchObject({
      status: "fail",
      detail: "the default sender's domain pending.example is pending: live mail from it is refused",
      fix: expect.stringContaining(`mailroom domains verify ${domain.id}`),
    });
  });

  it("fails sending_domains when the default sender's domain was never added", async () => {
    await sendFrom("hello@elsewhere.example");

    const { check } = await doctor(env);

    expect(check("sending_domains")).toMatchObject({ status: "fail", fix: expect.stringContaining("mailroom domains create --name elsewhere.example") });
  });

  it("passes once the default sender's domain is verified", async () => {
    const domain = await addDomain("verified.example");
    for (const record of domain.records) publish(record);
    expect((await verify(domain)).status).toBe("verified");
    await sendFrom("Acme <hello@verified.example>");

    const { code, check } = await doctor(env);

    expect(code).toBe(0);
    expect(check("sending_domains")).toEqual({ name: "sending_domains", status: "pass", detail: "2 domains, 1 verified; the default sender's verified.example is verified" });
  });

  it("warns naming a domain whose records went missing, still sending until its grace period ends", async () => {
    const domain = await addDomain("lapsed.example");
    for (const record of domain.records) publish(record);
    await verify(domain);
    dns.remove(domain.records.find((record) => record.purpose === "dkim")?.name as string);
    const lapsed = await verify(domain);
    expect(lapsed.status).toBe("temporary_failure");
    await sendFrom("Acme <hello@lapsed.example>");

    const { code, check } = await doctor(env);

    expect(code).toBe(0);
    expect(check("sending_domains")).toMatchObject({
      status: "warn",
      detail: `3 domains, 1 verified; lapsed.example is temporary_failure (live mail sent until ${lapsed.grace_ends_at as string})`,
      fix: expect.stringContaining(`mailroom domains verify ${domain.id}`),
    });
  });
});

describe("mailroom doctor, with a live monthly quota", () => {
  let server: TestServer;
  let env: Record<string, string>;
  useTestServer((started) => {
    server = started.server;
    env = cliEnv(server, server.testApp.workspace.liveKey);
  });
  beforeAll(async () => {
    await server.testApp.verifiedDomain("acme.example");
    await call(server, server.testApp.workspace.liveKey, "PATCH", "/v1/workspace", { default_from: "Acme <hello@acme.example>", monthly_quota: 10 });
  });
  const send = (count: number) =>
    Promise.all(Array.from({ length: count }, () => call(server, server.testApp.workspace.liveKey, "POST", "/v1/messages", { to: "ada@example.com", subject: "Hi", text: "Hi" })));

  it("passes below 90 % of the quota, warns from 90 %, and fails at the quota, where sending is refused", async () => {
    await send(8);
    expect((await doctor(env)).check("usage")).toMatchObject({ status: "pass", detail: expect.stringMatching(/^8 of 10 live messages this month \(80 %\); resets /) });

    await send(1);
    const near = await doctor(env);
    expect(near.code).toBe(0);
    expect(near.check("usage")).toMatchObject({ status: "warn", detail: expect.stringMatching(/^9 of 10 .*\(90 %\)/), fix: expect.stringContaining("--monthly-quota") });

    await send(1);
    const at = await doctor(env);
    expect(at.code).toBe(1);
    expect(at.check("usage")).toMatchObject({ status: "fail", detail: expect.stringMatching(/^10 of 10 .*: sending is refused until then$/) });
  });
});
