import { describe, expect, it } from "vitest";
import type { TestServer } from "../../test/helpers/http-server.js";
import { problemOf, runCli, stubApi, useTestServer } from "./helpers.js";

let server: TestServer;
let env: Record<string, string>;
useTestServer((started) => ({ server, env } = started));

describe("mailroom system get-health", () => {
  it("prints the server's verdict, under its short name health too", async () => {
    const [long, short] = await Promise.all([runCli(["system", "get-health"], { env }), runCli(["system", "health"], { env })]);

    expect([long.code, short.code]).toEqual([0, 0]);
    expect(long.json()).toEqual({ status: "ok" });
    expect(short.json()).toEqual({ status: "ok" });
  });

  it("prints the bare status on a terminal", async () => {
    const result = await runCli(["system", "health"], { env, tty: true });

    expect(result.stdout).toBe("ok\n");
  });
});

describe("mailroom system get-readiness", () => {
  it("prints the server's verdict, under its short name ready too", async () => {
    const [long, short] = await Promise.all([runCli(["system", "get-readiness"], { env }), runCli(["system", "ready"], { env })]);

    expect([long.code, short.code]).toEqual([0, 0]);
    expect(long.json()).toEqual({ status: "ready" });
    expect(short.json()).toEqual({ status: "ready" });
  });

  it("answers a 503 at once, without retrying it: a probe reports what it sees now", async () => {
    let attempts = 0;
    const countingFetch = (request: Request) => {
      attempts++;
      return fetch(request);
    };
    server.testApp.lifecycle.ready = false;
    try {
      const result = await runCli(["system", "ready"], { env, fetch: countingFetch });

      expect(result.code).toBe(1);
      expect(attempts).toBe(1);
    } finally {
      server.testApp.lifecycle.ready = true;
    }
  });

  it("exits 1 with the 503 problem while the server is not ready", async () => {
    server.testApp.lifecycle.ready = false;
    try {
      const result = await runCli(["system", "ready"], { env });

      expect(result.code).toBe(1);
      expect(problemOf(result)).toMatchObject({ status: 503 });
    } finally {
      server.testApp.lifecycle.ready = true;
    }
  });
});

describe("the probes need no API key", () => {
  it.each([["health", { status: "ok" }], ["ready", { status: "ready" }]])("system %s answers without MAILROOM_API_KEY", async (verb, answer) => {
    const result = await runCli(["system", verb], { env: { MAILROOM_BASE_URL: server.baseUrl } });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toEqual(answer);
  });

  it("does not send the key when there is one: a probe has no use for it", async () => {
    const stub = stubApi(200, { status: "ok" });

    const result = await runCli(["system", "health"], { env: { MAILROOM_API_KEY: "svc_test_keep_me_home", MAILROOM_BASE_URL: "http://mailroom.test" }, fetch: stub.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(stub.seen[0]?.authorization ?? "").not.toContain("svc_test_keep_me_home");
  });
});
