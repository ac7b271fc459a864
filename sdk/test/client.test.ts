import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { readFileSync } from "node:fs";
import { inspect } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import { APIError, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS, isSendableApiKey, Mailroom, MailroomConfigurationError, MailroomError, readEnvVar, RedirectError, USER_AGENT, VERSION } from "../src/index.js";
import { fakeClient, fakeFetch, json } from "./helpers.js";

const workspace = () => json(200, { id: "ws_1", object: "workspace" });

describe("new Mailroom()", () => {
  afterEach(() => vi.unstubAllEnvs());

  it("sends the key given as the first argument as a bearer token", async () => {
    const fake = fakeFetch([workspace()]);
    await new Mailroom("svc_test_first", { baseUrl: "http://mailroom.test", fetch: fake.fetch }).workspace.get();
    expect(fake.requests[0]?.headers.get("authorization")).toBe("Bearer svc_test_first");
  });

  it("takes the key and every other setting from one options object", async () => {
    const fake = fakeFetch([workspace()]);
    const mr = new Mailroom({ apiKey: "svc_test_object", baseUrl: "http://mailroom.test", timeout: 5_000, maxRetries: 4, fetch: fake.fetch });
    await mr.workspace.get();
    expect(fake.requests[0]?.headers.get("authorization")).toBe("Bearer svc_test_object");
    expect(fake.requests[0]?.url.href).toBe("http://mailroom.test/v1/workspace");
    expect({ timeout: mr.timeout, maxRetries: mr.maxRetries }).toEqual({ timeout: 5_000, maxRetries: 4 });
  });

  it("defaults to a 60 s timeout and 2 retries", () => {
    const mr = new Mailroom("svc_test_defaults");
    expect({ timeout: mr.timeout, maxRetries: mr.maxRetries }).toEqual({ timeout: 60_000, maxRetries: 2 });
    expect({ timeout: DEFAULT_TIMEOUT_MS, maxRetries: DEFAULT_MAX_RETRIES }).toEqual({ timeout: 60_000, maxRetries: 2 });
  });

  it("reads the key from MAILROOM_API_KEY when none is given", async () => {
    vi.stubEnv("MAILROOM_API_KEY", "svc_test_from_env");
    const fake = fakeFetch([workspace()]);
    await new Mailroom({ baseUrl: "http://mailroom.test", fetch: fake.fetch }).workspace.get();
    expect(fake.requests[0]?.headers.get("authorization")).toBe("Bearer svc_test_from_env");
  });

  it("prefers the key it is given over MAILROOM_API_KEY", async () => {
    vi.stubEnv("MAILROOM_API_KEY", "svc_test_from_env");
    const fake = fakeFetch([workspace()]);
    await new Mailroom("svc_test_given", { baseUrl: "http://mailroom.test", fetch: fake.fetch }).workspace.get();
    expect(fake.requests[0]?.headers.get("authorization")).toBe("Bearer svc_test_given");
  });

  it("reads the base URL from MAILROOM_BASE_URL when none is given", async () => {
    vi.stubEnv("MAILROOM_BASE_URL", "https://mail.example.com");
    const fake = fakeFetch([workspace()]);
    const mr = new Mailroom("svc_test_env_url", { fetch: fake.fetch });
    await mr.workspace.get();
    expect(mr.baseUrl).toBe("https://mail.example.com");
    expect(fake.requests[0]?.url.href).toBe("https://mail.example.com/v1/workspace");
  });

  it("reads both without the spaces and line breaks around them, as readEnvVar reads any environment", async () => {
    vi.stubEnv("MAILROOM_API_KEY", " svc_test_pasted\n");
    vi.stubEnv("MAILROOM_BASE_URL", "https://mail.example.com \n");
    const fake = fakeFetch([workspace()]);
    await new Mailroom({ fetch: fake.fetch }).workspace.get();
    expect(fake.requests[0]?.headers.get("authorization")).toBe("Bearer svc_test_pasted");
    expect(fake.requests[0]?.url.href).toBe("https://mail.example.com/v1/workspace");
    expect(readEnvVar({ MAILROOM_API_KEY: " svc_test_pasted\n" }, "MAILROOM_API_KEY")).toBe("svc_test_pasted");
    expect([readEnvVar({ MAILROOM_API_KEY: " \n" }, "MAILROOM_API_KEY"), readEnvVar({}, "MAILROOM_API_KEY"), readEnvVar(undefined, "MAILROOM_API_KEY")]).toEqual([undefined, undefined, undefined]);
  });

  it("talks to http://localhost:3000 when no base URL is given anywhere", () => {
    vi.stubEnv("MAILROOM_BASE_URL", "");
    expect(new Mailroom("svc_test_local").baseUrl).toBe("http://localhost:3000");
  });

  it("throws a MailroomConfigurationError naming MAILROOM_API_KEY when there is no key", () => {
    vi.stubEnv("MAILROOM_API_KEY", "");
    const construct = () => new Mailroom({ baseUrl: "http://mailroom.test" });
    expect(construct).toThrow(MailroomConfigurationError);
    expect(construct).toThrow(/MAILROOM_API_KEY/);
    expect(construct).toThrow(MailroomError);
  });

  it("reads a null key (an unset value from JavaScript code) as none given", () => {
    vi.stubEnv("MAILROOM_API_KEY", "");
    const construct = () => new Mailroom(null as unknown as string);
    expect(construct).toThrow(MailroomConfigurationError);
    expect(construct).toThrow(/MAILROOM_API_KEY/);
    vi.stubEnv("MAILROOM_API_KEY", "svc_test_from_env");
    expect(new Mailroom(null as unknown as string, { baseUrl: "http://mailroom.test" }).baseUrl).toBe("http://mailroom.test");
  });

  it.each(["http//localhost:3000", "localhost:3000", "ftp://mailroom.test", ""])("throws a MailroomConfigurationError naming a base URL %j that is not an http(s) URL", (baseUrl) => {
    const construct = () => new Mailroom({ apiKey: "svc_test_bad_url", baseUrl });
    expect(construct).toThrow(MailroomConfigurationError);
    expect(construct).toThrow(`"${baseUrl}"`);
  });

  it("checks a base URL from MAILROOM_BASE_URL the same way", () => {
    vi.stubEnv("MAILROOM_BASE_URL", "http//localhost:3000");
    expect(() => new Mailroom("svc_test_bad_env_url")).toThrow(MailroomConfigurationError);
  });

  it.each(["http://mailroom.test/", "http://mailroom.test//"])("ignores trailing slashes in the base URL %s", async (baseUrl) => {
    const fake = fakeFetch([workspace()]);
    await new Mailroom({ apiKey: "svc_test_slash", baseUrl, fetch: fake.fetch }).workspace.get();
    expect(fake.requests[0]?.url.href).toBe("http://mailroom.test/v1/workspace");
  });

  it("keeps a path prefix in the base URL, for servers behind a proxy", async () => {
    const fake = fakeFetch([workspace()]);
    await new Mailroom({ apiKey: "svc_test_prefix", baseUrl: "https://proxy.example.com/mailroom/", fetch: fake.fetch }).workspace.get();
    expect(fake.requests[0]?.url.href).toBe("https://proxy.example.com/mailroom/v1/workspace");
  });

  it("sends defaultHeaders with every request and a call's own headers with that call only", async () => {
    const fake = fakeFetch([workspace(), workspace()]);
    const mr = fakeClient(fake, { defaultHeaders: { "x-team": "billing" } });
    await mr.workspace.get({ headers: { "x-trace": "abc" } });
    await mr.workspace.get();
    expect(fake.requests.map((request) => [request.headers.get("x-team"), request.headers.get("x-trace")])).toEqual([
      ["billing", "abc"],
      ["billing", null],
    ]);
  });

  it("names itself in User-Agent, with its version, so that request logs tell SDK calls apart", async () => {
    const fake = fakeFetch([workspace()]);
    await fakeClient(fake).workspace.get();
    const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
    expect(VERSION).toBe(version);
    expect(fake.requests[0]?.headers.get("user-agent")).toBe(`mailroom-node/${version}`);
  });

  it("lets a program built on it put its own name first in User-Agent (as the CLI does)", async () => {
    const fake = fakeFetch([workspace(), workspace()]);
    const mr = fakeClient(fake, { defaultHeaders: { "User-Agent": `acme-billing/2.1 ${USER_AGENT}` } });
    await mr.workspace.get();
    await mr.workspace.get({ headers: { "user-agent": "one-off/1" } });
    expect(fake.requests.map((request) => request.headers.get("user-agent"))).toEqual([`acme-billing/2.1 mailroom-node/${VERSION}`, "one-off/1"]);
  });
});

describe("withOptions", () => {
  it("returns a client with the changed options and the same key and base URL", async () => {
    const fake = fakeFetch([workspace()]);
    const mr = fakeClient(fake);
    const patient = mr.withOptions({ timeout: 120_000, maxRetries: 0 });
    await patient.workspace.get();
    expect({ timeout: patient.timeout, maxRetries: patient.maxRetries, baseUrl: patient.baseUrl }).toEqual({
      timeout: 120_000,
      maxRetries: 0,
      baseUrl: "http://mailroom.test",
    });
    expect(fake.requests[0]?.headers.get("authorization")).toBe("Bearer svc_test_fake");
  });

  it("leaves the original client unchanged", () => {
    const mr = fakeClient(fakeFetch([]));
    mr.withOptions({ maxRetries: 0, baseUrl: "http://elsewhere.test" });
    expect({ maxRetries: mr.maxRetries, baseUrl: mr.baseUrl }).toEqual({ maxRetries: 2, baseUrl: "http://mailroom.test" });
  });

  it("can switch to another key", async () => {
    const fake = fakeFetch([workspace()]);
    await fakeClient(fake).withOptions({ apiKey: "svc_live_other" }).workspace.get();
    expect(fake.requests[0]?.headers.get("authorization")).toBe("Bearer svc_live_other");
  });
});

describe("redirects", () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  it("refuses to follow one, so the key is never sent to another address", async () => {
    const seen: Array<{ url: string | undefined; headers: IncomingHttpHeaders }> = [];
    server = createServer((req, res) => {
      seen.push({ url: req.url, headers: req.headers });
      if (req.url === "/v1/workspace") res.writeHead(302, { location: "/elsewhere" }).end();
      else res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const mr = new Mailroom({ apiKey: "svc_test_secret", baseUrl: `http://127.0.0.1:${port}`, maxRetries: 0 });
    await expect(mr.workspace.get()).rejects.toBeInstanceOf(RedirectError);
    expect(seen.map((request) => request.url)).toEqual(["/v1/workspace"]);
  });

  it.each([301, 302, 307, 308])("throws a %i as a RedirectError naming the status and where it points, without retrying it", async (status) => {
    const seen: string[] = [];
    server = createServer((req, res) => {
      seen.push(req.url ?? "");
      res.writeHead(status, { location: `https://mailroom.example${req.url ?? ""}`, "content-type": "text/html" }).end("<a href=\"…\">Moved</a>");
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const mr = new Mailroom({ apiKey: "svc_test_secret", baseUrl: `http://127.0.0.1:${port}` });

    const error = await mr.messages.create({ to: "ada@example.com", subject: "Hi", text: "Hi" }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(RedirectError);
    expect(error).toBeInstanceOf(APIError);
    expect(error).toMatchObject({ status, code: `http_${status}`, location: "https://mailroom.example/v1/messages" });
    expect((error as RedirectError).message).toBe(
      `${status} http_${status}: the server answered ${status}, redirecting to https://mailroom.example/v1/messages: the Mailroom API does not redirect, so set the base URL to where that points.`,
    );
    // A redirect answers the same every time: one request, not 1 + maxRetries.
    expect(seen).toEqual(["/v1/messages"]);
  });

  it("makes a relative Location absolute, against the request's URL", async () => {
    server = createServer((_req, res) => res.writeHead(302, { location: "/api/v1/workspace" }).end());
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const mr = new Mailroom({ apiKey: "svc_test_secret", baseUrl: `http://127.0.0.1:${port}` });

    await expect(mr.workspace.get()).rejects.toMatchObject({ status: 302, location: `http://127.0.0.1:${port}/api/v1/workspace` });
  });
});

describe("path parameters", () => {
  // encodeURIComponent leaves dots alone and the URL parser resolves dot segments (%2e%2e too),
  // so these would reach another endpoint: listEvents("..") would GET /v1/events.
  it.each([
    ["messages.listEvents", (mr: Mailroom, id: string) => mr.messages.listEvents(id)],
    ["messages.cancel", (mr: Mailroom, id: string) => mr.messages.cancel(id)],
    ["templates.listVersions", (mr: Mailroom, id: string) => mr.templates.listVersions(id)],
    ["domains.delete", (mr: Mailroom, id: string) => mr.domains.delete(id)],
  ])("%s refuses an id that is empty, . or .., without sending anything", async (_method, call) => {
    const fake = fakeFetch([]);
    const mr = fakeClient(fake, { maxRetries: 0 });
    for (const id of ["..", ".", ""]) {
      const error = await Promise.resolve(call(mr, id)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MailroomConfigurationError);
    }
    expect(fake.requests).toEqual([]);
  });

  it("still sends ids that only contain dots among other characters, escaped", async () => {
    const fake = fakeFetch([json(200, { data: [], has_more: false, next_cursor: null }), json(200, { data: [], has_more: false, next_cursor: null })]);
    const mr = fakeClient(fake);
    await mr.templates.listVersions("welcome.v2");
    await mr.templates.listVersions("...");
    expect(fake.requests.map((request) => request.url.pathname)).toEqual(["/v1/templates/welcome.v2/versions", "/v1/templates/.../versions"]);
  });
});

describe("query parameters", () => {
  it("sends a Date as ISO 8601 rather than dropping it", async () => {
    const fake = fakeFetch([json(200, { data: [], has_more: false, next_cursor: null })]);
    const since = new Date("2026-11-20T10:00:00.000Z");
    await fakeClient(fake).messages.list({ created_after: since as unknown as string, limit: 5 });
    expect(fake.requests[0]?.url.searchParams.get("created_after")).toBe("2026-11-20T10:00:00.000Z");
    expect(fake.requests[0]?.url.searchParams.get("limit")).toBe("5");
  });
});

describe("the API key", () => {
  const SECRET = "svc_test_do_not_print_me";

  it("does not show when the client is inspected, logged or serialised", () => {
    const mr = new Mailroom({ apiKey: SECRET, baseUrl: "http://mailroom.test" });
    expect(inspect(mr, { depth: Infinity, showHidden: true })).not.toContain(SECRET);
    const seen = new WeakSet<object>();
    // What a logger's safe stringify (pino's) does with a client: cycles dropped, the rest kept.
    const serialised = JSON.stringify(mr, (_key, value: unknown) => {
      if (typeof value === "object" && value !== null) {
        if (seen.has(value)) return undefined;
        seen.add(value);
      }
      return value;
    });
    expect(serialised).not.toContain(SECRET);
    expect(inspect(mr.withOptions({ maxRetries: 0 }), { depth: Infinity })).not.toContain(SECRET);
  });

  it.each([
    ["a line break", `${SECRET}\r\nx-evil: 1`],
    ["a NUL", `${SECRET}\u0000`],
    ["a space", "svc_test_two words"],
    ["a non-ASCII character", "svc_test_clé"],
  ])("is refused with %s, by a MailroomConfigurationError that does not repeat it", (_what, apiKey) => {
    const error = (() => {
      try {
        new Mailroom({ apiKey, baseUrl: "http://mailroom.test" });
      } catch (e: unknown) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(MailroomConfigurationError);
    expect((error as Error).message).not.toContain(apiKey);
    expect((error as Error).message).not.toContain("do_not_print_me");
  });

  // The CLI refuses keys with this same predicate (cli/src/connection.ts), so the two cannot drift.
  it.each([
    ["an API key", "svc_test_fine", true],
    ["a user access token", "mru_live_fine", true],
    ["any other printable ASCII (the server judges the form)", "none!~", true],
    ["nothing", "", false],
    ["a line break", `${SECRET}\n`, false],
    ["a tab", "svc_test_a\tb", false],
    ["a space", "svc_test_two words", false],
    ["DEL", "svc_test_\u007f", false],
    ["a non-ASCII character", "svc_test_clé", false],
  ])("isSendableApiKey judges a key with %s as the constructor does", (_what, apiKey, sendable) => {
    expect(isSendableApiKey(apiKey)).toBe(sendable);
    const construct = () => new Mailroom({ apiKey, baseUrl: "http://mailroom.test" });
    if (sendable) expect(construct).not.toThrow();
    else expect(construct).toThrow(MailroomConfigurationError);
  });

  it("refuses a base URL with a user name or password, without repeating the password", () => {
    const construct = () => new Mailroom({ apiKey: "svc_test_fine", baseUrl: "https://ada:hunter2@mailroom.test" });
    expect(construct).toThrow(MailroomConfigurationError);
    expect(construct).not.toThrow(/hunter2/);
  });

  it("turns a request that cannot be built (a header value with a line break) into a MailroomError", async () => {
    const fake = fakeFetch([]);
    const error = await fakeClient(fake, { maxRetries: 0 })
      .workspace.get({ headers: { "x-trace": "a\r\nb" } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MailroomError);
    expect(fake.requests).toEqual([]);
  });
});

describe("maxRetries and timeout", () => {
  it.each([Number.NaN, -1, 1.5, Number.POSITIVE_INFINITY])("refuses maxRetries %s", (maxRetries) => {
    expect(() => new Mailroom({ apiKey: "svc_test_fine", baseUrl: "http://mailroom.test", maxRetries })).toThrow(MailroomConfigurationError);
  });

  it.each([Number.NaN, 0, -5, Number.POSITIVE_INFINITY, 2 ** 31])("refuses timeout %s", (timeout) => {
    expect(() => new Mailroom({ apiKey: "svc_test_fine", baseUrl: "http://mailroom.test", timeout })).toThrow(MailroomConfigurationError);
  });

  it("checks them in withOptions too", () => {
    const mr = new Mailroom({ apiKey: "svc_test_fine", baseUrl: "http://mailroom.test" });
    expect(() => mr.withOptions({ maxRetries: Number.NaN })).toThrow(MailroomConfigurationError);
  });
});
