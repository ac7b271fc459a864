import { describe, expect, it } from "vitest";
import type { DeletedObject, Webhook, WebhookAttempt, WebhookDelivery, WebhookReplay, WebhookSecret } from "mailroom";
import { contractExample, page, problemBody, problemOf, runCli, stubApi } from "./helpers.js";

/*
 * `mailroom webhooks …` against a stand-in for the API that answers with the contract's own
 * examples: what each command sends, and what it prints in JSON and on a terminal. (`mailroom
 * listen`, the local receiver's side, is in listen.test.ts.)
 */
const env = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };
const WEBHOOK_ID = "whk_01jd3k8m2q5v7w9x1y3z5a7b9c";
const EVENT_ID = "evt_01jd3k8m3a5v7w9x1y3z5a7b9d";
const created = contractExample<Webhook>("NewWebhook");
const enabled = contractExample<Webhook>("EnabledWebhook");
const failing = contractExample<Webhook>("FailingWebhook");
const deleted = contractExample<DeletedObject>("DeletedWebhook");
const secrets = contractExample<WebhookSecret>("WebhookSecret");
const queued = contractExample<WebhookDelivery>("QueuedWebhookDelivery");
const replay = contractExample<WebhookReplay>("WebhookReplay");
const attempts = contractExample<{ data: WebhookAttempt[] }>("WebhookAttemptListPage").data;

describe("mailroom webhooks create", () => {
  it("sends the URL and each --event-type with an Idempotency-Key, and prints the endpoint with its secret", async () => {
    const api = stubApi(201, created);

    const result = await runCli(["webhooks", "create", "--url", "https://acme.example/hooks/mailroom", "--event-type", "message.delivered", "--event-type", "message.bounced"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Webhook>()).toEqual(created);
    expect(api.seen).toMatchObject([
      { method: "POST", target: "/v1/webhooks", body: { url: "https://acme.example/hooks/mailroom", event_types: ["message.delivered", "message.bounced"] }, idempotencyKey: expect.any(String) },
    ]);
  });

  it("takes comma-separated event types, a description and --enabled false", async () => {
    const api = stubApi(201, created);

    await runCli(["webhooks", "create", "--url", "https://acme.example/h", "--event-type", "message.opened,message.clicked", "--description", "Analytics", "--enabled", "false", "--idempotency-key", "whk-1"], {
      env,
      fetch: api.fetch,
    });

    expect(api.seen).toMatchObject([{ body: { url: "https://acme.example/h", event_types: ["message.opened", "message.clicked"], description: "Analytics", enabled: false }, idempotencyKey: "whk-1" }]);
  });

  it("takes a domain's event types beside a message's, since domain events go to endpoints too", async () => {
    const api = stubApi(201, created);

    const result = await runCli(["webhooks", "create", "--url", "https://acme.example/h", "--event-type", "message.bounced,domain.temporary_failure", "--event-type", "domain.failed"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen).toMatchObject([{ body: { event_types: ["message.bounced", "domain.temporary_failure", "domain.failed"] } }]);
  });

  it("takes the types as --type or --events too, as every command that takes event types", async () => {
    const api = stubApi(201, created);

    await runCli(["webhooks", "create", "--url", "https://acme.example/h", "--type", "message.bounced", "--events", "domain.failed,message.opened"], { env, fetch: api.fetch });

    expect(api.seen).toMatchObject([{ body: { event_types: ["message.bounced", "domain.failed", "message.opened"] } }]);
  });

  it("shows the secret on a terminal, with how to use it", async () => {
    const result = await runCli(["webhooks", "create", "--url", "https://acme.example/hooks/mailroom"], { env, tty: true, fetch: stubApi(201, created).fetch });

    expect(result.stdout).toMatch(/^event_types\s+message\.delivered, message\.bounced$/m);
    expect(result.stdout).toContain(`\n\nsecret  ${created.secret}\n`);
    expect(result.stdout).not.toContain("Verify each delivery's signature");
    expect(result.stderr).toMatch(/^Verify each delivery's signature with this secret/);
  });

  it("exits 2 for an unknown event type, listing every type, and sends nothing", async () => {
    const api = stubApi(201, created);

    const result = await runCli(["webhooks", "create", "--url", "https://acme.example/h", "--event-type", "message.sent"], { env, fetch: api.fetch });
    const inherited = await runCli(["webhooks", "create", "--url", "https://acme.example/h", "--event-type", "toString"], { env, fetch: api.fetch });

    expect([result.code, inherited.code]).toEqual([2, 2]);
    expect(problemOf(result).message).toContain('--event-type: unknown event type "message.sent"; the types are message.queued, ');
    expect(problemOf(result).message).toContain(", message.replied, domain.verified, domain.temporary_failure, domain.failed, domain.dkim_rotated.");
    expect(problemOf(inherited).message).toContain('--event-type: unknown event type "toString"');
    expect(api.seen).toEqual([]);
  });

  it("exits 1 with 422 webhook_target_not_allowed for a private address", async () => {
    const result = await runCli(["webhooks", "create", "--url", "http://10.0.0.1/hooks"], { env, fetch: stubApi(422, problemBody(422, "webhook_target_not_allowed")).fetch });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ code: "webhook_target_not_allowed" });
  });
});

describe("mailroom webhooks list", () => {
  it("prints one page as the API sent it", async () => {
    const api = stubApi(200, page([enabled], "cur_2"));

    const result = await runCli(["webhooks", "list", "--limit", "1"], { env, fetch: api.fetch });

    expect(result.json()).toEqual(page([enabled], "cur_2"));
    expect(api.seen.map((seen) => `${seen.method} ${seen.target}`)).toEqual(["GET /v1/webhooks?limit=1"]);
  });

  it("shows id, URL, status (and why disabled) and event types on a terminal", async () => {
    const result = await runCli(["webhooks", "list"], { env, tty: true, fetch: stubApi(200, page([created, failing])).fetch });

    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+URL\s+STATUS\s+EVENTS$/);
    expect(lines[1]).toMatch(new RegExp(`^${WEBHOOK_ID}\\s+https://acme\\.example/hooks/mailroom\\s+enabled\\s+message\\.delivered, message\\.bounced$`));
    expect(lines[2]).toMatch(new RegExp(`^${WEBHOOK_ID}\\s+https://acme\\.example/hooks/mailroom\\s+disabled \\(failing\\)\\s+all$`));
  });
});

describe("mailroom webhooks get", () => {
  it("gets the endpoint", async () => {
    const api = stubApi(200, failing);

    const result = await runCli(["webhooks", "get", WEBHOOK_ID], { env, fetch: api.fetch });

    expect(result.json<Webhook>()).toEqual(failing);
    expect(api.seen).toMatchObject([{ method: "GET", target: `/v1/webhooks/${WEBHOOK_ID}`, idempotencyKey: null }]);
  });

  it("says on a terminal since when it failed and when Mailroom disabled it", async () => {
    const result = await runCli(["webhooks", "get", WEBHOOK_ID], { env, tty: true, fetch: stubApi(200, failing).fetch });

    expect(result.stdout).toMatch(/^status\s+disabled \(failing\)$/m);
    expect(result.stdout).toMatch(/^failing_since\s+2026-11-21T09:00:00\.000Z$/m);
    expect(result.stdout).toMatch(/^disabled_at\s+2026-11-26T09:00:05\.000Z$/m);
    expect(result.stdout).not.toContain("secret");
  });
});

describe("mailroom webhooks update", () => {
  it("PATCHes --enabled true, as given", async () => {
    const api = stubApi(200, enabled);

    const result = await runCli(["webhooks", "update", WEBHOOK_ID, "--enabled", "true"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen).toEqual([{ method: "PATCH", target: `/v1/webhooks/${WEBHOOK_ID}`, authorization: "Bearer svc_test_stub", idempotencyKey: null, body: { enabled: true } }]);
  });

  it.each([
    [["--enabled", "yes"], '--enabled takes true or false; got "yes".'],
    [["--enabled", "1"], '--enabled takes true or false; got "1".'],
    // A bare --enabled would silently enable: refused, so that the value is always said.
    [["--enabled"], '--enabled takes true or false; got "".'],
  ])("exits 2 for %j, naming what it takes, with nothing sent", async (...flags) => {
    for (const command of [["webhooks", "update", WEBHOOK_ID], ["webhooks", "create", "--url", "https://acme.example/h"]]) {
      const api = stubApi(200, enabled);
      const result = await runCli([...command, ...flags[0]], { env, fetch: api.fetch });

      expect(result.code).toBe(2);
      expect(problemOf(result).message).toBe(flags[1]);
      expect(api.seen).toEqual([]);
    }
  });

  it("PATCHes --enabled false", async () => {
    const api = stubApi(200, enabled);

    await runCli(["webhooks", "update", WEBHOOK_ID, "--enabled", "false"], { env, fetch: api.fetch });

    expect(api.seen[0]?.body).toEqual({ enabled: false });
  });

  it("sends event_types: null for --all-events and description: null for --no-description", async () => {
    const api = stubApi(200, enabled);

    await runCli(["webhooks", "update", WEBHOOK_ID, "--all-events", "--no-description", "--url", "https://acme.example/new"], { env, fetch: api.fetch });

    expect(api.seen[0]?.body).toEqual({ url: "https://acme.example/new", event_types: null, description: null });
  });

  it("exits 2 when there is nothing to update, or for --all-events with --event-type", async () => {
    const api = stubApi(200, enabled);

    const nothing = await runCli(["webhooks", "update", WEBHOOK_ID], { env, fetch: api.fetch });
    const both = await runCli(["webhooks", "update", WEBHOOK_ID, "--all-events", "--event-type", "message.delivered"], { env, fetch: api.fetch });

    expect(nothing.code).toBe(2);
    expect(problemOf(nothing).message).toContain("Nothing to update");
    expect(both.code).toBe(2);
    expect(problemOf(both).message).toContain("mutually exclusive");
    expect(api.seen).toEqual([]);
  });
});

describe("mailroom webhooks delete", () => {
  it("deletes the endpoint and prints the API's answer", async () => {
    const api = stubApi(200, deleted);

    const result = await runCli(["webhooks", "delete", WEBHOOK_ID, "--yes"], { env, fetch: api.fetch });

    expect(result.json<DeletedObject>()).toEqual({ id: WEBHOOK_ID, object: "webhook", deleted: true });
    expect(api.seen).toMatchObject([{ method: "DELETE", target: `/v1/webhooks/${WEBHOOK_ID}` }]);
  });
});

describe("mailroom webhooks get-secret", () => {
  it("prints the secrets, also as `webhooks secret`", async () => {
    const api = stubApi(200, secrets);

    const json = await runCli(["webhooks", "get-secret", WEBHOOK_ID], { env, fetch: api.fetch });
    const human = await runCli(["webhooks", "secret", WEBHOOK_ID], { env, tty: true, fetch: api.fetch });

    expect(json.json<WebhookSecret>()).toEqual(secrets);
    expect(api.seen.map((seen) => `${seen.method} ${seen.target}`)).toEqual([`GET /v1/webhooks/${WEBHOOK_ID}/secret`, `GET /v1/webhooks/${WEBHOOK_ID}/secret`]);
    expect(human.stdout).toMatch(new RegExp(`^secret\\s+${secrets.secret.replace(/\+/g, "\\+")}$`, "m"));
    expect(human.stdout).toMatch(/^previous_secret_expires_at\s+2026-11-22T09:00:00\.000Z$/m);
  });

  it("exits 1 with 403 for a key that may not see secrets", async () => {
    const result = await runCli(["webhooks", "get-secret", WEBHOOK_ID], { env, fetch: stubApi(403, problemBody(403, "insufficient_permission")).fetch });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 403 });
  });
});

describe("mailroom webhooks rotate-secret", () => {
  it("sends --overlap-seconds with an Idempotency-Key and prints the new secret", async () => {
    const api = stubApi(200, created);

    const result = await runCli(["webhooks", "rotate-secret", WEBHOOK_ID, "--overlap-seconds", "3600"], { env, fetch: api.fetch });

    expect(result.json<Webhook>().secret).toBe(created.secret);
    expect(api.seen).toMatchObject([{ method: "POST", target: `/v1/webhooks/${WEBHOOK_ID}/rotate-secret`, body: { overlap_seconds: 3600 }, idempotencyKey: expect.any(String) }]);
  });

  it("sends an empty body without --overlap-seconds, and 0 when asked", async () => {
    const api = stubApi(200, created);

    await runCli(["webhooks", "rotate-secret", WEBHOOK_ID], { env, fetch: api.fetch });
    await runCli(["webhooks", "rotate-secret", WEBHOOK_ID, "--overlap-seconds", "0"], { env, fetch: api.fetch });

    expect(api.seen.map((seen) => seen.body)).toEqual([{}, { overlap_seconds: 0 }]);
  });
});

describe("mailroom webhooks test", () => {
  it("queues a sample of --type and prints the delivery, and on a terminal how to follow it", async () => {
    const api = stubApi(202, queued);

    const json = await runCli(["webhooks", "test", WEBHOOK_ID, "--type", "message.delivered"], { env, fetch: api.fetch });
    const human = await runCli(["webhooks", "test", WEBHOOK_ID, "--type", "message.delivered"], { env, tty: true, fetch: api.fetch });

    expect(json.json<WebhookDelivery>()).toEqual(queued);
    expect(api.seen[0]).toMatchObject({ method: "POST", target: `/v1/webhooks/${WEBHOOK_ID}/test`, body: { type: "message.delivered" }, idempotencyKey: expect.any(String) });
    expect(human.stdout).not.toContain("Follow it with");
    expect(human.stderr).toBe(`Queued. Follow it with: mailroom webhooks list-attempts ${WEBHOOK_ID} --event-id ${EVENT_ID}\n`);
  });

  it("queues a sample of a domain's --type", async () => {
    const api = stubApi(202, queued);

    const result = await runCli(["webhooks", "test", WEBHOOK_ID, "--type", "domain.failed"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen).toMatchObject([{ method: "POST", target: `/v1/webhooks/${WEBHOOK_ID}/test`, body: { type: "domain.failed" } }]);
  });

  it("takes the type as --event-type or --events too, as every command that takes event types", async () => {
    const api = stubApi(202, queued);

    await runCli(["webhooks", "test", WEBHOOK_ID, "--event-type", "message.bounced"], { env, fetch: api.fetch });
    await runCli(["webhooks", "test", WEBHOOK_ID, "--events", "domain.verified"], { env, fetch: api.fetch });

    expect(api.seen).toMatchObject([{ body: { type: "message.bounced" } }, { body: { type: "domain.verified" } }]);
  });

  it("exits 2 without a type, or with one that is not an event type, refused as every command refuses it", async () => {
    const api = stubApi(202, queued);

    const missing = await runCli(["webhooks", "test", WEBHOOK_ID], { env, fetch: api.fetch });
    const unknown = await runCli(["webhooks", "test", WEBHOOK_ID, "--type", "message.sent"], { env, fetch: api.fetch });
    const two = await runCli(["webhooks", "test", WEBHOOK_ID, "--type", "message.sent,domain.failed"], { env, fetch: api.fetch });

    expect(problemOf(missing).message).toContain("Give the --event-type to send.");
    expect(problemOf(unknown).message).toBe(
      '--event-type: unknown event type "message.sent"; the types are message.queued, message.scheduled, message.delivered, message.deferred, message.bounced, message.failed, message.suppressed, message.canceled, message.opened, message.clicked, message.complained, message.unsubscribed, message.replied, domain.verified, domain.temporary_failure, domain.failed, domain.dkim_rotated.',
    );
    expect(problemOf(two).message).toContain('--event-type: unknown event type "message.sent"');
    expect([missing.code, unknown.code, two.code]).toEqual([2, 2, 2]);
    expect(api.seen).toEqual([]);
  });
});

describe("mailroom webhooks redeliver-event", () => {
  it("queues the --event-id again, also as `webhooks redeliver`", async () => {
    const api = stubApi(202, queued);

    const result = await runCli(["webhooks", "redeliver", WEBHOOK_ID, "--event-id", EVENT_ID, "--idempotency-key", "again-1"], { env, fetch: api.fetch });

    expect(result.json<WebhookDelivery>()).toEqual(queued);
    expect(api.seen).toMatchObject([{ method: "POST", target: `/v1/webhooks/${WEBHOOK_ID}/redeliver`, body: { event_id: EVENT_ID }, idempotencyKey: "again-1" }]);
  });

  it("exits 1 with 404 for an event the environment does not have", async () => {
    const result = await runCli(["webhooks", "redeliver-event", WEBHOOK_ID, "--event-id", "evt_nope"], { env, fetch: stubApi(404, problemBody(404, "not_found")).fetch });

    expect(result.code).toBe(1);
  });
});

describe("mailroom webhooks replay-events", () => {
  it("sends --since as given in RFC 3339, and prints how many were queued again", async () => {
    const api = stubApi(202, replay);

    const json = await runCli(["webhooks", "replay-events", WEBHOOK_ID, "--since", "2026-11-21T00:00:00Z"], { env, fetch: api.fetch });
    const human = await runCli(["webhooks", "replay", WEBHOOK_ID, "--since", "2026-11-21T00:00:00Z"], { env, tty: true, fetch: api.fetch });

    expect(json.json<WebhookReplay>()).toEqual(replay);
    expect(api.seen[0]).toMatchObject({ method: "POST", target: `/v1/webhooks/${WEBHOOK_ID}/replay`, body: { since: "2026-11-21T00:00:00.000Z" } });
    expect(human.stdout).toBe("Queued 12 failed deliveries since 2026-11-21T00:00:00.000Z again.\n");
  });

  it("takes a duration ago for --since", async () => {
    const api = stubApi(202, replay);
    const before = Date.now();

    await runCli(["webhooks", "replay", WEBHOOK_ID, "--since", "2h"], { env, fetch: api.fetch });

    const since = Date.parse((api.seen[0]?.body as { since: string }).since);
    expect(since).toBeGreaterThanOrEqual(before - 2 * 3_600_000 - 1_000);
    expect(since).toBeLessThanOrEqual(Date.now() - 2 * 3_600_000);
  });

  it("exits 2 without --since, or with one that is not a time", async () => {
    const api = stubApi(202, replay);

    const missing = await runCli(["webhooks", "replay", WEBHOOK_ID], { env, fetch: api.fetch });
    const bad = await runCli(["webhooks", "replay", WEBHOOK_ID, "--since", "yesterday"], { env, fetch: api.fetch });

    expect([missing.code, bad.code]).toEqual([2, 2]);
    expect(problemOf(bad).message).toContain("--since takes an RFC 3339 time");
    expect(api.seen).toEqual([]);
  });
});

describe("mailroom webhooks list-attempts", () => {
  it("passes --status and --event-id, also as `webhooks attempts`", async () => {
    const api = stubApi(200, page(attempts));

    const result = await runCli(["webhooks", "attempts", WEBHOOK_ID, "--status", "failed", "--event-id", EVENT_ID], { env, fetch: api.fetch });

    expect(result.json()).toEqual(page(attempts));
    expect(api.seen.map((seen) => seen.target)).toEqual([`/v1/webhooks/${WEBHOOK_ID}/attempts?limit=20&status=failed&event_id=${EVENT_ID}`]);
  });

  it("shows each attempt's answer, or why there was none, on a terminal", async () => {
    const [succeeded, failed] = attempts as [WebhookAttempt, WebhookAttempt];
    const timeout: WebhookAttempt = { ...failed, id: "wha_3", attempt: 3, response_status: null, response_body: null, error: "timeout", duration_ms: 15_000 };

    const result = await runCli(["webhooks", "list-attempts", WEBHOOK_ID], { env, tty: true, fetch: stubApi(200, page([timeout, succeeded, failed])).fetch });

    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^CREATED\s+EVENT\s+ATTEMPT\s+STATUS\s+ANSWER\s+DURATION$/);
    expect(lines.slice(1).map((line) => line.split(/\s{2,}/).slice(2))).toEqual([
      ["3", "failed", "timeout", "15000 ms"],
      ["2", "succeeded", "204", "41 ms"],
      ["1", "failed", "503", "12 ms"],
    ]);
  });

  it("exits 2 for a --status that is not an outcome", async () => {
    const api = stubApi(200, page(attempts));

    const result = await runCli(["webhooks", "attempts", WEBHOOK_ID, "--status", "pending"], { env, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(api.seen).toEqual([]);
  });
});

describe("mailroom webhooks --help", () => {
  it("lists every verb with an example", async () => {
    const result = await runCli(["webhooks", "--help"], { env: {} });

    expect(result.code).toBe(0);
    for (const verb of ["create", "list", "get <webhook_id>", "update <webhook_id>", "delete <webhook_id>", "get-secret <webhook_id>", "rotate-secret <webhook_id>", "test <webhook_id>", "redeliver-event", "replay-events", "list-attempts"]) {
      expect(result.stdout).toContain(`mailroom webhooks ${verb}`);
    }
  });
});
