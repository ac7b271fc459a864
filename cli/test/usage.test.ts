import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestServer, type TestServer } from "../../test/helpers/http-server.js";
import { nouns, shortcuts, tools } from "../src/commands/index.js";
import { REPO, cliEnv, closedPort, contractExample, eventually, problemBody, problemOf, refusedConnection, runCli, startCli, stubApi, type CliResult, type RunOptions } from "./helpers.js";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

describe("configuration", () => {
  it("exits 2 without an API key, naming MAILROOM_API_KEY and --api-key", async () => {
    const result = await runCli(["workspace", "get"], { env: { MAILROOM_BASE_URL: server.baseUrl } });

    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(problemOf(result)).toEqual({ error: "usage", message: expect.stringMatching(/MAILROOM_API_KEY.*--api-key/s) });
  });

  it("says the same in words on a terminal", async () => {
    const result = await runCli(["workspace", "get"], { env: { MAILROOM_BASE_URL: server.baseUrl }, tty: true });

    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^No API key\. Set MAILROOM_API_KEY .* or pass --api-key\.\n$/);
  });

  it("takes the key from --api-key and the server from --base-url, over the environment", async () => {
    const port = await closedPort();
    const env = { MAILROOM_API_KEY: "svc_test_not_this_one", MAILROOM_BASE_URL: `http://127.0.0.1:${port}` };

    const result = await runCli(["workspace", "get", "--api-key", server.sandboxKey, "--base-url", server.baseUrl], { env });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toMatchObject({ id: server.testApp.workspace.id });
  });

  it("names itself and the SDK in User-Agent, so that request logs tell the CLI's calls apart", async () => {
    const agents: Array<string | null> = [];
    const fetch = async (request: Request) => {
      agents.push(request.headers.get("user-agent"));
      return Response.json({ id: "ws_1", object: "workspace" });
    };

    const result = await runCli(["workspace", "get"], { env: { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" }, fetch });

    expect(result.code, result.stderr).toBe(0);
    const version = (name: string) => (JSON.parse(readFileSync(join(REPO, name, "package.json"), "utf8")) as { version: string }).version;
    expect(agents).toEqual([`mailroom-cli/${version("cli")} mailroom-node/${version("sdk")}`]);
  });

  it("exits 1 with the 401 invalid_api_key problem for a key the server does not know", async () => {
    const result = await runCli(["workspace", "get"], { env: cliEnv(server, "svc_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA") });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 401, code: "invalid_api_key", request_id: expect.any(String) });
  });

  it("tells a person at a terminal to check MAILROOM_API_KEY when the key is refused", async () => {
    const result = await runCli(["workspace", "get"], { env: cliEnv(server, "svc_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"), tty: true });

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^Error: 401 invalid_api_key: /);
    expect(result.stderr).toContain("Check MAILROOM_API_KEY: the key is missing, mistyped, revoked or expired.");
  });

  it("tells a person to check --api-key, not MAILROOM_API_KEY, when the key given with the flag is refused", async () => {
    // The environment's key is a good one: the flag wins over it, and it is the flag's that is refused.
    const result = await runCli(["workspace", "get", "--api-key", "svc_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"], { env: cliEnv(server), tty: true });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Check --api-key: the key is missing, mistyped, revoked or expired.");
    expect(result.stderr).not.toContain("MAILROOM_API_KEY");
  });

  it("exits 1 when the server cannot be reached, naming its URL and how to start one", async () => {
    const baseUrl = `http://127.0.0.1:${await closedPort()}`;

    const result = await runCli(["system", "health"], { env: { MAILROOM_API_KEY: server.sandboxKey, MAILROOM_BASE_URL: baseUrl }, tty: true });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Could not reach the Mailroom API: ECONNREFUSED");
    expect(result.stderr).toContain(`Is the server running at ${baseUrl}? Start one with \`make run\`, or set MAILROOM_BASE_URL.`);
  });

  describe("a server that answers with a redirect (http for https, a proxy)", () => {
    const redirecting = async (run: (baseUrl: string) => Promise<CliResult>) => {
      const seen: string[] = [];
      const proxy = createServer((req, res) => {
        seen.push(`${req.method} ${req.url}`);
        res.writeHead(302, { location: `https://mailroom.example${req.url ?? ""}` }).end();
      });
      await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
      try {
        return { result: await run(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`), seen };
      } finally {
        await new Promise((resolve) => proxy.close(resolve));
      }
    };
    const send = ["send", "--from", "a@acme.example", "--to", "ada@example.com", "--subject", "Hi", "--text", "Hi"];

    it("names the status and where it points, once, without the advice for a request that may have run", async () => {
      const { result, seen } = await redirecting((baseUrl) => runCli(send, { env: { MAILROOM_API_KEY: server.sandboxKey, MAILROOM_BASE_URL: baseUrl }, tty: true }));

      expect(result.code).toBe(1);
      expect(result.stderr).toContain("Error: 302 http_302: the server answered 302, redirecting to https://mailroom.example/v1/messages: the Mailroom API does not redirect, so set the base URL to where that points.");
      expect(result.stderr).toContain("Set MAILROOM_BASE_URL (or --base-url) to where it points: the API did not carry out the request.");
      expect(result.stderr).not.toContain("Could not reach");
      expect(result.stderr).not.toContain("carried out all the same");
      expect(seen).toEqual(["POST /v1/messages"]);
    });

    it("is an API error with its status in JSON mode, without an idempotency_key to run it again with", async () => {
      const { result } = await redirecting((baseUrl) => runCli(send, { env: { MAILROOM_API_KEY: server.sandboxKey, MAILROOM_BASE_URL: baseUrl } }));

      expect(result.code).toBe(1);
      expect(problemOf(result)).toEqual({ status: 302, code: "http_302", detail: expect.stringContaining("redirecting to https://mailroom.example/v1/messages") });
    });
  });

  it("reports an unreachable server as JSON in JSON mode", async () => {
    const result = await runCli(["system", "health"], { env: { MAILROOM_API_KEY: server.sandboxKey, MAILROOM_BASE_URL: "http://mailroom.invalid:3000" }, fetch: refusedConnection });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toEqual({ error: "connection", message: "Could not reach the Mailroom API: ECONNREFUSED", base_url: "http://mailroom.invalid:3000", attempts: 1 });
  });

  it.each([
    ["--base-url", ["--base-url", "http//localhost:3000"], {}],
    ["MAILROOM_BASE_URL", [], { MAILROOM_BASE_URL: "http//localhost:3000" }],
  ])("exits 2 for a server URL in %s that is not a URL, naming it", async (_where, flags, env) => {
    const result = await runCli(["workspace", "get", ...flags], { env: { MAILROOM_API_KEY: server.sandboxKey, ...env } });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toEqual({ error: "usage", message: expect.stringContaining('"http//localhost:3000"') });
  });

  it.each([
    ["--base-url", ["--base-url", "http://127.0.0.1:3000/v1"], {}],
    ["MAILROOM_BASE_URL", [], { MAILROOM_BASE_URL: "http://127.0.0.1:3000/v1/" }],
  ])("exits 2 for a server URL in %s that ends in /v1, which every path already starts with, sending nothing", async (_where, flags, env) => {
    const stub = stubApi(200, {});

    const result = await runCli(["messages", "list", ...flags], { env: { MAILROOM_API_KEY: "svc_test_stub", ...env }, fetch: stub.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toEqual({ error: "usage", message: expect.stringContaining("drop the /v1: give http://127.0.0.1:3000") });
    expect(stub.seen).toEqual([]);
  });

  it("takes a server URL whose path merely holds v1 elsewhere", async () => {
    const stub = stubApi(200, { data: [], has_more: false, next_cursor: null });

    const result = await runCli(["messages", "list"], { env: { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://127.0.0.1:3000/v1/mailroom" }, fetch: stub.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(stub.seen).toMatchObject([{ target: "/v1/mailroom/v1/messages?limit=20" }]);
  });

  it("exits 1 with an API error, not a stack trace, when a success's body is not JSON", async () => {
    // What a captive portal or a misrouted proxy answers: 200 and a page of its own.
    const portal = createServer((_request, response) => response.writeHead(200, { "content-type": "text/html" }).end("<html>Sign in to the Wi-Fi</html>"));
    await new Promise<void>((resolve) => portal.listen(0, "127.0.0.1", resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(portal.address() as AddressInfo).port}`;

      const result = await runCli(["workspace", "get"], { env: { MAILROOM_API_KEY: server.sandboxKey, MAILROOM_BASE_URL: baseUrl }, tty: true });

      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^Error: 200 http_200: the body is not JSON \(text\/html\): <html>Sign in to the Wi-Fi<\/html>\n$/);
    } finally {
      await new Promise((resolve) => portal.close(resolve));
    }
  });
});

describe("an error after which the request may have run", () => {
  const env = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };
  const send = ["send", "--to", "ada@example.com", "--subject", "Hi", "--text", "Hi"];

  /** A stand-in API that answers every request with `reply`, recording the Idempotency-Key of each. */
  function answering(reply: (request: Request) => Response | Promise<Response>) {
    const keys: Array<string | null> = [];
    const fetch = async (request: Request) => {
      keys.push(request.headers.get("idempotency-key"));
      return reply(request);
    };
    return { fetch, keys, key: () => [...new Set(keys)] };
  }
  const badGateway = () => new Response(JSON.stringify(problemBody(502, "bad_gateway")), { status: 502, headers: { "content-type": "application/problem+json", "retry-after": "0" } });
  const connectionReset = () => Promise.reject(new TypeError("fetch failed", { cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }) }));
  const hang = (request: Request) => new Promise<Response>((_resolve, reject) => request.signal.addEventListener("abort", () => reject(request.signal.reason), { once: true }));

  /** Runs the CLI on a clock of its own, moved on a second at a time, so that a minute's timeout passes at once. */
  async function runOnFakeTime(argv: string[], options: RunOptions): Promise<CliResult> {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    try {
      let finished = false;
      const running = runCli(argv, options).finally(() => (finished = true));
      while (!finished) await vi.advanceTimersByTimeAsync(1000);
      return await running;
    } finally {
      vi.useRealTimers();
    }
  }

  it("adds the Idempotency-Key to a 5xx's problem in JSON mode, so that a script can run it again under it", async () => {
    const api = answering(badGateway);

    const result = await runCli(send, { env, fetch: api.fetch });

    expect(result.code).toBe(1);
    expect(api.key()).toEqual([expect.any(String)]);
    expect(problemOf(result)).toEqual({ ...problemBody(502, "bad_gateway"), idempotency_key: api.key()[0] });
  });

  it("says on a terminal that a 5xx's request may have run, and how to run it again without running it twice", async () => {
    const api = answering(badGateway);

    const result = await runCli(send, { env, fetch: api.fetch, tty: true });

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^Error: 502 bad_gateway: /);
    expect(result.stderr).toContain(`--idempotency-key ${api.key()[0]}`);
  });

  it("gives the Idempotency-Key of a send whose connection was lost, in JSON and in words", async () => {
    const api = answering(connectionReset);

    const json = await runCli(send, { env, fetch: api.fetch });
    const words = await runCli([...send, "--idempotency-key", "order 1234"], { env, fetch: api.fetch, tty: true });

    expect(problemOf(json)).toEqual({ error: "connection", message: "Could not reach the Mailroom API: ECONNRESET", base_url: env.MAILROOM_BASE_URL, attempts: 3, idempotency_key: api.keys[0] });
    expect(words.code).toBe(1);
    expect(words.stderr).toContain("--idempotency-key 'order 1234'");
  });

  it("says a timeout is a slow answer, not a server to start, and gives the key to run it again with", async () => {
    const api = answering(hang);

    const words = await runOnFakeTime(send, { env, fetch: api.fetch, tty: true });
    const json = await runOnFakeTime([...send, "--idempotency-key", "order-1234"], { env, fetch: api.fetch });

    expect(words.code).toBe(1);
    // Three attempts of 60 s, and the waits of about 0.5 s and 1 s between them.
    expect(words.stderr).toMatch(/^The request timed out after 60000 ms\. \(the last of 3 attempts, 18[01] s in all\)$/m);
    expect(words.stderr).not.toContain("make run");
    expect(words.stderr).toContain(`--idempotency-key ${api.keys[0]}`);
    expect(problemOf(json)).toEqual({ error: "timeout", message: "The request timed out after 60000 ms.", base_url: env.MAILROOM_BASE_URL, attempts: 3, idempotency_key: "order-1234" });
  });

  it("gives the Idempotency-Key of a 409 idempotency_key_in_use that outlasted the wait, so that its answer can be fetched later", async () => {
    const inUse = () => new Response(JSON.stringify(problemBody(409, "idempotency_key_in_use", { lock_seconds: 60 })), { status: 409, headers: { "content-type": "application/problem+json", "retry-after": "1" } });
    const api = answering(inUse);

    const words = await runOnFakeTime(send, { env, fetch: api.fetch, tty: true });
    const json = await runOnFakeTime(send, { env, fetch: api.fetch });

    expect(words.code).toBe(1);
    expect(words.stderr).toMatch(/^Error: 409 idempotency_key_in_use: /);
    expect(words.stderr).toContain(`--idempotency-key ${api.keys[0]}`);
    expect(problemOf(json)).toMatchObject({ code: "idempotency_key_in_use", idempotency_key: api.keys.at(-1) });
  });

  it("gives the key a suppression import is run again with, not the key of its one request (<key>#<n>)", async () => {
    const api = answering(badGateway);

    const result = await runCli(["suppressions", "import", "--file", "-", "--idempotency-key", "import-1"], { env, fetch: api.fetch, stdin: "ada@example.com\n" });

    expect(api.key()).toEqual(["import-1#1"]);
    expect(problemOf(result)).toMatchObject({ code: "bad_gateway", idempotency_key: "import-1" });
  });

  it("gives no key where running it again cannot take one, or need not: a refusal, a read, a preview", async () => {
    const refused = answering(() => new Response(JSON.stringify(problemBody(422, "validation_failed")), { status: 422, headers: { "content-type": "application/problem+json" } }));
    const failed = answering(badGateway);

    const results = [
      await runCli(send, { env, fetch: refused.fetch }),
      await runCli(["messages", "get", "msg_1"], { env, fetch: failed.fetch }),
      await runCli([...send, "--dry-run"], { env, fetch: failed.fetch }),
    ];

    for (const result of results) expect(problemOf(result)).not.toHaveProperty("idempotency_key");
    const preview = await runCli([...send, "--dry-run"], { env, fetch: failed.fetch, tty: true });
    expect(preview.stderr).not.toContain("--idempotency-key");
  });

  it("gives no key for leaving a workspace, which takes no --idempotency-key: the token a rerun would need ends with it", async () => {
    const failed = answering(badGateway);

    const json = await runCli(["accounts", "leave-workspace"], { env, fetch: failed.fetch });
    const words = await runCli(["accounts", "leave-workspace"], { env, fetch: failed.fetch, tty: true });

    expect(failed.key()).toHaveLength(2);
    expect(problemOf(json)).not.toHaveProperty("idempotency_key");
    expect(words.stderr).not.toContain("--idempotency-key");
  });

  describe("stopped by Ctrl-C (or SIGTERM) before the answer came", () => {
    const unanswered = () => new Promise<Response>(() => undefined);

    /** Runs the CLI until `api` has been asked `requests` times, then stops it as Ctrl-C would; answers what it said. */
    async function stopWhenAsked(argv: string[], api: ReturnType<typeof answering>, options: Omit<RunOptions, "env" | "fetch"> = {}, requests = 1): Promise<string> {
      const running = startCli(argv, { env, fetch: api.fetch, ...options });
      await eventually(() => expect(api.keys).toHaveLength(requests));
      running.stop();
      return running.stderr();
    }

    it("names the Idempotency-Key of the send it leaves in doubt, as JSON in JSON mode", async () => {
      const api = answering(unanswered);

      const stderr = await stopWhenAsked(send, api);

      expect(JSON.parse(stderr)).toEqual({ error: "interrupted", message: "Interrupted before the server answered: the request may have been carried out all the same.", idempotency_key: api.keys[0] });
    });

    it("names it too while the SDK waits to send it again after a 5xx, whose request may have run, on a line of its own after the terminal's ^C", async () => {
      const api = answering(() => new Response(JSON.stringify(problemBody(502, "bad_gateway")), { status: 502, headers: { "content-type": "application/problem+json", "retry-after": "30" } }));

      const stderr = await stopWhenAsked(send, api, { tty: true });

      expect(stderr).toBe(`\nInterrupted before the server answered. It may have been carried out all the same; to try again without doing it twice, run the same command with --idempotency-key ${api.keys[0]}\n`);
    });

    it("says the first run with the key is still going while the SDK waits out a 409 idempotency_key_in_use", async () => {
      const api = answering(() => new Response(JSON.stringify(problemBody(409, "idempotency_key_in_use")), { status: 409, headers: { "content-type": "application/problem+json", "retry-after": "30" } }));

      const words = await stopWhenAsked([...send, "--idempotency-key", "order-1234"], api, { tty: true });
      const json = await stopWhenAsked([...send, "--idempotency-key", "order-1234"], answering(() => new Response(JSON.stringify(problemBody(409, "idempotency_key_in_use")), { status: 409, headers: { "content-type": "application/problem+json", "retry-after": "30" } })));

      expect(words).toBe("\nInterrupted while the first run with this Idempotency-Key was still going. For its answer, run the same command again with --idempotency-key order-1234\n");
      expect(JSON.parse(json)).toEqual({ error: "interrupted", message: "Interrupted while the first run with this Idempotency-Key was still going.", idempotency_key: "order-1234" });
    });

    it("does not say a first run is still going while the SDK waits to send it again after a 409 domain_changed, which is no such run", async () => {
      const api = answering(() => new Response(JSON.stringify(problemBody(409, "domain_changed")), { status: 409, headers: { "content-type": "application/problem+json", "retry-after": "30" } }));

      const stderr = await stopWhenAsked(["domains", "verify", "dom_1"], api, { tty: true });

      expect(stderr).toBe(`\nInterrupted before the server answered. It may have been carried out all the same; to try again without doing it twice, run the same command with --idempotency-key ${api.keys[0]}\n`);
    });

    it("names the key a suppression import is run again with, not its request's <key>#<n>", async () => {
      const api = answering(unanswered);

      const stderr = await stopWhenAsked(["suppressions", "import", "--file", "-", "--idempotency-key", "import-1"], api, { stdin: "ada@example.com\n" });

      expect(api.keys).toEqual(["import-1#1"]);
      expect(JSON.parse(stderr)).toMatchObject({ error: "interrupted", idempotency_key: "import-1" });
    });

    it("says nothing for a read, a preview (which changes nothing) or leaving a workspace (which takes no key)", async () => {
      for (const argv of [["messages", "get", "msg_1"], [...send, "--dry-run"], ["accounts", "leave-workspace"]]) {
        expect(await stopWhenAsked(argv, answering(unanswered), { tty: true }), argv.join(" ")).toBe("");
      }
    });

    it("says nothing once the server has answered", async () => {
      const running = startCli(send, { env, fetch: stubApi(202, contractExample("QueuedMessage")).fetch });
      const { code } = await running.done;

      running.stop();

      expect(code, running.stderr()).toBe(0);
      expect(running.stderr()).toBe("");
    });
  });
});

describe("help and version", () => {
  const env = {};

  it("lists every command group and shows examples on mailroom --help", async () => {
    const result = await runCli(["--help"], { env });

    expect(result.code).toBe(0);
    for (const name of ["send", ...nouns.map((noun) => noun.name)]) expect(result.stdout).toMatch(new RegExp(`^ {2}mailroom ${name} `, "m"));
    expect(result.stdout).toContain("Examples:\n  mailroom send --to ada@example.com");
  });

  it("describes the send shortcut by the command it stands for", async () => {
    const result = await runCli(["--help"], { env });

    expect(result.stdout).toMatch(/^ {2}mailroom send +Send a message \(same as: mailroom messages create\)$/m);
  });

  it.each(nouns.map((noun) => [noun.name, noun] as const))("lists the verbs of %s and an example of each on its --help", async (name, noun) => {
    const result = await runCli([name, "--help"], { env });

    expect(result.code).toBe(0);
    // yargs wraps long lines in its two columns: a long command (`accounts revoke-invitation
    // <invitation_id>`) has its arguments on the next line, and descriptions come out whole once
    // unwrapped.
    for (const command of noun.commands) {
      const [verb, ...positionals] = command.command.split(" ");
      expect(result.stdout).toContain(`mailroom ${name} ${verb}`);
      for (const positional of positionals) expect(result.stdout).toContain(positional);
    }
    const examples = result.stdout.slice(result.stdout.indexOf("Examples:")).replace(/\s+/g, " ");
    for (const command of noun.commands) expect(examples).toContain(command.examples[0]?.[1]);
  });

  it("shows a verb's own flags and examples on its --help", async () => {
    const result = await runCli(["messages", "list", "--help"], { env });

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ {6}--status /m);
    expect(result.stdout).toContain("Examples:\n  mailroom messages list --status bounced");
  });

  it("shows a whole-number flag's default as the number it is, not as a quoted string", async () => {
    const list = await runCli(["messages", "list", "--help"], { env });
    const listen = await runCli(["listen", "--help"], { env });

    expect(list.stdout).toMatch(/^ +--limit +Page size \(1-100\) +\[string\] \[default: 20\]$/m);
    expect(listen.stdout).toMatch(/\[string\] \[default: 3\]$/m);
  });

  it("quotes no default on any command's --help", async () => {
    const verbs = [...nouns.flatMap((noun) => noun.commands.map((command) => [noun.name, command.command.split(" ")[0] ?? ""])), ...Object.keys({ ...shortcuts, ...tools }).map((name) => [name])];

    for (const verb of verbs) {
      const result = await runCli([...verb, "--help"], { env });
      expect(result.stdout, verb.join(" ")).not.toMatch(/\[default: "/);
    }
  });

  it("needs no API key for --help", async () => {
    const result = await runCli(["send", "--help"], { env: {} });

    expect(result.code).toBe(0);
    expect(result.stdout).toContain("--attach");
    expect(result.stderr).toBe("");
  });

  it("prints the version of the package", async () => {
    const { version } = JSON.parse(readFileSync(join(REPO, "cli", "package.json"), "utf8")) as { version: string };

    const result = await runCli(["--version"], { env });

    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${version}\n`);
  });
});

describe("the --no- forms the CLI takes", () => {
  const env = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };

  it.each([
    [["templates", "create", "--slug", "w", "--name", "W", "--html", "<p>Hi</p>", "--no-layout"], { layout: null }],
    [["templates", "update", "welcome", "--no-text"], { text: null }],
    [["templates", "update", "welcome", "--no-layout"], { layout: null }],
    [["domains", "update", "dom_1", "--no-tracking-domain"], { tracking_domain: null }],
    [["workspace", "update", "--no-default-from"], { default_from: null }],
    [["workspace", "update", "--no-monthly-quota"], { monthly_quota: null }],
    [["workspace", "update", "--no-content-retention-days"], { content_retention_days: null }],
    [["webhooks", "create", "--url", "https://acme.example/h", "--no-enabled"], { enabled: false }],
    [["webhooks", "update", "whk_1", "--no-enabled"], { enabled: false }],
    [["webhooks", "update", "whk_1", "--no-description"], { description: null }],
    [["api-keys", "create", "--name", "Web", "--no-allowed-ips"], { restrictions: { allowed_ips: null } }],
    [["api-keys", "update", "key_1", "--no-sender-domains", "--no-recipient-domains"], { restrictions: { sender_domains: null, recipient_domains: null } }],
  ])("sends %j as %j", async (argv, sent) => {
    const api = stubApi(200, {});

    const result = await runCli(argv, { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen.at(-1)?.body).toMatchObject(sent);
  });
});

describe("usage errors", () => {
  const env = {};

  it("exits 2 for an unknown command, as JSON in JSON mode", async () => {
    const result = await runCli(["mesages", "list"], { env });

    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(problemOf(result)).toEqual({ error: "usage", message: "Did you mean messages?\nUnknown arguments: mesages, list" });
  });

  it("exits 2 for an unknown command, in words with the way to help on a terminal", async () => {
    const result = await runCli(["mesages", "list"], { env, tty: true });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Did you mean messages?");
    expect(result.stderr).toMatch(/Run "mailroom --help" for the commands\.\n$/);
  });

  it("exits 2 without a command", async () => {
    const result = await runCli([], { env, tty: true });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Give a command.");
  });

  it("exits 2 for a command group without its verb, listing the verbs", async () => {
    const result = await runCli(["messages"], { env, tty: true });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Give the messages command to run: create, create-batch, preview, list, get, cancel, reschedule, list-events, list-replies.");
  });

  it("names a group's verbs in words that read right whatever the group's name", async () => {
    const result = await runCli(["inbound"], { env });

    expect(problemOf(result)).toEqual({ error: "usage", message: "Give the inbound command to run: get, get-attachment." });
  });

  it.each([
    [["messages", "get"], "mailroom messages get --help"],
    [["messages", "events"], "mailroom messages list-events --help"],
    [["send", "--priority", "high"], "mailroom send --help"],
    [["listen", "--bogus"], "mailroom listen --help"],
    [["inbound"], "mailroom inbound --help"],
  ])("points %j to the help of the command that was run", async (argv, help) => {
    const result = await runCli(argv, { env, tty: true });

    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`\\nRun "${help}" for (its flags and examples|its commands)\\.\\n$`));
  });

  it.each(["0", "101", "2.5", "x"])("exits 2 for --limit %s, before any request", async (limit) => {
    let requests = 0;
    const result = await runCli(["messages", "list", "--limit", limit], { env: { MAILROOM_API_KEY: "svc_test_unused" }, fetch: async () => (requests++, new Response("{}")) });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--limit");
    expect(requests).toBe(0);
  });

  // One strict parser for every whole-number flag: digits only, as written, echoed back when refused.
  it.each(["abc", "", "0x10", "5e1", " 5", "5 ", "+5", "05.0"])("exits 2 for --limit %j, echoing it as given, before any request", async (limit) => {
    let requests = 0;
    const result = await runCli(["messages", "list", "--limit", limit], { env: { MAILROOM_API_KEY: "svc_test_unused" }, fetch: async () => (requests++, new Response("{}")) });

    expect(result.code).toBe(2);
    expect(problemOf(result).message).toBe(`--limit takes a whole number from 1 to 100; got "${limit}".`);
    expect(requests).toBe(0);
  });

  it.each([
    [["api-keys", "rotate", "key_1", "--overlap-seconds", "1e3"], '--overlap-seconds takes a whole number of seconds, 0 or more; got "1e3".'],
    [["webhooks", "rotate-secret", "whk_1", "--overlap-seconds", "0x10"], '--overlap-seconds takes a whole number of seconds, 0 or more; got "0x10".'],
    [["listen", "--forward-to", "http://localhost:4242", "--retries", " 3"], '--retries takes a whole number from 0 to 10; got " 3".'],
  ])("exits 2 for %j, as for --limit", async (argv, message) => {
    let requests = 0;
    const result = await runCli(argv, { env: { MAILROOM_API_KEY: "svc_test_unused" }, fetch: async () => (requests++, new Response("{}")) });

    expect(result.code).toBe(2);
    expect(problemOf(result).message).toBe(message);
    expect(requests).toBe(0);
  });

  // yargs gives any flag's --no- form as false, which a text flag would send as the text "false".
  it.each([
    [["send", "--to", "ada@example.com", "--no-subject", "--text", "Hi"], "subject"],
    [["send", "--to", "ada@example.com", "--subject", "Hi", "--html", "<p>Hi</p>", "--no-text"], "text"],
    [["send", "--no-to", "--subject", "Hi", "--text", "Hi"], "to"],
    [["send", "--to", "ada@example.com", "--subject", "Hi", "--text", "Hi", "--tag", "eu", "--no-tag"], "tag"],
    [["messages", "preview", "--to", "ada@example.com", "--subject", "Hi", "--html", "<p>Hi</p>", "--no-text"], "text"],
    [["templates", "update", "welcome", "--no-html"], "html"],
    [["templates", "create", "--slug", "w", "--name", "W", "--html", "<p>Hi</p>", "--no-text"], "text"],
    [["workspace", "update", "--no-name"], "name"],
    [["webhooks", "create", "--url", "https://acme.example/h", "--no-description"], "description"],
    [["workspace", "get", "--no-base-url"], "base-url"],
  ])("exits 2 for %j, naming the flag, before any request", async (argv, flag) => {
    let requests = 0;
    const result = await runCli(argv, { env: { MAILROOM_API_KEY: "svc_test_unused" }, fetch: async () => (requests++, new Response("{}")) });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toEqual({ error: "usage", message: `--no-${flag}: --${flag} has no --no- form; give --${flag} a value, or leave it out.` });
    expect(requests).toBe(0);
  });

  it("names the flag in words on a terminal, with the command's help", async () => {
    const result = await runCli(["templates", "update", "welcome", "--no-html"], { env: { MAILROOM_API_KEY: "svc_test_unused" }, tty: true, fetch: async () => new Response("{}") });

    expect(result.code).toBe(2);
    expect(result.stderr).toBe('--no-html: --html has no --no- form; give --html a value, or leave it out.\nRun "mailroom templates update --help" for its flags and examples.\n');
  });

  it("exits 2 when a verb misses its argument, naming it and the command's form", async () => {
    const result = await runCli(["messages", "get"], { env, tty: true });

    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^Missing <message_id>\. Usage: mailroom messages get <message_id>\n/);
  });

  it("names only the arguments missing when a verb takes several", async () => {
    const result = await runCli(["templates", "get-version", "welcome"], { env });

    expect(problemOf(result)).toEqual({ error: "usage", message: "Missing <version>. Usage: mailroom templates get-version <template> <version>" });
  });

  it("names an unknown flag as it was typed, without an internal camelCase twin", async () => {
    const result = await runCli(["webhooks", "update", "whk_1", "--no-enabled=false"], { env });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toEqual({ error: "usage", message: "Unknown argument: no-enabled" });
  });

  it("prints usage errors as JSON under --json even on a terminal", async () => {
    const result = await runCli(["messages", "list", "--bogus", "--json"], { env, tty: true });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toEqual({ error: "usage", message: "Unknown argument: bogus" });
  });
});
