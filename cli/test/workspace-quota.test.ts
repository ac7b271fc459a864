import { describe, expect, it } from "vitest";
import type { Workspace } from "mailroom";
import { contractExample, problemOf, runCli, stubApi } from "./helpers.js";

/*
 * `mailroom workspace update --monthly-quota` against a stand-in for the API (workspace.test.ts
 * runs the other workspace commands against the real server).
 */
const env = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };
const workspace = contractExample<Workspace>("SandboxWorkspace");

describe("mailroom workspace update --monthly-quota", () => {
  it("sets the workspace's monthly quota", async () => {
    const api = stubApi(200, { ...workspace, monthly_quota: 50_000 });

    const result = await runCli(["workspace", "update", "--monthly-quota", "50000"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Workspace>().monthly_quota).toBe(50_000);
    expect(api.seen).toEqual([{ method: "PATCH", target: "/v1/workspace", authorization: "Bearer svc_test_stub", idempotencyKey: null, body: { monthly_quota: 50_000 } }]);
  });

  it.each([["--no-monthly-quota"], ["--monthly-quota", "none"]])("removes the quota with %s", async (...flags) => {
    const api = stubApi(200, workspace);

    const result = await runCli(["workspace", "update", ...flags], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen[0]?.body).toEqual({ monthly_quota: null });
  });

  it("shows the quota on a terminal, (no limit) when there is none", async () => {
    const capped = await runCli(["workspace", "update", "--monthly-quota", "50000"], { env, tty: true, fetch: stubApi(200, { ...workspace, monthly_quota: 50_000 }).fetch });
    const uncapped = await runCli(["workspace", "get"], { env, tty: true, fetch: stubApi(200, workspace).fetch });

    expect(capped.stdout).toMatch(/^monthly_quota\s+50000$/m);
    expect(uncapped.stdout).toMatch(/^monthly_quota\s+\(no limit\)$/m);
  });

  it.each(["0", "-5", "2.5", "lots", "1000000001", ""])("refuses --monthly-quota %j before any request", async (value) => {
    const api = stubApi(200, workspace);

    const result = await runCli(["workspace", "update", "--monthly-quota", value], { env, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toEqual({ error: "usage", message: `--monthly-quota takes a whole number of messages from 1 to 1000000000, or none; got "${value}".` });
    expect(api.seen).toEqual([]);
  });

  it("shows the flag and its examples on --help", async () => {
    const result = await runCli(["workspace", "update", "--help"], { env: {} });

    expect(result.stdout).toMatch(/^ +--monthly-quota +Live messages allowed per UTC month/m);
    expect(result.stdout).toContain("mailroom workspace update --monthly-quota 50000");
    expect(result.stdout).toContain("mailroom workspace update --no-monthly-quota");
  });
});
