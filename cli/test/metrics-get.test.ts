import { beforeAll, describe, expect, it } from "vitest";
import type { Metrics } from "mailroom";
import type { TestServer } from "../../test/helpers/http-server.js";
import { type FileServer, contractExample, problemBody, problemOf, runCli, stubApi, useTestServer } from "./helpers.js";

/*
 * `mailroom metrics get` (the Metrics tag): the flags and the rendering against a stand-in for the
 * API that answers with the contract's example, then the figures against the real server, which
 * counts the sandbox mail the simulator delivered and bounced.
 */
const stubEnv = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };
const metrics = contractExample<Metrics>("Metrics");

let server: TestServer;
let env: Record<string, string>;
let mailroom: FileServer["mailroom"];
useTestServer((started) => ({ server, env, mailroom } = started));

describe("mailroom metrics get (flags and output)", () => {
  it("asks for the range, granularity and filters given and prints the metrics as the API sent them", async () => {
    const api = stubApi(200, metrics);

    const result = await runCli(
      ["metrics", "get", "--from", "2026-11-20T00:00:00Z", "--to", "2026-11-22T01:00:00+01:00", "--granularity", "hour", "--tag", "welcome", "--template", "onboarding"],
      { env: stubEnv, fetch: api.fetch },
    );

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Metrics>()).toEqual(metrics);
    expect(api.seen).toMatchObject([
      {
        method: "GET",
        target: "/v1/metrics?from=2026-11-20T00%3A00%3A00.000Z&to=2026-11-22T00%3A00%3A00.000Z&granularity=hour&tag=welcome&template=onboarding",
        idempotencyKey: null,
      },
    ]);
  });

  it("leaves the range and granularity to the API without flags (the last 7 days, by day)", async () => {
    const api = stubApi(200, metrics);

    await runCli(["metrics", "get"], { env: stubEnv, fetch: api.fetch });

    expect(api.seen.map((seen) => seen.target)).toEqual(["/v1/metrics"]);
  });

  it("reads a duration as that long ago", async () => {
    const api = stubApi(200, metrics);
    const before = Date.now();

    await runCli(["metrics", "get", "--from", "30d", "--to", "1h"], { env: stubEnv, fetch: api.fetch });

    const query = new URL(`http://x${api.seen[0]?.target}`).searchParams;
    const from = Date.parse(query.get("from") ?? "");
    const to = Date.parse(query.get("to") ?? "");
    expect(from).toBeGreaterThanOrEqual(before - 30 * 86_400_000);
    expect(from).toBeLessThanOrEqual(Date.now() - 30 * 86_400_000);
    expect(to - from).toBe(30 * 86_400_000 - 3_600_000);
  });

  it("prints the buckets as a table, then the range, filters, totals and rates, on a terminal", async () => {
    const result = await runCli(["metrics", "get"], { env: stubEnv, tty: true, fetch: stubApi(200, metrics).fetch });

    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines.slice(0, 3).map((line) => line.split(/\s{2,}/))).toEqual([
      ["START", "ACCEPTED", "DELIVERED", "DEFERRED", "BOUNCED", "OPENED", "CLICKED", "COMPLAINED"],
      ["2026-11-20", "700", "690", "9", "8", "520 (380 unique)", "110", "1"],
      ["2026-11-21", "500", "490", "5", "4", "390 (270 unique)", "80", "0"],
    ]);
    expect(lines[3]).toBe("");
    const summary = [
      /^range\s+2026-11-20T00:00:00\.000Z to 2026-11-22T00:00:00\.000Z \(excluded\), per UTC day$/m,
      /^tag\s+welcome$/m,
      /^accepted\s+1200$/m,
      /^delivered\s+1180$/m,
      /^bounced\s+12 \(9 hard, 3 soft\)$/m,
      /^canceled\s+0$/m,
      /^opened\s+910 \(640 unique\) by people, 210 by machines$/m,
      /^clicked\s+190 \(150 unique\) by people, 8 by machines$/m,
      /^delivery rate\s+98\.8 %$/m,
      /^bounce rate\s+1\.0 %$/m,
      /^complaint rate\s+0\.1 %$/m,
      /^open rate\s+54\.2 %$/m,
      /^click rate\s+12\.7 %$/m,
    ];
    for (const line of summary) expect(result.stdout).toMatch(line);
    expect(result.stdout).not.toMatch(/^template/m);
  });

  it("shows hours as YYYY-MM-DD HH:00, rates it cannot work out as n/a, and keeps a row of 100 columns", async () => {
    const bucket = { ...metrics.buckets[0]!, start: "2026-11-20T09:00:00.000Z" };
    const quiet = {
      ...metrics.totals,
      accepted: 0,
      delivered: 0,
      bounced: 0,
      failed: 0,
      delivery_rate: null,
      bounce_rate: null,
      complaint_rate: null,
      open_rate: null,
      click_rate: null,
    };
    const hourly: Metrics = { ...metrics, granularity: "hour", tag: null, template: "onboarding", totals: quiet, buckets: [bucket] };

    const result = await runCli(["metrics", "get", "--granularity", "hour"], { env: stubEnv, tty: true, fetch: stubApi(200, hourly).fetch });

    const lines = result.stdout.split("\n");
    expect(lines[1]?.split(/\s{2,}/)[0]).toBe("2026-11-20 09:00");
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(100);
    expect(result.stdout).toMatch(/per UTC hour$/m);
    expect(result.stdout).toMatch(/^template\s+onboarding$/m);
    expect(result.stdout).not.toMatch(/^tag/m);
    for (const rate of ["delivery", "bounce", "complaint", "open", "click"]) expect(result.stdout).toMatch(new RegExp(`^${rate} rate\\s+n/a$`, "m"));
  });

  it.each([
    ["--from", "yesterday"],
    ["--from", "2026-11-20"],
    ["--from", "2026-11-20T00:00:00"],
    ["--to", "2026-02-30T00:00:00Z"],
  ])("refuses %s %s before any request", async (flag, value) => {
    const api = stubApi(200, metrics);

    const result = await runCli(["metrics", "get", flag, value], { env: stubEnv, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toEqual({
      error: "usage",
      message: `${flag} takes an RFC 3339 time with its offset (2026-11-01T00:00:00Z) or a duration ago (10m, 2h, 1d); got "${value}".`,
    });
    expect(api.seen).toEqual([]);
  });

  it("refuses a --granularity other than hour or day before any request", async () => {
    const api = stubApi(200, metrics);

    const result = await runCli(["metrics", "get", "--granularity", "week"], { env: stubEnv, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toMatchObject({ error: "usage", message: expect.stringContaining("granularity") });
    expect(api.seen).toEqual([]);
  });

  it("exits 1 with the API's problem for a range it refuses", async () => {
    const api = stubApi(422, problemBody(422, "validation_failed", { errors: [{ location: "query", pointer: "/to", message: "must be after from" }] }));

    const result = await runCli(["metrics", "get", "--from", "1d", "--to", "2d"], { env: stubEnv, fetch: api.fetch });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 422, code: "validation_failed" });
  });

  it("shows its flags and examples on --help", async () => {
    const result = await runCli(["metrics", "get", "--help"], { env: {} });

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ +--from +Start, rounded down to its bucket/m);
    expect(result.stdout).toMatch(/^ +--granularity +The size of each bucket/m);
    const examples = result.stdout.slice(result.stdout.indexOf("Examples:"));
    expect(examples).toMatch(/^ {2}mailroom metrics get +The last 7 days, day by day$/m);
    expect(examples).toMatch(/^ {2}mailroom metrics get --granularity hour +The last 24 hours, hour by hour$/m);
    expect(examples).toMatch(/^ {2}mailroom metrics get --from 30d --tag welcome +The last 30 days of mail tagged welcome$/m);
  });
});

describe("mailroom metrics get (against the real server)", () => {
  beforeAll(async () => {
    await mailroom.send({ to: "delivered@simulator.test", tags: ["welcome"] });
    await mailroom.send({ to: "bounced@simulator.test", tags: ["receipt"] });
    await server.testApp.drain();
  });

  const today = () => new Date(server.testApp.clock.now()).toISOString().slice(0, 10);

  it("prints today's figures, the totals and the rates of the sandbox mail on a terminal", async () => {
    const result = await runCli(["metrics", "get"], { env, tty: true });

    expect(result.code, result.stderr).toBe(0);
    const rows = result.stdout.split("\n\n")[0]?.split("\n") ?? [];
    expect(rows).toHaveLength(1 + 7); // the header, and the last 7 days up to today
    expect(rows.at(-1)?.split(/\s{2,}/)).toEqual([today(), "2", "1", "0", "1", "0 (0 unique)", "0", "0"]);
    expect(rows[1]?.split(/\s{2,}/).slice(1)).toEqual(["0", "0", "0", "0", "0 (0 unique)", "0", "0"]);
    expect(result.stdout).toMatch(/^accepted\s+2$/m);
    expect(result.stdout).toMatch(/^delivered\s+1$/m);
    expect(result.stdout).toMatch(/^bounced\s+1 \(1 hard, 0 soft\)$/m);
    expect(result.stdout).toMatch(/^delivery rate\s+50\.0 %$/m);
    expect(result.stdout).toMatch(/^bounce rate\s+50\.0 %$/m);
    expect(result.stdout).toMatch(/^complaint rate\s+0\.0 %$/m);
    expect(result.stdout).not.toMatch(/^(tag|template)\s/m);
  });

  it("prints the API's answer as JSON with --json", async () => {
    const result = await runCli(["metrics", "get", "--json"], { env, tty: true });

    expect(result.code, result.stderr).toBe(0);
    const answer = result.json<Metrics>();
    expect(answer).toEqual(await mailroom.get<Metrics>("/v1/metrics"));
    expect(answer).toMatchObject({ object: "metrics", environment: "sandbox", granularity: "day", tag: null, template: null });
    expect(answer.totals).toMatchObject({ accepted: 2, delivered: 1, bounced: 1, failed: 0, delivery_rate: 0.5, bounce_rate: 0.5 });
  });

  it("counts by the hour with --granularity hour", async () => {
    const result = await runCli(["metrics", "get", "--granularity", "hour"], { env });

    const answer = result.json<Metrics>();
    expect(answer.granularity).toBe("hour");
    expect(answer.buckets).toHaveLength(24);
    expect(Date.parse(answer.to) - Date.parse(answer.from)).toBe(answer.buckets.length * 3_600_000);
    expect(answer.totals).toMatchObject({ accepted: 2, delivered: 1, bounced: 1 });
  });

  it("counts only the mail with the --tag given", async () => {
    const welcome = (await runCli(["metrics", "get", "--tag", "welcome"], { env })).json<Metrics>();
    const receipts = (await runCli(["metrics", "get", "--tag", "receipt", "--from", "2d"], { env })).json<Metrics>();

    expect(welcome.tag).toBe("welcome");
    expect(welcome.totals).toMatchObject({ accepted: 1, delivered: 1, bounced: 0, delivery_rate: 1 });
    expect(receipts.totals).toMatchObject({ accepted: 1, delivered: 0, bounced: 1, bounce_rate: 1 });
    expect(receipts.buckets).toHaveLength(3);
  });

  it("shows the tag it filtered by on a terminal", async () => {
    const result = await runCli(["metrics", "get", "--tag", "welcome"], { env, tty: true });

    expect(result.stdout).toMatch(/^tag\s+welcome$/m);
    expect(result.stdout).toMatch(/^accepted\s+1$/m);
  });
});
