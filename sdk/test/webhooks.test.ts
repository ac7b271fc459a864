import { randomBytes } from "node:crypto";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import {
  ConflictError,
  Mailroom,
  MailroomConfigurationError,
  MailroomError,
  NotFoundError,
  PermissionDeniedError,
  UnprocessableEntityError,
  WebhookVerificationError,
  Webhooks,
  type DeletedObject,
  type Domain,
  type DomainEvent,
  type Webhook,
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookReplay,
  type WebhookSecret,
} from "../src/index.js";
import { ANY_KEY, contractExample, fakeClient, fakeFetch, json, page, problem, theRequest, twoPages } from "./helpers.js";

// The receiving side needs no API key; any client's `webhooks` verifies.
const { webhooks } = new Mailroom("svc_test_webhooks");

const newSecret = () => `whsec_${randomBytes(24).toString("base64")}`;
const payload = JSON.stringify({ id: "evt_01jd3k8m2q5v7w9x1y3z5a7b9c", type: "message.delivered", message_id: "msg_01jd3k8m2q5v7w9x1y3z5a7b9c" });
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Headers as the public Standard Webhooks library signs them: the reference we must agree with. */
function signedByStandardWebhooks(secret: string, body = payload, at = new Date()) {
  return {
    "webhook-id": "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W",
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new StandardWebhook(secret).sign("msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", at, body),
  };
}

describe("webhooks.verify", () => {
  it("accepts a delivery signed by the standardwebhooks library and returns its parsed payload", async () => {
    const secret = newSecret();
    await expect(webhooks.verify(payload, signedByStandardWebhooks(secret), secret)).resolves.toEqual(JSON.parse(payload));
  });

  it("returns a domain's event as sent, which its type narrows to the domain and the records found missing", async () => {
    const secret = newSecret();
    const domain = contractExample<Domain>("FailingDomain");
    const missing = ["mr2611a-rsa._domainkey.acme.example"];
    const sent: DomainEvent = {
      id: "evt_01jd3k8m3a5v7w9x1y3z5a7b9d",
      object: "event",
      type: "domain.temporary_failure",
      created_at: "2026-11-21T10:00:00.000Z",
      environment: "live",
      domain_id: domain.id,
      from_status: "verified",
      to_status: "temporary_failure",
      domain,
      data: { missing_records: missing },
    };
    const body = JSON.stringify(sent);
    const event = await webhooks.verify(body, signedByStandardWebhooks(secret, body), secret);
    expect(event).toEqual(sent);
    if (event.type !== "domain.temporary_failure") throw new Error(`expected a domain.temporary_failure event, got ${event.type}`);
    expect([event.domain.name, event.domain.grace_ends_at, event.data.missing_records]).toEqual([domain.name, domain.grace_ends_at, missing]);
  });

  it("refuses a body changed after signing", async () => {
    const secret = newSecret();
    const tampered = payload.replace("delivered", "bounced");
    await expect(webhooks.verify(tampered, signedByStandardWebhooks(secret), secret)).rejects.toThrow(WebhookVerificationError);
  });

  it("refuses a delivery signed with another secret", async () => {
    await expect(webhooks.verify(payload, signedByStandardWebhooks(newSecret()), newSecret())).rejects.toThrow(/No matching signature/);
  });

  it.each(["webhook-id", "webhook-timestamp", "webhook-signature"])("refuses a delivery without %s", async (missing) => {
    const secret = newSecret();
    const headers: Record<string, string> = signedByStandardWebhooks(secret);
    delete headers[missing];
    await expect(webhooks.verify(payload, headers, secret)).rejects.toThrow(/Missing/);
  });

  it("refuses a webhook-timestamp that is not a number", async () => {
    const secret = newSecret();
    const headers = { ...signedByStandardWebhooks(secret), "webhook-timestamp": "yesterday" };
    await expect(webhooks.verify(payload, headers, secret)).rejects.toThrow(/Invalid webhook-timestamp/);
  });

  it("makes every failure a MailroomError", async () => {
    await expect(webhooks.verify(payload, {}, newSecret())).rejects.toBeInstanceOf(MailroomError);
  });
});

describe("replay protection", () => {
  const secret = newSecret();
  const signedAt = new Date("2026-11-21T10:00:00Z");
  const headers = signedByStandardWebhooks(secret, payload, signedAt);
  const verifyAt = (offsetSeconds: number, toleranceSeconds?: number) =>
    webhooks.verify(payload, headers, secret, { now: signedAt.getTime() + offsetSeconds * 1000, ...(toleranceSeconds === undefined ? {} : { toleranceSeconds }) });

  it("accepts a delivery up to 5 minutes old", async () => {
    await expect(verifyAt(300)).resolves.toBeDefined();
  });

  it("refuses a delivery more than 5 minutes old: a replay", async () => {
    await expect(verifyAt(301)).rejects.toThrow(/too far from now/);
  });

  it("refuses a delivery timestamped more than 5 minutes ahead: a clock out of sync", async () => {
    await expect(verifyAt(-301)).rejects.toThrow(/too far from now/);
  });

  it("applies a tolerance of the receiver's choosing", async () => {
    await expect(verifyAt(61, 60)).rejects.toThrow(WebhookVerificationError);
    await expect(verifyAt(59, 60)).resolves.toBeDefined();
  });

  it("checks against the real clock by default", async () => {
    const old = signedByStandardWebhooks(secret, payload, new Date(Date.now() - 10 * 60 * 1000));
    await expect(webhooks.verify(payload, old, secret)).rejects.toThrow(/too far from now/);
  });
});

describe("the signature header", () => {
  it("may carry several signatures, as during a secret rotation; one valid one is enough", async () => {
    const secret = newSecret();
    const headers = signedByStandardWebhooks(secret);
    const stale = signedByStandardWebhooks(newSecret())["webhook-signature"];
    headers["webhook-signature"] = `${stale} ${headers["webhook-signature"]}`;
    await expect(webhooks.verify(payload, headers, secret)).resolves.toEqual(JSON.parse(payload));
  });

  it("counts only v1 signatures", async () => {
    const secret = newSecret();
    const headers = signedByStandardWebhooks(secret);
    headers["webhook-signature"] = headers["webhook-signature"].replace(/^v1,/, "v2,");
    await expect(webhooks.verify(payload, headers, secret)).rejects.toThrow(/No matching signature/);
  });

  it("ignores entries that are not base64", async () => {
    const secret = newSecret();
    const headers = signedByStandardWebhooks(secret);
    headers["webhook-signature"] = `v1,%%% v1 ${headers["webhook-signature"]}`;
    await expect(webhooks.verify(payload, headers, secret)).resolves.toBeDefined();
  });
});

describe("the headers argument", () => {
  it("may be a Node IncomingHttpHeaders-style record, in any case", async () => {
    const secret = newSecret();
    const signed = signedByStandardWebhooks(secret);
    const headers = { "Webhook-Id": signed["webhook-id"], "WEBHOOK-TIMESTAMP": signed["webhook-timestamp"], "webhook-Signature": signed["webhook-signature"], host: "example.com" };
    await expect(webhooks.verify(payload, headers, secret)).resolves.toBeDefined();
  });

  it("may hold a header's repeated values as an array, as Node gives them", async () => {
    const secret = newSecret();
    const signed = signedByStandardWebhooks(secret);
    const headers = { ...signed, "webhook-signature": ["v1,c3RhbGU=", signed["webhook-signature"]] };
    await expect(webhooks.verify(payload, headers, secret)).resolves.toBeDefined();
  });

  it("may be a fetch Headers object", async () => {
    const secret = newSecret();
    await expect(webhooks.verify(payload, new Headers(signedByStandardWebhooks(secret)), secret)).resolves.toBeDefined();
  });
});

describe("the body argument", () => {
  it("may be the raw bytes", async () => {
    const secret = newSecret();
    await expect(webhooks.verify(new TextEncoder().encode(payload), signedByStandardWebhooks(secret), secret)).resolves.toEqual(JSON.parse(payload));
  });

  it("must be the bytes as received: re-serialised JSON no longer matches", async () => {
    const secret = newSecret();
    const reserialised = JSON.stringify(JSON.parse(payload), null, 2);
    await expect(webhooks.verify(reserialised, signedByStandardWebhooks(secret), secret)).rejects.toThrow(WebhookVerificationError);
  });

  it("is refused, naming the fix, when it is a parsed object rather than the raw body (a misuse, not a bad signature)", async () => {
    const secret = newSecret();
    const parsed = JSON.parse(payload) as unknown as string;
    const verifying = webhooks.verify(parsed, signedByStandardWebhooks(secret), secret);
    await expect(verifying).rejects.toThrow(MailroomConfigurationError);
    await expect(verifying).rejects.toThrow(/raw body.*parsed object/);
  });

  it("is refused when it is signed but not JSON", async () => {
    const secret = newSecret();
    await expect(webhooks.verify("not json", signedByStandardWebhooks(secret, "not json"), secret)).rejects.toThrow(/not JSON/);
  });
});

describe("the secret", () => {
  it("is refused with a WebhookVerificationError when it is not whsec_ + base64", async () => {
    const secret = newSecret();
    await expect(webhooks.verify(payload, signedByStandardWebhooks(secret), "whsec_not base64!")).rejects.toThrow(/whsec_/);
    await expect(webhooks.sign(payload, "hunter2!", { id: "msg_1" })).rejects.toThrow(WebhookVerificationError);
  });

  it("may be given without its whsec_ prefix, as standardwebhooks allows", async () => {
    const secret = newSecret();
    await expect(webhooks.verify(payload, signedByStandardWebhooks(secret), secret.slice("whsec_".length))).resolves.toBeDefined();
  });
});

describe("webhooks.sign", () => {
  it("produces headers that the standardwebhooks library verifies", async () => {
    const secret = newSecret();
    const headers = await webhooks.sign(payload, secret, { id: "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W" });
    expect(new StandardWebhook(secret).verify(payload, headers)).toEqual(JSON.parse(payload));
  });

  it("timestamps with now unless told otherwise", async () => {
    const before = nowSeconds();
    const headers = await webhooks.sign(payload, newSecret(), { id: "msg_1" });
    expect(Number(headers["webhook-timestamp"])).toBeGreaterThanOrEqual(before);
    expect(Number(headers["webhook-timestamp"])).toBeLessThanOrEqual(nowSeconds());
  });

  it("signs exactly what standardwebhooks signs for the same id, time and body", async () => {
    const secret = newSecret();
    const at = new Date("2026-11-21T10:00:00Z");
    const ours = await webhooks.sign(payload, secret, { id: "msg_1", timestamp: at.getTime() / 1000 });
    expect(ours).toEqual({ "webhook-id": "msg_1", "webhook-timestamp": String(at.getTime() / 1000), "webhook-signature": new StandardWebhook(secret).sign("msg_1", at, payload) });
  });

  it.each([
    ["an object", { type: "message.delivered" }],
    ["a number", 42],
  ])("refuses %s as the payload: it signs the string that will be sent, not a value to serialise", async (_, value) => {
    const signing = webhooks.sign(value as unknown as string, newSecret(), { id: "msg_1" });
    await expect(signing).rejects.toThrow(MailroomConfigurationError);
    await expect(signing).rejects.toThrow(/JSON\.stringify/);
  });

  it("signs raw bytes as the same string", async () => {
    const secret = newSecret();
    const headers = await webhooks.sign(new TextEncoder().encode(payload), secret, { id: "msg_1", timestamp: 1_790_000_000 });
    expect(headers).toEqual(await webhooks.sign(payload, secret, { id: "msg_1", timestamp: 1_790_000_000 }));
  });

  it.each([
    ["no id", { id: "" }, /id/],
    ["a timestamp that is not whole seconds", { id: "msg_1", timestamp: 1.5 }, /timestamp/],
    ["a timestamp in milliseconds", { id: "msg_1", timestamp: Date.now() }, /seconds/],
  ])("refuses %s", async (_, options, message) => {
    await expect(webhooks.sign(payload, newSecret(), options)).rejects.toThrow(message);
    await expect(webhooks.sign(payload, newSecret(), options)).rejects.toThrow(MailroomConfigurationError);
  });

  it("round-trips through verify", async () => {
    const secret = newSecret();
    const headers = await webhooks.sign(payload, secret, { id: "msg_1" });
    await expect(webhooks.verify(payload, headers, secret)).resolves.toEqual(JSON.parse(payload));
  });
});

describe("new Webhooks(), without a client", () => {
  it("verifies and signs, as a receiver needs no API key", async () => {
    const standalone = new Webhooks();
    const secret = newSecret();
    const headers = await standalone.sign(payload, secret, { id: "msg_1" });
    await expect(standalone.verify(payload, headers, secret)).resolves.toEqual(JSON.parse(payload));
  });

  it("refuses the API methods with a MailroomConfigurationError that names the fix", () => {
    expect(() => new Webhooks().list()).toThrow(MailroomConfigurationError);
    expect(() => new Webhooks().get("whk_1")).toThrow(/new Mailroom\(apiKey\)\.webhooks/);
  });
});

/**
 * `mr.webhooks`' endpoint methods (tag `Webhooks`) over a fake fetch: each method's request
 * (method, path, query, body, Idempotency-Key) and how its answer comes back, the answers being
 * the contract's examples.
 */
describe("the webhook endpoint methods", () => {
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

  describe("webhooks.create", () => {
    it("POSTs the endpoint to /v1/webhooks with an Idempotency-Key and resolves to it with its secret", async () => {
      const fake = fakeFetch([json(201, created)]);
      const webhook = await fakeClient(fake).webhooks.create({ url: "https://acme.example/hooks/mailroom", event_types: ["message.delivered", "message.bounced"] });
      expect(webhook.secret).toMatch(/^whsec_/);
      expect(theRequest(fake)).toEqual({
        method: "POST",
        target: "/v1/webhooks",
        body: { url: "https://acme.example/hooks/mailroom", event_types: ["message.delivered", "message.bounced"] },
        idempotencyKey: ANY_KEY,
      });
    });

    it("throws UnprocessableEntityError webhook_target_not_allowed for a private address", async () => {
      const fake = fakeFetch([problem(422, "webhook_target_not_allowed")]);
      const error = await fakeClient(fake).webhooks.create({ url: "http://10.0.0.1/hooks" }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnprocessableEntityError);
      expect(error).toMatchObject({ code: "webhook_target_not_allowed" });
    });
  });

  describe("webhooks.list", () => {
    it("GETs /v1/webhooks and walks every page with for await", async () => {
      const fake = twoPages(enabled, { ...failing, id: "whk_2" });
      const ids: string[] = [];
      for await (const webhook of fakeClient(fake).webhooks.list({ limit: 1 })) ids.push(webhook.id);
      expect(ids).toEqual([WEBHOOK_ID, "whk_2"]);
      expect(fake.requests.map((request) => `${request.method} ${request.url.pathname}${request.url.search}`)).toEqual(["GET /v1/webhooks?limit=1", "GET /v1/webhooks?limit=1&after=cur_2"]);
    });
  });

  describe("webhooks.get", () => {
    it("GETs /v1/webhooks/{webhook_id}, escaped, and resolves to the endpoint", async () => {
      const fake = fakeFetch([json(200, failing), json(200, failing)]);
      const mr = fakeClient(fake);
      await expect(mr.webhooks.get(WEBHOOK_ID)).resolves.toEqual(failing);
      await mr.webhooks.get("whk/../1");
      expect(fake.requests.map((request) => request.url.pathname)).toEqual([`/v1/webhooks/${WEBHOOK_ID}`, "/v1/webhooks/whk%2F..%2F1"]);
    });

    it("throws NotFoundError for an endpoint of another environment", async () => {
      await expect(fakeClient(fakeFetch([problem(404, "not_found")])).webhooks.get(WEBHOOK_ID)).rejects.toBeInstanceOf(NotFoundError);
    });

    // "..", "." and "" survive encodeURIComponent, and the URL parser resolves them as dot
    // segments: getSecret("..") would GET /v1/secret, another endpoint.
    it.each(["..", ".", ""])("refuses the id %j, which would reach another path, before any request", async (webhookId) => {
      const fake = fakeFetch([]);
      const mr = fakeClient(fake, { maxRetries: 0 });
      for (const call of [mr.webhooks.get(webhookId), mr.webhooks.getSecret(webhookId), mr.webhooks.test(webhookId, { type: "message.delivered" })]) {
        const error = await call.catch((e: unknown) => e);
        expect(error).toBeInstanceOf(MailroomConfigurationError);
        expect((error as Error).message).toMatch(/webhook_id/);
      }
      expect(fake.requests).toEqual([]);
    });
  });

  describe("webhooks.update", () => {
    it("PATCHes the fields given, without an Idempotency-Key", async () => {
      const fake = fakeFetch([json(200, enabled)]);
      await expect(fakeClient(fake).webhooks.update(WEBHOOK_ID, { enabled: true, event_types: null })).resolves.toEqual(enabled);
      expect(theRequest(fake)).toEqual({ method: "PATCH", target: `/v1/webhooks/${WEBHOOK_ID}`, body: { enabled: true, event_types: null }, idempotencyKey: null });
    });
  });

  describe("webhooks.delete", () => {
    it("DELETEs /v1/webhooks/{webhook_id} and resolves to the deleted object", async () => {
      const fake = fakeFetch([json(200, deleted)]);
      await expect(fakeClient(fake).webhooks.delete(WEBHOOK_ID)).resolves.toEqual({ id: WEBHOOK_ID, object: "webhook", deleted: true });
      expect(theRequest(fake)).toEqual({ method: "DELETE", target: `/v1/webhooks/${WEBHOOK_ID}`, body: undefined, idempotencyKey: null });
    });
  });

  describe("webhooks.getSecret", () => {
    it("GETs /v1/webhooks/{webhook_id}/secret and resolves to the current and previous secrets", async () => {
      const fake = fakeFetch([json(200, secrets)]);
      await expect(fakeClient(fake).webhooks.getSecret(WEBHOOK_ID)).resolves.toEqual(secrets);
      expect(theRequest(fake)).toEqual({ method: "GET", target: `/v1/webhooks/${WEBHOOK_ID}/secret`, body: undefined, idempotencyKey: null });
    });

    it("throws PermissionDeniedError for a sending-access key", async () => {
      await expect(fakeClient(fakeFetch([problem(403, "insufficient_permission")])).webhooks.getSecret(WEBHOOK_ID)).rejects.toBeInstanceOf(PermissionDeniedError);
    });
  });

  describe("webhooks.rotateSecret", () => {
    it("POSTs the overlap to /v1/webhooks/{webhook_id}/rotate-secret with an Idempotency-Key", async () => {
      const fake = fakeFetch([json(200, created)]);
      await expect(fakeClient(fake).webhooks.rotateSecret(WEBHOOK_ID, { overlap_seconds: 3600 })).resolves.toEqual(created);
      expect(theRequest(fake)).toEqual({ method: "POST", target: `/v1/webhooks/${WEBHOOK_ID}/rotate-secret`, body: { overlap_seconds: 3600 }, idempotencyKey: ANY_KEY });
    });

    it("sends an empty body by default: the server's overlap", async () => {
      const fake = fakeFetch([json(200, created)]);
      await fakeClient(fake).webhooks.rotateSecret(WEBHOOK_ID);
      expect(theRequest(fake).body).toEqual({});
    });
  });

  describe("webhooks.test", () => {
    it("POSTs the event type to /v1/webhooks/{webhook_id}/test and resolves to the queued delivery", async () => {
      const fake = fakeFetch([json(202, queued)]);
      await expect(fakeClient(fake).webhooks.test(WEBHOOK_ID, { type: "message.delivered" })).resolves.toEqual(queued);
      expect(theRequest(fake)).toEqual({ method: "POST", target: `/v1/webhooks/${WEBHOOK_ID}/test`, body: { type: "message.delivered" }, idempotencyKey: ANY_KEY });
    });
  });

  describe("webhooks.redeliverEvent", () => {
    it("POSTs the event id to /v1/webhooks/{webhook_id}/redeliver", async () => {
      const fake = fakeFetch([json(202, queued)]);
      await expect(fakeClient(fake).webhooks.redeliverEvent(WEBHOOK_ID, { event_id: EVENT_ID }, { idempotencyKey: "redeliver-1" })).resolves.toEqual(queued);
      expect(theRequest(fake)).toEqual({ method: "POST", target: `/v1/webhooks/${WEBHOOK_ID}/redeliver`, body: { event_id: EVENT_ID }, idempotencyKey: "redeliver-1" });
    });

    it("throws NotFoundError for an event the environment does not have", async () => {
      await expect(fakeClient(fakeFetch([problem(404, "not_found")])).webhooks.redeliverEvent(WEBHOOK_ID, { event_id: "evt_nope" })).rejects.toBeInstanceOf(NotFoundError);
    });
  });

  describe("webhooks.replayEvents", () => {
    it("POSTs since to /v1/webhooks/{webhook_id}/replay and resolves to the count queued again", async () => {
      const fake = fakeFetch([json(202, replay)]);
      const answer = await fakeClient(fake).webhooks.replayEvents(WEBHOOK_ID, { since: "2026-11-21T00:00:00Z" });
      expect(answer.count).toBe(12);
      expect(theRequest(fake)).toEqual({ method: "POST", target: `/v1/webhooks/${WEBHOOK_ID}/replay`, body: { since: "2026-11-21T00:00:00Z" }, idempotencyKey: ANY_KEY });
    });

    it("waits out 409 idempotency_key_in_use under the same key, and throws it as a ConflictError carrying the key once it stops waiting", async () => {
      const busy = () => problem(409, "idempotency_key_in_use", { headers: { "retry-after": "0" } });
      const fake = fakeFetch([busy(), busy(), busy(), busy(), json(202, replay)]);
      await expect(fakeClient(fake).webhooks.replayEvents(WEBHOOK_ID, { since: "2026-11-21T00:00:00Z" })).resolves.toEqual(replay);
      expect(new Set(fake.requests.map((request) => request.headers.get("idempotency-key"))).size).toBe(1);

      // With retries off it does not wait at all (see retries.test.ts for the deadline).
      const once = fakeFetch([busy()]);
      const error = await fakeClient(once, { maxRetries: 0 }).webhooks.replayEvents(WEBHOOK_ID, { since: "2026-11-21T00:00:00Z" }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConflictError);
      expect((error as ConflictError).idempotency_key).toBe(once.requests[0]?.headers.get("idempotency-key"));
    });
  });

  describe("webhooks.listAttempts", () => {
    it("GETs /v1/webhooks/{webhook_id}/attempts with the filters and resolves to a page of attempts", async () => {
      const fake = fakeFetch([page(attempts)]);
      const first = await fakeClient(fake).webhooks.listAttempts(WEBHOOK_ID, { status: "failed", event_id: EVENT_ID, limit: 5 });
      expect(first.data.map((attempt) => [attempt.attempt, attempt.status, attempt.response_status])).toEqual([
        [2, "succeeded", 204],
        [1, "failed", 503],
      ]);
      expect(theRequest(fake)).toEqual({ method: "GET", target: `/v1/webhooks/${WEBHOOK_ID}/attempts?status=failed&event_id=${EVENT_ID}&limit=5`, body: undefined, idempotencyKey: null });
    });
  });
});
