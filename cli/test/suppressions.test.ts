import { describe, expect, it } from "vitest";
import type { DeletedObject, Suppression } from "mailroom";
import { contractExample, page, problemBody, problemOf, runCli, stubApi } from "./helpers.js";

/*
 * `mailroom suppressions …` against a stand-in for the API that answers with the contract's own
 * examples: what each command sends, and what it prints in JSON and on a terminal.
 */
const env = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };
const SUPPRESSION_ID = "sup_01jd3k8m2q5v7w9x1y3z5a7b9c";
const MESSAGE_ID = "msg_01jd3k8m2q5v7w9x1y3z5a7b9c";
const manual = contractExample<Suppression>("ManualSuppression");
const bounce = contractExample<Suppression>("BounceSuppression");
const deleted = contractExample<DeletedObject>("DeletedSuppression");

describe("mailroom suppressions list", () => {
  it("prints one page as the API sent it, passing --reason, --email, --limit and --after", async () => {
    const api = stubApi(200, page([bounce], "cur_2"));

    const result = await runCli(["suppressions", "list", "--reason", "hard_bounce", "--email", "gone@example.com", "--limit", "5", "--after", "cur_1"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toEqual(page([bounce], "cur_2"));
    expect(api.seen.map((seen) => `${seen.method} ${seen.target}`)).toEqual(["GET /v1/suppressions?limit=5&after=cur_1&reason=hard_bounce&email=gone%40example.com"]);
  });

  it("prints every suppression of every page with --all, keeping the filter on each page", async () => {
    const api = stubApi((request) => ({ status: 200, body: new URL(request.url).searchParams.get("after") === "cur_2" ? page([{ ...manual, id: "sup_2" }]) : page([bounce], "cur_2") }));

    const result = await runCli(["suppressions", "list", "--reason", "manual", "--all"], { env, fetch: api.fetch });

    expect(result.json<{ data: Suppression[] }>().data.map((suppression) => suppression.id)).toEqual([SUPPRESSION_ID, "sup_2"]);
    expect(api.seen.map((seen) => seen.target)).toEqual(["/v1/suppressions?limit=20&reason=manual", "/v1/suppressions?limit=20&reason=manual&after=cur_2"]);
  });

  it("prints email, reason, when, the message that caused it and the id as a table on a terminal", async () => {
    const result = await runCli(["suppressions", "list"], { env, tty: true, fetch: stubApi(200, page([bounce, { ...manual, id: "sup_2" }])).fetch });

    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^EMAIL\s+REASON\s+CREATED\s+MESSAGE\s+ID$/);
    expect(lines[1]).toMatch(new RegExp(`^gone@example\\.com\\s+hard_bounce\\s+2026-11-21T09:00:00Z\\s+${MESSAGE_ID}\\s+${SUPPRESSION_ID}$`));
    expect(lines[2]).toMatch(/^ada@example\.com\s+manual\s+2026-11-21T09:00:00Z\s+sup_2$/);
  });

  it("refuses a --reason the contract does not have, before any request", async () => {
    const api = stubApi(200, page([]));

    const result = await runCli(["suppressions", "list", "--reason", "bounced"], { env, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result).message).toContain('Argument: reason, Given: "bounced"');
    expect(api.seen).toEqual([]);
  });
});

describe("mailroom suppressions create", () => {
  it("suppresses --email, with an Idempotency-Key, and prints the suppression", async () => {
    const api = stubApi(201, manual);

    const result = await runCli(["suppressions", "create", "--email", "ada@example.com"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Suppression>()).toEqual(manual);
    expect(api.seen).toEqual([{ method: "POST", target: "/v1/suppressions", authorization: "Bearer svc_test_stub", idempotencyKey: expect.any(String), body: { email: "ada@example.com" } }]);
  });

  it("sends --reason, --detail and --idempotency-key when given", async () => {
    const api = stubApi(201, manual);

    await runCli(["suppressions", "create", "--email", "ada@example.com", "--reason", "unsubscribe", "--detail", "Asked by phone", "--idempotency-key", "unsub-ada"], { env, fetch: api.fetch });

    expect(api.seen).toMatchObject([{ body: { email: "ada@example.com", reason: "unsubscribe", detail: "Asked by phone" }, idempotencyKey: "unsub-ada" }]);
  });

  it("says on a terminal that the address is now suppressed (201)", async () => {
    const result = await runCli(["suppressions", "create", "--email", "ada@example.com"], { env, tty: true, fetch: stubApi(201, manual).fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/\n\nSuppressed: messages to ada@example\.com are not sent\.\n$/);
  });

  it("prints the existing suppression when the address already was one (200), saying since when and why, and exits 0", async () => {
    const result = await runCli(["suppressions", "create", "--email", "gone@example.com"], { env, tty: true, fetch: stubApi(200, bounce).fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^reason\s+hard_bounce$/m);
    expect(result.stdout).toMatch(new RegExp(`\n\nAlready suppressed since ${bounce.created_at} \\(hard_bounce\\): messages to gone@example\\.com are not sent\\. Nothing was changed\\.\n$`));
  });

  it("prints the existing suppression as the API sent it in JSON mode (200)", async () => {
    const result = await runCli(["suppressions", "create", "--email", "gone@example.com"], { env, fetch: stubApi(200, bounce).fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Suppression>()).toEqual(bounce);
  });

  it("refuses --reason hard_bounce, which only Mailroom records, and a missing --email, sending nothing", async () => {
    const api = stubApi(201, manual);

    const hardBounce = await runCli(["suppressions", "create", "--email", "ada@example.com", "--reason", "hard_bounce"], { env, fetch: api.fetch });
    const missing = await runCli(["suppressions", "create"], { env, fetch: api.fetch });

    expect([hardBounce.code, missing.code]).toEqual([2, 2]);
    expect(problemOf(missing).message).toContain("Give the address with --email.");
    expect(api.seen).toEqual([]);
  });

  it("exits 1 with the API's validation problem for an address that is not one", async () => {
    const api = stubApi(422, problemBody(422, "validation_failed", { errors: [{ location: "body", pointer: "/email", message: "not an address" }] }));

    const result = await runCli(["suppressions", "create", "--email", "ada@"], { env, tty: true, fetch: api.fetch });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain("  /email: not an address");
  });
});

describe("mailroom suppressions get", () => {
  it("prints the suppression as the API sent it", async () => {
    const api = stubApi(200, bounce);

    const result = await runCli(["suppressions", "get", SUPPRESSION_ID], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Suppression>()).toEqual(bounce);
    expect(api.seen).toMatchObject([{ method: "GET", target: `/v1/suppressions/${SUPPRESSION_ID}` }]);
  });

  it("shows why, and the message that caused it, on a terminal", async () => {
    const result = await runCli(["suppressions", "get", SUPPRESSION_ID], { env, tty: true, fetch: stubApi(200, bounce).fetch });

    expect(result.stdout).toMatch(new RegExp(`^message_id\\s+${MESSAGE_ID}$`, "m"));
    expect(result.stdout).toMatch(/^detail\s+550 5\.1\.1 <gone@example\.com>\.\.\. User unknown$/m);
  });

  it("exits 1 with the API's 404 for a suppression the environment does not have", async () => {
    const result = await runCli(["suppressions", "get", "sup_nope"], { env, fetch: stubApi(404, problemBody(404, "not_found")).fetch });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("mailroom suppressions delete", () => {
  it("deletes the suppression and prints the API's answer", async () => {
    const api = stubApi(200, deleted);

    const result = await runCli(["suppressions", "delete", SUPPRESSION_ID, "--yes"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<DeletedObject>()).toEqual({ id: SUPPRESSION_ID, object: "suppression", deleted: true });
    expect(api.seen).toMatchObject([{ method: "DELETE", target: `/v1/suppressions/${SUPPRESSION_ID}`, idempotencyKey: null }]);
  });

  it("says so on a terminal", async () => {
    const result = await runCli(["suppressions", "delete", SUPPRESSION_ID, "--yes"], { env, tty: true, fetch: stubApi(200, deleted).fetch });

    expect(result.stdout).toBe(`Deleted ${SUPPRESSION_ID}: later messages are sent to the address again.\n`);
  });
});

describe("mailroom suppressions --help", () => {
  it("lists every verb with an example", async () => {
    const result = await runCli(["suppressions", "--help"], { env: {} });

    expect(result.code).toBe(0);
    for (const verb of ["list", "create", "get <suppression_id>", "delete <suppression_id>"]) expect(result.stdout).toContain(`mailroom suppressions ${verb}`);
    expect(result.stdout).toContain("mailroom suppressions list --reason hard_bounce");
  });

  it("shows a verb's flags and examples", async () => {
    const result = await runCli(["suppressions", "create", "--help"], { env: {} });

    expect(result.code).toBe(0);
    expect(result.stdout.replace(/\s+/g, " ")).toContain('[choices: "manual", "unsubscribe", "complaint"]');
    expect(result.stdout).toMatch(/^ +--detail +A note of your own/m);
    const examples = result.stdout.slice(result.stdout.indexOf("Examples:"));
    for (const words of ["mailroom suppressions create --email", "Stop sending to an address", "--reason unsubscribe", "Record an unsubscribe, with a note"]) expect(examples).toContain(words);
  });
});
