import type { LightMyRequestResponse } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { generateSecret } from "../../src/domain/api-key-secret.js";
import { operationsOf, type OperationInfo } from "../../src/http/bindings.js";
import { loadSpec } from "../../src/http/spec.js";
import { ROLES } from "../../src/domain/roles.js";
import { databases } from "../helpers/databases.js";
import { signedUp } from "../helpers/dashboard-session.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

/** One answer for every refused credential, naming both kinds a caller may hold. */
const INVALID_CREDENTIAL_DETAIL = "Send a valid, unrevoked API key (`svc_…`) or user access token (`mru_…`) as `Authorization: Bearer …`.";

/**
 * Authentication, permission and tenancy for every secured operation of the contract. The list
 * comes from openapi/v1.yaml, so a new operation is covered (or fails here) without editing
 * this file, unless it needs a new kind of path parameter or a request body.
 */
const spec = loadSpec();
const secured = operationsOf(spec).filter((op) => op.security.length > 0);
const neededPermission = (op: OperationInfo) => op.security[0]?.bearerAuth?.[0] ?? "full_access";
const hasBody = (op: OperationInfo) => op.body !== "none";

/** A valid body per operation that takes one. */
const VALID_BODIES: Record<string, () => object> = {
  createMessage: () => aMessage(),
  previewMessage: () => aMessage(),
  createApiKey: () => ({ name: "From the auth tests" }),
  rotateApiKey: () => ({ overlap_seconds: 60 }),
  updateApiKey: () => ({ name: "Renamed by the auth tests" }),
  updateWorkspace: () => ({ name: "Renamed" }),
  createWorkspace: () => ({ name: "From the auth tests" }),
  updateAccount: () => ({ name: "From the auth tests" }),
  updateMember: () => ({ role: "developer" }),
  createInvitation: () => ({ email: "invitee@acme.example" }),
  createMessageBatch: () => ({ messages: [aMessage()] }),
  rescheduleMessage: () => ({ scheduled_at: null }),
  createDomain: () => ({ name: "from-the-auth-tests.example" }),
  updateDomain: () => ({ track_clicks: true }),
  createSuppression: () => ({ email: "suppressed@example.com" }),
  createSuppressionBatch: () => ({ suppressions: [{ email: "suppressed@example.com" }] }),
  createTemplate: () => ({ slug: "from-the-auth-tests", name: "From the auth tests", subject: "Hi", html: "<p>Hi</p>" }),
  updateTemplate: () => ({ subject: "Changed" }),
  publishTemplate: () => ({ version: 1 }),
  renderTemplate: () => ({ variables: {} }),
  createWebhook: () => ({ url: "https://hooks.example/from-the-auth-tests" }),
  updateWebhook: () => ({ description: "Renamed" }),
  rotateWebhookSecret: () => ({ overlap_seconds: 60 }),
  testWebhook: () => ({ type: "message.delivered" }),
  redeliverWebhookEvent: () => ({ event_id: "evt_00000000000000000000000000" }),
  replayWebhookEvents: () => ({ since: "2026-01-01T00:00:00Z" }),
};

/** Domains and templates belong to the workspace and serve both environments (DESIGN.md §6): the live key sees them. */
const workspaceWide = (op: OperationInfo) => op.path.startsWith("/v1/domains") || op.path.startsWith("/v1/templates");
/** GET operations without a path parameter that answer one object, not a list. */
// Not lists of tenant objects: their own tests check that each tenant sees only its own figures
// (usage.test.ts, metrics.test.ts).
const NOT_LISTS = new Set(["/v1/workspace", "/v1/usage", "/v1/metrics"]);

/** Account operations (scope `user`) take user access tokens only; their tenancy is in members.test.ts. */
const forPeopleOnly = (op: OperationInfo) => neededPermission(op) === "user";

/** Ids of a resource in the test's workspace and sandbox environment. */
interface Fixtures {
  message_id: string;
  api_key_id: string;
  user_id: string;
  invitation_id: string;
  suppression_id: string;
  webhook_id: string;
  /** The request that created the message, in the request log. */
  request_id: string;
  /** A reply to the message, with one attachment (index 0). */
  inbound_id: string;
  attachment_index: string;
  /** Created only for the domain operations (a domain costs an RSA key). */
  domain_id?: string;
  /** Created only for the template operations (a template starts a render worker): its id and version 1. */
  template?: string;
  version?: string;
}

interface Request {
  method: "GET" | "POST" | "PATCH" | "DELETE" | "PUT";
  url: string;
  payload?: object;
}

function requestFor(op: OperationInfo, ids: Fixtures): Request {
  const url = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const id = (ids as unknown as Record<string, string | undefined>)[name];
    if (!id) throw new Error(`auth tests: no fixture for path parameter ${name} of ${op.operationId}; add one`);
    return id;
  });
  const request: Request = { method: op.method.toUpperCase() as Request["method"], url };
  if (hasBody(op)) {
    const body = VALID_BODIES[op.operationId];
    if (!body) throw new Error(`auth tests: no valid body for ${op.operationId}; add one to VALID_BODIES`);
    request.payload = body();
  }
  return request;
}

const withoutRequestId = (res: LightMyRequestResponse) => {
  const { request_id, ...rest } = res.json() as Record<string, unknown>;
  expect(request_id).toBe(res.headers["request-id"]);
  return rest;
};

describe.each(databases)("authentication and tenancy ($name)", (database) => {
  let t: TestApp;
  let ids: Fixtures;
  beforeEach(async () => {
    t = await createTestApp(database);
    const message = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage() });
    expect(message.statusCode).toBe(202);
    const key = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Fixture" } });
    expect(key.statusCode).toBe(201);
    // Account operations refuse every API key before looking at their path: any id shape will do.
    const suppression = await t.call({ method: "POST", url: "/v1/suppressions", payload: { email: "fixture@example.com" } });
    expect(suppression.statusCode).toBe(201);
    const webhook = await t.call({ method: "POST", url: "/v1/webhooks", payload: { url: "https://hooks.example/fixture" } });
    expect(webhook.statusCode).toBe(201);
    const reply = await t.runtime.services.inbound.recordReply(message.json().id, {
      from: "ada@example.com",
      fromAddress: "ada@example.com",
      to: [],
      subject: "Re: Welcome",
      text: "Thanks",
      quotedText: null,
      html: null,
      messageIdHeader: null,
      inReplyTo: null,
      authentication: { spf: "none", dkim: "none", dmarc: "none" },
      attachments: [{ filename: "a.txt", content_type: "text/plain", content_id: null, content: Buffer.from("a") }],
      receivedAt: t.clock.now(),
    }, "reply_address");
    if (!reply.stored) throw new Error("auth tests: the reply fixture was not stored");
    ids = {
      inbound_id: reply.inboundId,
      attachment_index: "0",
      message_id: message.json().id,
      api_key_id: key.json().id,
      user_id: "usr_00000000000000000000000000",
      invitation_id: "inv_00000000000000000000000000",
      suppression_id: suppression.json().id,
      webhook_id: webhook.json().id,
      request_id: message.headers["request-id"] as string,
    };
    // The request log writes about once a second; the fixtures' entries are wanted now.
    await t.runtime.services.requestLogs.flush();
  });
  afterEach(async () => t.close());

  const createKey = async (body: object) => {
    const res = await t.call({ method: "POST", url: "/v1/api-keys", payload: body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; secret: string };
  };

  /** Every way a credential can be wrong; each must get the same answer. */
  async function badCredentials(): Promise<Array<{ label: string; headers: Record<string, string> }>> {
    const valid = t.workspace.sandboxKey;
    const last = valid.at(-1) === "A" ? "B" : "A";
    const revoked = await createKey({ name: "Revoked" });
    expect((await t.call({ method: "DELETE", url: `/v1/api-keys/${revoked.id}` })).statusCode).toBe(200);
    const expiring = await createKey({ name: "Expiring", expires_at: new Date(t.clock.now() + 60_000).toISOString() });
    t.clock.advance(61_000);
    return [
      { label: "missing", headers: {} },
      { label: "malformed", headers: { authorization: "Bearer not-a-key" } },
      { label: "another scheme", headers: { authorization: `Basic ${Buffer.from(`${valid}:`).toString("base64")}` } },
      { label: "no scheme", headers: { authorization: valid } },
      { label: "bad checksum", headers: { authorization: `Bearer ${valid.slice(0, -1)}${last}` } },
      { label: "unknown", headers: { authorization: `Bearer ${generateSecret("sandbox")}` } },
      { label: "revoked", headers: { authorization: `Bearer ${revoked.secret}` } },
      { label: "expired", headers: { authorization: `Bearer ${expiring.secret}` } },
      // /v1 takes bearer credentials only, never cookies (DESIGN.md §6).
      { label: "in a cookie", headers: { cookie: `session=${valid}; api_key=${valid}` } },
    ];
  }

  /** What a tenant can observe, minus the last-use stamps (time and address) that any call moves. */
  const snapshot = async () => {
    const strip = (keys: Array<Record<string, unknown>>) => keys.map(({ last_used_at: _at, last_used_ip: _ip, ...k }) => k);
    const [workspace, keys, message, webhooks] = await Promise.all([
      t.call({ method: "GET", url: "/v1/workspace" }),
      t.call({ method: "GET", url: "/v1/api-keys?limit=100" }),
      t.call({ method: "GET", url: `/v1/messages/${ids.message_id}` }),
      t.call({ method: "GET", url: "/v1/webhooks?limit=100" }),
    ]);
    return { workspace: workspace.json(), keys: strip(keys.json().data), message: message.json(), webhooks: webhooks.json() };
  };

  describe.each(secured)("$operationId", (op) => {
    beforeEach(async () => {
      if (op.path.startsWith("/v1/templates")) {
        const template = await t.call({ method: "POST", url: "/v1/templates", payload: { slug: "fixture", name: "Fixture", subject: "Hi", html: "<p>Hi</p>", publish: true } });
        expect(template.statusCode, template.body).toBe(201);
        ids.template = template.json().id;
        ids.version = "1";
      }
      if (!op.path.startsWith("/v1/domains")) return;
      const domain = await t.call({ method: "POST", url: "/v1/domains", payload: { name: "fixture.example" } });
      expect(domain.statusCode).toBe(201);
      ids.domain_id = domain.json().id;
    });

    it("answers every missing, malformed, unknown, revoked or expired key with the same 401", async () => {
      const request = requestFor(op, ids);
      const answers = [];
      for (const { label, headers } of await badCredentials()) {
        const res = await t.call({ ...request, key: null, headers });
        expect(res.statusCode, label).toBe(401);
        expect(res.headers["content-type"], label).toMatch(/^application\/problem\+json/);
        expect(res.headers["www-authenticate"], label).toBe('Bearer realm="mailroom"');
        expect(res.json(), label).toMatchObject({ code: "invalid_api_key", status: 401, detail: INVALID_CREDENTIAL_DETAIL });
        answers.push({ label, body: withoutRequestId(res), wwwAuthenticate: res.headers["www-authenticate"] });
      }
      for (const answer of answers) expect({ ...answer, label: "" }, answer.label).toEqual({ ...answers[0], label: "" });
    });

    it("answers 401 to an unauthenticated caller before looking at its input", async () => {
      const request = requestFor(op, ids);
      const attempts: Array<{ label: string; url: string; method?: "HEAD"; payload?: string | object; headers?: Record<string, string> }> = [];
      const longId = `x${"0".repeat(80)}`;
      if (/\{\w+\}/.test(op.path)) attempts.push({ label: "path too long", url: op.path.replace(/\{\w+\}/g, longId) });
      if (op.method === "get") attempts.push({ label: "invalid query", url: `${request.url}?limit=0&unknown=1` });
      if (op.method === "get") attempts.push({ label: "HEAD", url: request.url, method: "HEAD" });
      // Every POST takes an Idempotency-Key, and an authenticated caller's over-long one is a 422:
      // the one input of a POST that has neither a path parameter nor a body (leaveWorkspace).
      if (op.method === "post") attempts.push({ label: "Idempotency-Key too long", url: request.url, headers: { "idempotency-key": "k".repeat(258) } });
      if (hasBody(op)) {
        attempts.push({ label: "invalid body", url: request.url, payload: { not_a_field: true } });
        attempts.push({ label: "malformed JSON", url: request.url, payload: "{", headers: { "content-type": "application/json" } });
        attempts.push({ label: "wrong media type", url: request.url, payload: "to=ada@example.com", headers: { "content-type": "application/x-www-form-urlencoded" } });
      }
      expect(attempts.length).toBeGreaterThan(0);
      for (const attempt of attempts) {
        for (const authorization of [undefined, "Bearer not-a-key"]) {
          const res = await t.call({
            method: attempt.method ?? request.method,
            url: attempt.url,
            ...(attempt.payload === undefined ? {} : { payload: attempt.payload }),
            key: null,
            headers: { ...attempt.headers, ...(authorization ? { authorization } : {}) },
          });
          expect(res.statusCode, `${attempt.label} with ${authorization ?? "no key"}`).toBe(401);
          if (attempt.method !== "HEAD") expect(res.json().code).toBe("invalid_api_key");
        }
      }
    });

    if (forPeopleOnly(op)) {
      it("refuses every API key, even full_access, with 403 user_token_required and changes nothing", async () => {
        const before = await snapshot();
        for (const key of [t.workspace.sandboxKey, t.workspace.liveKey]) {
          const res = await t.call({ ...requestFor(op, ids), key });
          expect(res.statusCode, res.body).toBe(403);
          expect(res.json()).toMatchObject({ code: "user_token_required", status: 403 });
        }
        expect(await snapshot()).toEqual(before);
      });
    } else if (neededPermission(op) === "sending_access") {
      it("lets a sending_access key call it", async () => {
        const sending = await createKey({ name: "Sender", permission: "sending_access" });
        const res = await t.call({ ...requestFor(op, ids), key: sending.secret });
        expect(res.statusCode, res.body).toBeLessThan(300);
      });
    } else {
      it("refuses a sending_access key with 403 insufficient_permission and changes nothing", async () => {
        const sending = await createKey({ name: "Sender", permission: "sending_access" });
        const before = await snapshot();
        const res = await t.call({ ...requestFor(op, ids), key: sending.secret });
        expect(res.statusCode, res.body).toBe(403);
        expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
        expect(res.json()).toMatchObject({ code: "insufficient_permission", status: 403, request_id: res.headers["request-id"] });
        expect(await snapshot()).toEqual(before);
      });

      if (hasBody(op)) {
        it("refuses a sending_access key with 403 whatever its body", async () => {
          const sending = await createKey({ name: "Sender", permission: "sending_access" });
          const res = await t.call({ ...requestFor(op, ids), payload: { not_a_field: true }, key: sending.secret });
          expect(res.statusCode, res.body).toBe(403);
          expect(res.json().code).toBe("insufficient_permission");
        });
      }
    }

    if (op.minRole !== "viewer") {
      it("refuses a member whose role is below the operation's x-mailroom-role with 403 insufficient_role", async () => {
        const owner = await signedUp(t, { email: "owner@acme.example" });
        const ownerToken = await owner.session.token(owner.workspaceId);
        const below = ROLES[ROLES.indexOf(op.minRole!) - 1]!;
        const invitation = await t.call({ method: "POST", url: "/v1/invitations", payload: { email: "member@acme.example", role: below }, key: ownerToken });
        const member = await signedUp(t, { email: "member@acme.example", invitation_token: invitation.json().accept_url.split("/").pop() });
        const res = await t.call({ ...requestFor(op, ids), key: await member.session.token(owner.workspaceId) });
        expect(res.statusCode, res.body).toBe(403);
        expect(res.json()).toMatchObject({ code: "insufficient_role", detail: expect.stringContaining(`needs the ${op.minRole} role`) });
      });
    }

    if (/\{\w+\}/.test(op.path) && !forPeopleOnly(op)) {
      it("answers 404 for the same id from another workspace or the other environment, and changes nothing", async () => {
        const request = requestFor(op, ids);
        const before = await snapshot();
        const missing = await t.call({ ...request, url: request.url.replace(/(msg|key|sup|dom|whk|tpl|inb|req)_[0-9a-z]{26}/, "$1_00000000000000000000000000") });
        expect(missing.statusCode).toBe(404);
        const others = [
          ["another workspace", t.other.sandboxKey],
          ["another workspace, live", t.other.liveKey],
          ...(workspaceWide(op) ? [] : [["the live environment", t.workspace.liveKey]]),
        ] as const;
        for (const [label, key] of others) {
          const res = await t.call({ ...request, key });
          expect(res.statusCode, `${label}: ${res.body}`).toBe(404);
          expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
          const body = withoutRequestId(res);
          expect(body, label).toMatchObject({ code: "not_found", status: 404 });
          // Nothing about the resource leaks: the answer is that of an id that never existed.
          expect(Object.keys(body).sort(), label).toEqual(Object.keys(withoutRequestId(missing)).sort());
          expect(JSON.stringify(body)).not.toContain("Acme");
        }
        expect(await snapshot()).toEqual(before);
      });
    }

    if (op.method === "get" && !/\{\w+\}/.test(op.path) && !NOT_LISTS.has(op.path) && !forPeopleOnly(op)) {
      it("never lists another tenant's data", async () => {
        const ours = await t.call({ method: "GET", url: `${op.path}?limit=100` });
        expect(ours.statusCode).toBe(200);
        const ourIds = new Set((ours.json().data as Array<{ id: string }>).map((item) => item.id));
        expect(ourIds.size).toBeGreaterThan(0);
        const others = [
          ["another workspace", t.other.sandboxKey],
          ["another workspace, live", t.other.liveKey],
          ...(workspaceWide(op) ? [] : [["the live environment", t.workspace.liveKey]]),
        ] as const;
        for (const [label, key] of others) {
          const res = await t.call({ method: "GET", url: `${op.path}?limit=100`, key });
          expect(res.statusCode, label).toBe(200);
          const data = res.json().data as Array<{ id: string; message_id?: string; environment?: string }>;
          for (const item of data) {
            expect(ourIds.has(item.id), `${label} sees ${item.id}`).toBe(false);
            if (item.message_id) expect(item.message_id, label).not.toBe(ids.message_id);
          }
          if (label === "the live environment") for (const item of data) expect(item.environment).toBe("live");
        }
      });
    }
  });
});
