import { describe, expect, it } from "vitest";
import type { Message, Workspace } from "mailroom";
import { runMaintenance } from "../../src/maintenance.js";
import type { TestServer } from "../../test/helpers/http-server.js";
import { FROM, contractExample, problemOf, runCli, stubApi, useTestServer } from "./helpers.js";

/*
 * `mailroom workspace update --content-retention-days`: the flag against a stand-in for the API
 * (as workspace-quota.test.ts does for --monthly-quota), then the whole round against the real
 * server, whose maintenance round removes a message's content once the retention runs out.
 */
const stubEnv = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };
const workspace = contractExample<Workspace>("SandboxWorkspace");
const DAY_MS = 24 * 3600 * 1000;

let server: TestServer;
let env: Record<string, string>;
useTestServer((started) => ({ server, env } = started));

describe("mailroom workspace update --content-retention-days", () => {
  it("sets the workspace's content retention", async () => {
    const api = stubApi(200, { ...workspace, content_retention_days: 30 });

    const result = await runCli(["workspace", "update", "--content-retention-days", "30"], { env: stubEnv, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Workspace>().content_retention_days).toBe(30);
    expect(api.seen).toEqual([{ method: "PATCH", target: "/v1/workspace", authorization: "Bearer svc_test_stub", idempotencyKey: null, body: { content_retention_days: 30 } }]);
  });

  it.each([["--no-content-retention-days"], ["--content-retention-days", "none"]])("keeps content for good again with %s", async (...flags) => {
    const api = stubApi(200, workspace);

    const result = await runCli(["workspace", "update", ...flags], { env: stubEnv, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen[0]?.body).toEqual({ content_retention_days: null });
  });

  it("shows the retention on a terminal in days, (kept for good) when there is none", async () => {
    const shown = (days: number | null) => runCli(["workspace", "get"], { env: stubEnv, tty: true, fetch: stubApi(200, { ...workspace, content_retention_days: days }).fetch });

    expect((await shown(30)).stdout).toMatch(/^content_retention_days\s+30 days$/m);
    expect((await shown(1)).stdout).toMatch(/^content_retention_days\s+1 day$/m);
    expect((await shown(null)).stdout).toMatch(/^content_retention_days\s+\(kept for good\)$/m);
  });

  it.each(["0", "-5", "2.5", "a month", "3651", ""])("refuses --content-retention-days %j before any request", async (value) => {
    const api = stubApi(200, workspace);

    const result = await runCli(["workspace", "update", "--content-retention-days", value], { env: stubEnv, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toEqual({ error: "usage", message: `--content-retention-days takes a whole number of days from 1 to 3650, or none; got "${value}".` });
    expect(api.seen).toEqual([]);
  });

  it("shows the flag and its examples on --help", async () => {
    const result = await runCli(["workspace", "update", "--help"], { env: {} });

    expect(result.stdout).toMatch(/^ +--content-retention-days +Days a settled message keeps its content/m);
    // The examples' commands are longer than yargs' example column, so it wraps them: their words are what count.
    const examples = result.stdout.split("Examples:")[1] ?? "";
    expect(examples).toMatch(/--content-retention-days\s+Remove message content after 30 days/);
    expect(examples).toMatch(/Keep content for good\s+--no-content-retention-days/);
  });
});

describe("content retention against the real server", () => {
  it("stores the retention, and a message past it shows when its content was removed", async () => {
    const set = await runCli(["workspace", "update", "--content-retention-days", "1"], { env });
    expect(set.code, set.stderr).toBe(0);
    expect(set.json<Workspace>().content_retention_days).toBe(1);
    const sent = await runCli(["send", "--from", FROM, "--to", "delivered@simulator.test", "--subject", "Your receipt", "--html", "<p>Thanks</p>"], { env });
    const { id } = sent.json<Message>();
    await server.testApp.drain();

    // A day and a moment later, the worker's maintenance round removes the delivered message's content.
    server.testApp.clock.advance(DAY_MS + 1000);
    await runMaintenance(server.testApp.runtime, { info() {}, warn() {}, error: (obj, msg) => expect.fail(`${msg}: ${JSON.stringify(obj)}`) });

    const json = (await runCli(["messages", "get", id], { env })).json<Message>();
    expect(json).toMatchObject({ status: "delivered", subject: "Your receipt", html: null, text: null, mime: null });
    expect(json.content_removed_at).not.toBeNull();
    const shown = await runCli(["messages", "get", id], { env, tty: true });
    expect(shown.stdout).toMatch(new RegExp(`^content_removed_at\\s+${json.content_removed_at}$`, "m"));
    expect(shown.stdout).toMatch(/^subject\s+Your receipt$/m);

    const cleared = await runCli(["workspace", "update", "--no-content-retention-days"], { env, tty: true });
    expect(cleared.stdout).toMatch(/^content_retention_days\s+\(kept for good\)$/m);
  });

  it("does not show content_removed_at while the content is kept", async () => {
    const sent = await runCli(["send", "--from", FROM, "--to", "ada@example.com", "--subject", "Kept", "--text", "Still here"], { env });

    const shown = await runCli(["messages", "get", sent.json<Message>().id], { env, tty: true });

    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).not.toContain("content_removed_at");
  });
});
