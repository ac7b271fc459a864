import { describe, expect, it } from "vitest";
import type { ApiKeyWithSecret, AuditEvent, PageBody as Page } from "mailroom";
import { contractExample, page, problemOf, runCli, stubApi, useTestServer } from "./helpers.js";

/*
 * `mailroom audit-events list` against the real server (a change made through the CLI is found in
 * the log) and against a stand-in answering the contract's example: the query each flag sends,
 * and what it prints in JSON and on a terminal.
 */
let env: Record<string, string>;
useTestServer((started) => ({ env } = started));

const stubEnv = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };
const [updated] = contractExample<Page<AuditEvent>>("AuditEventPage").data as [AuditEvent];

/** Runs `mailroom …` through the CLI, as the test's sandbox key; fails the test unless it exits 0. */
async function cli<T>(...argv: string[]): Promise<T> {
  const result = await runCli(argv, { env });
  expect(result.code, result.stderr).toBe(0);
  return result.json<T>();
}

describe("mailroom audit-events list", () => {
  it("finds a key revoked through the CLI by --operation and --target, with the key that did it", async () => {
    const key = await cli<ApiKeyWithSecret>("api-keys", "create", "--name", "Old laptop");
    await cli("api-keys", "revoke", key.id, "--yes");

    const { data, has_more, next_cursor } = await cli<Page<AuditEvent>>("audit-events", "list", "--operation", "revokeApiKey", "--target", key.id);

    expect({ has_more, next_cursor }).toEqual({ has_more: false, next_cursor: null });
    expect(data).toEqual([
      expect.objectContaining({ object: "audit_event", environment: "sandbox", operation: "revokeApiKey", target: { type: "api_key", id: key.id }, fields: [] }),
    ]);
    expect(data[0]?.actor).toEqual({ type: "api_key", id: expect.stringMatching(/^key_/) });
  });

  it("prints one page as the API sent it, passing --operation, --actor, --target, --created-after, --created-before, --limit and --after", async () => {
    const api = stubApi(200, page([updated], "cur_2"));

    const result = await runCli(
      [
        ...["audit-events", "list", "--operation", "updateApiKey", "--actor", "usr_01jd3k8m2q5v7w9x1y3z5a7b9a", "--target", "key_01jd3k8m2q5v7w9x1y3z5a7b9c"],
        ...["--created-after", "2026-11-01T00:00:00Z", "--created-before", "2026-11-22T00:00:00+01:00", "--limit", "5", "--after", "cur_1"],
      ],
      { env: stubEnv, fetch: api.fetch },
    );

    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toEqual(page([updated], "cur_2"));
    expect(api.seen.map((seen) => `${seen.method} ${decodeURIComponent(seen.target)}`)).toEqual([
      "GET /v1/audit-events?limit=5&after=cur_1&created_after=2026-11-01T00:00:00.000Z&created_before=2026-11-21T23:00:00.000Z" +
        "&operation=updateApiKey&actor_id=usr_01jd3k8m2q5v7w9x1y3z5a7b9a&target_id=key_01jd3k8m2q5v7w9x1y3z5a7b9c",
    ]);
  });

  it("takes --actor-id and --target-id, the API's names, for --actor and --target", async () => {
    const api = stubApi(200, page([]));

    const result = await runCli(["audit-events", "list", "--actor-id", "usr_01jd3k8m2q5v7w9x1y3z5a7b9a", "--target-id", "key_01jd3k8m2q5v7w9x1y3z5a7b9c"], { env: stubEnv, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen.map((seen) => seen.target)).toEqual(["/v1/audit-events?limit=20&actor_id=usr_01jd3k8m2q5v7w9x1y3z5a7b9a&target_id=key_01jd3k8m2q5v7w9x1y3z5a7b9c"]);
  });

  it("takes --created-after 7d as seven days ago", async () => {
    const api = stubApi(200, page([]));
    const before = Date.now();

    const result = await runCli(["audit-events", "list", "--operation", "revokeApiKey", "--created-after", "7d"], { env: stubEnv, fetch: api.fetch });
    const after = Date.now();

    expect(result.code, result.stderr).toBe(0);
    const createdAfter = Date.parse(new URL(`http://x${api.seen[0]?.target}`).searchParams.get("created_after") ?? "");
    expect(createdAfter).toBeGreaterThanOrEqual(before - 7 * 86_400_000);
    expect(createdAfter).toBeLessThanOrEqual(after - 7 * 86_400_000);
  });

  it("prints JSON on a terminal too with --json", async () => {
    const result = await runCli(["audit-events", "list", "--json"], { env: stubEnv, tty: true, fetch: stubApi(200, page([updated])).fetch });

    expect(result.json()).toEqual(page([updated]));
  });

  it("prints every event of every page with --all, keeping the filters on each page", async () => {
    const api = stubApi((request) => ({
      status: 200,
      body: new URL(request.url).searchParams.get("after") === "cur_2" ? page([{ ...updated, id: "aud_2" }]) : page([updated], "cur_2"),
    }));

    const result = await runCli(["audit-events", "list", "--operation", "updateApiKey", "--all"], { env: stubEnv, fetch: api.fetch });

    expect(result.json<{ data: AuditEvent[] }>().data.map((event) => event.id)).toEqual([updated.id, "aud_2"]);
    expect(api.seen.map((seen) => seen.target)).toEqual(["/v1/audit-events?limit=20&operation=updateApiKey", "/v1/audit-events?limit=20&operation=updateApiKey&after=cur_2"]);
  });

  it("prints when, the operation, who, what, the fields and the address as a table on a terminal", async () => {
    const unaddressed = { ...updated, operation: "updateWorkspace", target: { type: "workspace", id: null }, fields: ["default_from", "name"], ip_address: null };

    const result = await runCli(["audit-events", "list"], { env: stubEnv, tty: true, fetch: stubApi(200, page([updated, unaddressed])).fetch });

    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^CREATED\s+OPERATION\s+ACTOR\s+TARGET\s+FIELDS\s+IP$/);
    expect(lines[1]?.split(/\s{2,}/)).toEqual(["2026-11-21T10:42:00.000Z", "updateApiKey", "usr_01jd3k8m2q5v7w9x1y3z5a7b9a", "key_01jd3k8m2q5v7w9x1y3z5a7b9c", "restrictions", "203.0.113.7"]);
    // A target without an id is named by its kind; no address leaves the column empty.
    expect(lines[2]?.trimEnd().split(/\s{2,}/)).toEqual(["2026-11-21T10:42:00.000Z", "updateWorkspace", "usr_01jd3k8m2q5v7w9x1y3z5a7b9a", "(workspace)", "default_from, name"]);
  });

  it("exits 1 with the API's 403 for a key that may only send", async () => {
    const sender = await cli<ApiKeyWithSecret>("api-keys", "create", "--name", "Sender", "--permission", "sending_access");

    const result = await runCli(["audit-events", "list"], { env: { ...env, MAILROOM_API_KEY: sender.secret } });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 403 });
  });
});
