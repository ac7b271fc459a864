import { describe, expect, it } from "vitest";
import type { Domain, Message, Workspace } from "mailroom";
import { contractExample, problemOf, runCli, stubApi } from "./helpers.js";

/*
 * The tracking switches of `mailroom send`, `mailroom workspace update` and `mailroom domains
 * update`, against a stand-in for the API answering the contract's examples: the body each
 * command sends for its flags, and how the settings are shown.
 */
const env = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };
const DOMAIN_ID = "dom_01jd3k8m2q5v7w9x1y3z5a7b9c";
const queued = contractExample<Message>("QueuedMessage");
const workspace = contractExample<Workspace>("SandboxWorkspace");
const verified = contractExample<Domain>("VerifiedDomain");
const SEND = ["send", "--from", "hello@acme.example", "--to", "ada@example.com", "--subject", "Hi", "--html", "<p>Hi</p>"];

describe("mailroom send with tracking switches", () => {
  it("sends track_opens, track_clicks, track_replies and unsubscribe as true for each switch given", async () => {
    const api = stubApi(202, queued);

    const result = await runCli([...SEND, "--track-opens", "--track-clicks", "--track-replies", "--unsubscribe"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen[0]?.body).toMatchObject({ track_opens: true, track_clicks: true, track_replies: true, unsubscribe: true });
  });

  it("sends false for a --no- switch, overriding the defaults, and leaves out the switches not given", async () => {
    const api = stubApi(202, queued);

    await runCli([...SEND, "--no-track-opens", "--unsubscribe"], { env, fetch: api.fetch });

    const body = api.seen[0]?.body as Record<string, unknown>;
    expect(body).toMatchObject({ track_opens: false, unsubscribe: true });
    expect(body).not.toHaveProperty("track_clicks");
    expect(body).not.toHaveProperty("track_replies");
  });

  it("shows what the message tracks and its engagement on a terminal", async () => {
    const message = { ...queued, tracking: { opens: true, clicks: true, replies: false, unsubscribe: false }, engagement: { opens: 2, clicks: 1, replies: 0 } };
    message.recipients = message.recipients.map((recipient) => ({ ...recipient, opened_at: "2026-11-21T10:01:00.000Z", clicked_at: "2026-11-21T10:02:00.000Z" }));

    const result = await runCli([...SEND, "--track-opens", "--track-clicks"], { env, tty: true, fetch: stubApi(202, message).fetch });

    expect(result.stdout).toMatch(/^tracking\s+opens, clicks$/m);
    expect(result.stdout).toMatch(/^engagement\s+2 opens, 1 clicks, 0 replies$/m);
    expect(result.stdout).toMatch(/^ada@example\.com\s+to\s+queued\s+opened, clicked$/m);
  });
});

describe("mailroom workspace update with tracking defaults", () => {
  it("sends only the defaults given, under tracking, true or false", async () => {
    const api = stubApi(200, workspace);

    const result = await runCli(["workspace", "update", "--track-opens", "--no-unsubscribe"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen).toMatchObject([{ method: "PATCH", target: "/v1/workspace", body: { tracking: { opens: true, unsubscribe: false } } }]);
  });

  it("combines tracking defaults with the other settings in one call", async () => {
    const api = stubApi(200, workspace);

    await runCli(["workspace", "update", "--name", "Acme Inc", "--track-replies"], { env, fetch: api.fetch });

    expect(api.seen[0]?.body).toEqual({ name: "Acme Inc", tracking: { replies: true } });
  });

  it("shows the defaults that are on, on a terminal", async () => {
    const answer = { ...workspace, tracking: { opens: true, clicks: false, replies: true, unsubscribe: false } };

    const result = await runCli(["workspace", "update", "--track-opens", "--track-replies"], { env, tty: true, fetch: stubApi(200, answer).fetch });

    expect(result.stdout).toMatch(/^tracking\s+opens, replies$/m);
  });
});

describe("mailroom domains update", () => {
  it("sends the tracking defaults and the tracking domain given, and prints the domain", async () => {
    const answer = { ...verified, track_clicks: true, tracking_domain: "track.acme.example" };
    const api = stubApi(200, answer);

    const result = await runCli(["domains", "update", DOMAIN_ID, "--track-clicks", "--no-track-opens", "--tracking-domain", "track.acme.example"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Domain>()).toEqual(answer);
    expect(api.seen).toMatchObject([{ method: "PATCH", target: `/v1/domains/${DOMAIN_ID}`, body: { track_clicks: true, track_opens: false, tracking_domain: "track.acme.example" }, idempotencyKey: null }]);
  });

  it("sends null for --track-opens-default (the workspace's) and --no-tracking-domain (none)", async () => {
    const api = stubApi(200, verified);

    await runCli(["domains", "update", DOMAIN_ID, "--track-opens-default", "--track-clicks-default", "--no-tracking-domain"], { env, fetch: api.fetch });

    expect(api.seen[0]?.body).toEqual({ track_opens: null, track_clicks: null, tracking_domain: null });
  });

  it("refuses --track-opens with --track-opens-default, and a call with nothing to change, without a request", async () => {
    const api = stubApi(200, verified);

    const both = await runCli(["domains", "update", DOMAIN_ID, "--track-opens", "--track-opens-default"], { env, fetch: api.fetch });
    const nothing = await runCli(["domains", "update", DOMAIN_ID], { env, fetch: api.fetch });

    expect(both.code).toBe(2);
    expect(problemOf(both).message).toContain("--track-opens-default follows the workspace");
    expect(nothing.code).toBe(2);
    expect(problemOf(nothing).message).toContain("Nothing to update");
    expect(api.seen).toEqual([]);
  });

  it("shows the settings and, until it is verified, the tracking record to publish, on a terminal", async () => {
    const record = { purpose: "tracking", type: "CNAME", name: "track.acme.example", value: "track.mailroom.example", priority: null, required: false, status: "pending", found: [] };
    const answer = { ...verified, track_opens: true, tracking_domain: "track.acme.example", records: [...verified.records, record] };

    const result = await runCli(["domains", "update", DOMAIN_ID, "--track-opens", "--tracking-domain", "track.acme.example"], { env, tty: true, fetch: stubApi(200, answer).fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^track_opens\s+on$/m);
    expect(result.stdout).toMatch(/^track_clicks\s+workspace default$/m);
    expect(result.stdout).toMatch(/^tracking_domain\s+track\.acme\.example$/m);
    expect(result.stdout).toMatch(/^CNAME\s+track\.acme\.example\s+pending \(optional\)\s+track\.mailroom\.example$/m);
    expect(result.stderr).toBe(`Publish the tracking record (CNAME track.acme.example -> track.mailroom.example), then run: mailroom domains verify ${DOMAIN_ID}\n`);
  });

  it("exits 1 with the field's pointer when the API refuses the tracking domain", async () => {
    const problem = { type: "https://mailroom.dev/problems/validation_failed", title: "Invalid", status: 422, code: "validation_failed", request_id: "req_stub", errors: [{ pointer: "/tracking_domain", message: "must be under acme.example" }] };

    const result = await runCli(["domains", "update", DOMAIN_ID, "--tracking-domain", "track.other.example"], { env, fetch: stubApi(422, problem).fetch });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/tracking_domain" }] });
  });
});
