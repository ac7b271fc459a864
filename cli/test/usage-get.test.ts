import { describe, expect, it } from "vitest";
import type { Usage } from "mailroom";
import { contractExample, problemBody, problemOf, runCli, stubApi } from "./helpers.js";

/*
 * `mailroom usage get` (the Usage tag; cli/test/usage.test.ts is about how the CLI is used)
 * against a stand-in for the API that answers with the contract's example.
 */
const env = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };
const usage = contractExample<Usage>("Usage");

describe("mailroom usage get", () => {
  it("asks for the days from --from to --to and prints the usage as the API sent it", async () => {
    const api = stubApi(200, usage);

    const result = await runCli(["usage", "get", "--from", "2026-11-19", "--to", "2026-11-21"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Usage>()).toEqual(usage);
    expect(api.seen).toMatchObject([{ method: "GET", target: "/v1/usage?from=2026-11-19&to=2026-11-21", idempotencyKey: null }]);
  });

  it("leaves the range to the API without --from and --to (this month so far)", async () => {
    const api = stubApi(200, usage);

    await runCli(["usage", "get"], { env, fetch: api.fetch });

    expect(api.seen.map((seen) => seen.target)).toEqual(["/v1/usage"]);
  });

  it("prints the days as a table, then the totals and the quota, on a terminal", async () => {
    const result = await runCli(["usage", "get"], { env, tty: true, fetch: stubApi(200, usage).fetch });

    const lines = result.stdout.trimEnd().split("\n");
    expect(lines.slice(0, 4).map((line) => line.split(/\s+/))).toEqual([
      ["DATE", "MESSAGES", "RECIPIENTS"],
      ["2026-11-19", "400", "420"],
      ["2026-11-20", "500", "530"],
      ["2026-11-21", "350", "360"],
    ]);
    expect(result.stdout).toMatch(/^total\s+1250 messages, 1310 recipients \(2026-11-19 to 2026-11-21\)$/m);
    expect(result.stdout).toMatch(/^quota\s+9800 of 50000 messages this month, 40200 left; resets 2026-12-01T00:00:00Z$/m);
  });

  it("says there is no monthly limit when the workspace has no quota", async () => {
    const unlimited: Usage = { ...usage, quota: { monthly_messages: null, used: 9800, remaining: null, resets_at: "2026-12-01T00:00:00Z" } };

    const result = await runCli(["usage", "get"], { env, tty: true, fetch: stubApi(200, unlimited).fetch });

    expect(result.stdout).toMatch(/^quota\s+no monthly limit; 9800 messages this month$/m);
  });

  it.each(["2026-11", "2026-02-30", "11/01/2026", "1d"])("refuses --from %s before any request", async (from) => {
    const api = stubApi(200, usage);

    const result = await runCli(["usage", "get", "--from", from], { env, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toEqual({ error: "usage", message: `--from takes a day as YYYY-MM-DD (2026-11-01); got "${from}".` });
    expect(api.seen).toEqual([]);
  });

  it("exits 1 with the API's problem for a range it refuses", async () => {
    const api = stubApi(422, problemBody(422, "validation_failed", { errors: [{ location: "query", pointer: "/to", message: "must not be before from" }] }));

    const result = await runCli(["usage", "get", "--from", "2026-11-30", "--to", "2026-11-01"], { env, fetch: api.fetch });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 422, code: "validation_failed" });
  });

  it("shows its flags and examples on --help", async () => {
    const result = await runCli(["usage", "get", "--help"], { env: {} });

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ +--from +First UTC day/m);
    // yargs wraps a long example's command in its column, so its words are checked, not its layout.
    const examples = result.stdout.slice(result.stdout.indexOf("Examples:"));
    expect(examples).toMatch(/^ {2}mailroom usage get +This month so far, and the quota$/m);
    for (const words of ["mailroom usage get --from 2026-11-01 --to", "2026-11-30", "One month, day by day"]) expect(examples).toContain(words);
  });
});
