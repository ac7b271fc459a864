import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operationsOf } from "../../src/http/bindings.js";
import { loadSpec } from "../../src/http/spec.js";
import { runMaintenance } from "../../src/maintenance.js";
import { ContractChecker } from "../helpers/contract.js";
import { databases } from "../helpers/databases.js";
import { signedUp } from "../helpers/dashboard-session.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

/**
 * Drives every operation of the contract through the real server, successes and failures, and
 * checks each answer against openapi/v1.yaml.
 */
describe("every response honours the contract", () => {
  const checker = new ContractChecker();
  const exercised = new Set<string>();
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp(databases[0]!);
  });
  afterAll(async () => t.close());

  async function expectConforming(operationId: string, method: string, specPath: string, url: string, options: { payload?: unknown; key?: string | null; headers?: Record<string, string>; remoteAddress?: string } = {}) {
    const { payload, ...rest } = options;
    const response = await t.call({ method: method as "GET", url, ...(payload === undefined ? {} : { payload: payload as object }), ...rest });
    exercised.add(operationId);
    expect(checker.check(method, specPath, response.statusCode, response.headers["content-type"] as string | undefined, response.payload), `${method} ${url} -> ${response.statusCode}: ${response.payload.slice(0, 300)}`).toEqual([]);
    expect(response.headers["request-id"]).toMatch(/^req_/);
    return response;
  }

  it("for messages and events", async () => {
    const created = await expectConforming("createMessage", "POST", "/v1/messages", "/v1/messages", { payload: aMessage({ tags: ["welcome"], metadata: { user: "42" }, to: ["ada@example.com", "bounced@simulator.test"] }) });
    const id = created.json().id as string;
    const scheduled = await expectConforming("createMessage", "POST", "/v1/messages", "/v1/messages", { payload: aMessage({ scheduled_at: new Date(t.clock.now() + 3_600_000).toISOString() }) });
    await expectConforming("createMessage", "POST", "/v1/messages", "/v1/messages", { payload: aMessage({ to: "not-an-address", subject: 7 }) });
    await expectConforming("createMessage", "POST", "/v1/messages", "/v1/messages", { payload: aMessage(), key: null });
    await t.drain();
    await expectConforming("getMessage", "GET", "/v1/messages/{message_id}", `/v1/messages/${id}`);
    await expectConforming("getMessage", "GET", "/v1/messages/{message_id}", "/v1/messages/msg_unknown");
    await expectConforming("listMessages", "GET", "/v1/messages", "/v1/messages?limit=1");
    await expectConforming("listMessages", "GET", "/v1/messages", "/v1/messages?limit=1000");
    await expectConforming("listMessageEvents", "GET", "/v1/messages/{message_id}/events", `/v1/messages/${id}/events`);
    await expectConforming("listEvents", "GET", "/v1/events", "/v1/events?type=message.delivered");
    const path = "/v1/messages/{message_id}/reschedule";
    const at = new Date(t.clock.now() + 7_200_000).toISOString();
    await expectConforming("rescheduleMessage", "POST", path, `/v1/messages/${scheduled.json().id}/reschedule`, { payload: { scheduled_at: at } });
    await expectConforming("rescheduleMessage", "POST", path, `/v1/messages/${scheduled.json().id}/reschedule`, { payload: { scheduled_at: "2000-01-01T00:00:00Z" } });
    await expectConforming("rescheduleMessage", "POST", path, `/v1/messages/${id}/reschedule`, { payload: { scheduled_at: null } });
    await expectConforming("rescheduleMessage", "POST", path, "/v1/messages/msg_unknown/reschedule", { payload: { scheduled_at: null } });
    await expectConforming("cancelMessage", "POST", "/v1/messages/{message_id}/cancel", `/v1/messages/${scheduled.json().id}/cancel`);
    await expectConforming("cancelMessage", "POST", "/v1/messages/{message_id}/cancel", `/v1/messages/${id}/cancel`);
    await expectConforming("previewMessage", "POST", "/v1/messages/preview", "/v1/messages/preview", { payload: aMessage({ to: ["ada@example.com", "bounced@simulator.test"], cc: "Grace <grace@example.com>", attachments: [{ filename: "a.txt", content: "aGk=" }] }) });
    await expectConforming("previewMessage", "POST", "/v1/messages/preview", "/v1/messages/preview", { payload: aMessage({ to: "not-an-address" }) });
  });

  it("for batches: accepted, refused per message, and refused whole", async () => {
    await expectConforming("createMessageBatch", "POST", "/v1/messages/batch", "/v1/messages/batch", { payload: { validation: "strict", messages: [aMessage(), aMessage({ to: "nobody" })] } });
    await expectConforming("createMessageBatch", "POST", "/v1/messages/batch", "/v1/messages/batch", {
      payload: { messages: [aMessage(), aMessage({ to: "not-an-address" }), { to: 7 }] },
      headers: { "idempotency-key": "contract-batch" },
    });
    await expectConforming("createMessageBatch", "POST", "/v1/messages/batch", "/v1/messages/batch", { payload: { messages: [aMessage()] }, headers: { "idempotency-key": "contract-batch" } });
    await expectConforming("createMessageBatch", "POST", "/v1/messages/batch", "/v1/messages/batch", { payload: { messages: [] } });
    await t.verifiedDomain("acme.example");
    await t.call({ method: "PATCH", url: "/v1/workspace", payload: { monthly_quota: 1 } });
    await expectConforming("createMessageBatch", "POST", "/v1/messages/batch", "/v1/messages/batch", { payload: { messages: [aMessage(), aMessage(), aMessage({ from: "x@unverified.example" })] }, key: t.workspace.liveKey });
  });

  it("for domains, suppressions and usage", async () => {
    const domain = await expectConforming("createDomain", "POST", "/v1/domains", "/v1/domains", { payload: { name: "acme.example" } });
    await expectConforming("createDomain", "POST", "/v1/domains", "/v1/domains", { payload: { name: "acme.example" } });
    await expectConforming("createDomain", "POST", "/v1/domains", "/v1/domains", { payload: { name: "acme" } });
    const domainId = domain.json().id as string;
    await expectConforming("listDomains", "GET", "/v1/domains", "/v1/domains?limit=1");
    await expectConforming("getDomain", "GET", "/v1/domains/{domain_id}", `/v1/domains/${domainId}`);
    await expectConforming("updateDomain", "PATCH", "/v1/domains/{domain_id}", `/v1/domains/${domainId}`, { payload: { track_clicks: true, tracking_domain: "track.acme.example" } });
    await expectConforming("updateDomain", "PATCH", "/v1/domains/{domain_id}", `/v1/domains/${domainId}`, { payload: { tracking_domain: "elsewhere.example" } });
    await expectConforming("updateDomain", "PATCH", "/v1/domains/{domain_id}", "/v1/domains/dom_unknown", { payload: { track_opens: null } });
    await expectConforming("verifyDomain", "POST", "/v1/domains/{domain_id}/verify", "/v1/domains/dom_unknown/verify");
    await expectConforming("rotateDomainDkim", "POST", "/v1/domains/{domain_id}/rotate-dkim", `/v1/domains/${domainId}/rotate-dkim`); // 409: pending
    await expectConforming("rotateDomainDkim", "POST", "/v1/domains/{domain_id}/rotate-dkim", "/v1/domains/dom_unknown/rotate-dkim");
    await t.verifiedDomain("verified.example");
    const verified = (await t.call({ method: "GET", url: "/v1/domains?limit=100" })).json().data.find((d: { name: string }) => d.name === "verified.example").id as string;
    const rotating = await expectConforming("rotateDomainDkim", "POST", "/v1/domains/{domain_id}/rotate-dkim", `/v1/domains/${verified}/rotate-dkim`);
    expect(rotating.statusCode).toBe(200);
    await expectConforming("deleteDomain", "DELETE", "/v1/domains/{domain_id}", `/v1/domains/${domainId}`);
    await expectConforming("deleteDomain", "DELETE", "/v1/domains/{domain_id}", `/v1/domains/${domainId}`);
    const suppression = await expectConforming("createSuppression", "POST", "/v1/suppressions", "/v1/suppressions", { payload: { email: "ada@example.com", detail: "asked" } });
    await expectConforming("createSuppression", "POST", "/v1/suppressions", "/v1/suppressions", { payload: { email: "ADA@example.com" } });
    await expectConforming("createSuppression", "POST", "/v1/suppressions", "/v1/suppressions", { payload: { email: "ada@" } });
    const batchPath = "/v1/suppressions/batch";
    await expectConforming("createSuppressionBatch", "POST", batchPath, batchPath, { payload: { suppressions: [{ email: "ada@example.com" }, { email: "grace@example.com" }, { email: "bob@" }, { reason: "manual" }] } });
    await expectConforming("createSuppressionBatch", "POST", batchPath, batchPath, { payload: { suppressions: [] } });
    const suppressionId = suppression.json().id as string;
    await expectConforming("listSuppressions", "GET", "/v1/suppressions", "/v1/suppressions?reason=manual&email=ada@example.com");
    await expectConforming("getSuppression", "GET", "/v1/suppressions/{suppression_id}", `/v1/suppressions/${suppressionId}`);
    await expectConforming("deleteSuppression", "DELETE", "/v1/suppressions/{suppression_id}", `/v1/suppressions/${suppressionId}`);
    await expectConforming("deleteSuppression", "DELETE", "/v1/suppressions/{suppression_id}", `/v1/suppressions/${suppressionId}`);
    await expectConforming("updateWorkspace", "PATCH", "/v1/workspace", "/v1/workspace", { payload: { monthly_quota: 1000 } });
    await expectConforming("getUsage", "GET", "/v1/usage", "/v1/usage");
    await expectConforming("getUsage", "GET", "/v1/usage", "/v1/usage?from=2026-11-02&to=2026-11-01");
    await expectConforming("getMetrics", "GET", "/v1/metrics", "/v1/metrics?granularity=hour");
    await expectConforming("getMetrics", "GET", "/v1/metrics", "/v1/metrics?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z");
    await expectConforming("getMetrics", "GET", "/v1/metrics", "/v1/metrics?granularity=week");
  });

  it("for webhooks", async () => {
    const created = await expectConforming("createWebhook", "POST", "/v1/webhooks", "/v1/webhooks", { payload: { url: "https://hooks.example/mailroom", event_types: ["message.delivered"] } });
    await expectConforming("createWebhook", "POST", "/v1/webhooks", "/v1/webhooks", { payload: { url: "ftp://hooks.example/mailroom" } });
    const id = created.json().id as string;
    await expectConforming("listWebhooks", "GET", "/v1/webhooks", "/v1/webhooks?limit=1");
    await expectConforming("getWebhook", "GET", "/v1/webhooks/{webhook_id}", `/v1/webhooks/${id}`);
    await expectConforming("getWebhook", "GET", "/v1/webhooks/{webhook_id}", "/v1/webhooks/whk_unknown");
    await expectConforming("updateWebhook", "PATCH", "/v1/webhooks/{webhook_id}", `/v1/webhooks/${id}`, { payload: { enabled: false, description: null } });
    await expectConforming("getWebhookSecret", "GET", "/v1/webhooks/{webhook_id}/secret", `/v1/webhooks/${id}/secret`);
    await expectConforming("rotateWebhookSecret", "POST", "/v1/webhooks/{webhook_id}/rotate-secret", `/v1/webhooks/${id}/rotate-secret`, { payload: { overlap_seconds: 60 } });
    await expectConforming("getWebhookSecret", "GET", "/v1/webhooks/{webhook_id}/secret", `/v1/webhooks/${id}/secret`);
    const delivery = await expectConforming("testWebhook", "POST", "/v1/webhooks/{webhook_id}/test", `/v1/webhooks/${id}/test`, { payload: { type: "message.opened" } });
    await expectConforming("redeliverWebhookEvent", "POST", "/v1/webhooks/{webhook_id}/redeliver", `/v1/webhooks/${id}/redeliver`, { payload: { event_id: delivery.json().event_id } });
    await expectConforming("redeliverWebhookEvent", "POST", "/v1/webhooks/{webhook_id}/redeliver", `/v1/webhooks/${id}/redeliver`, { payload: { event_id: "evt_unknown" } });
    await expectConforming("replayWebhookEvents", "POST", "/v1/webhooks/{webhook_id}/replay", `/v1/webhooks/${id}/replay`, { payload: { since: "2026-11-21T00:00:00Z" } });
    await expectConforming("listWebhookAttempts", "GET", "/v1/webhooks/{webhook_id}/attempts", `/v1/webhooks/${id}/attempts?status=failed`);
    await expectConforming("deleteWebhook", "DELETE", "/v1/webhooks/{webhook_id}", `/v1/webhooks/${id}`);
    await expectConforming("deleteWebhook", "DELETE", "/v1/webhooks/{webhook_id}", `/v1/webhooks/${id}`);
  });

  it("for templates, and messages sent with one", async () => {
    const body = { slug: "welcome", name: "Welcome", subject: "Hi {{ name }}", html: "<p>Hi {{ name }}</p>", variables: [{ name: "name", type: "string", required: true }] };
    const created = await expectConforming("createTemplate", "POST", "/v1/templates", "/v1/templates", { payload: body });
    await expectConforming("createTemplate", "POST", "/v1/templates", "/v1/templates", { payload: body });
    await expectConforming("createTemplate", "POST", "/v1/templates", "/v1/templates", { payload: { ...body, slug: "broken", html: "{% if %}" } });
    const id = created.json().id as string;
    await expectConforming("listTemplates", "GET", "/v1/templates", "/v1/templates?limit=1");
    await expectConforming("getTemplate", "GET", "/v1/templates/{template}", "/v1/templates/welcome");
    await expectConforming("getTemplate", "GET", "/v1/templates/{template}", "/v1/templates/nope");
    await expectConforming("publishTemplate", "POST", "/v1/templates/{template}/publish", "/v1/templates/welcome/publish");
    await expectConforming("publishTemplate", "POST", "/v1/templates/{template}/publish", "/v1/templates/welcome/publish");
    await expectConforming("updateTemplate", "PATCH", "/v1/templates/{template}", `/v1/templates/${id}`, { payload: { subject: "Hello {{ name }}", text: null } });
    await expectConforming("updateTemplate", "PATCH", "/v1/templates/{template}", `/v1/templates/${id}`, { payload: { slug: "hello" } });
    await expectConforming("listTemplateVersions", "GET", "/v1/templates/{template}/versions", "/v1/templates/welcome/versions?limit=1");
    await expectConforming("getTemplateVersion", "GET", "/v1/templates/{template}/versions/{version}", "/v1/templates/welcome/versions/2");
    await expectConforming("getTemplateVersion", "GET", "/v1/templates/{template}/versions/{version}", "/v1/templates/welcome/versions/9");
    await expectConforming("renderTemplate", "POST", "/v1/templates/{template}/render", "/v1/templates/welcome/render", { payload: { version: "draft", variables: { name: "Ada" } } });
    await expectConforming("renderTemplate", "POST", "/v1/templates/{template}/render", "/v1/templates/welcome/render", { payload: { variables: { name: 7, extra: true } } });
    const sent = await expectConforming("createMessage", "POST", "/v1/messages", "/v1/messages", { payload: { ...aMessage({ subject: undefined, html: undefined }), template: { slug: "welcome", variables: { name: "Ada" } } } });
    await expectConforming("getMessage", "GET", "/v1/messages/{message_id}", `/v1/messages/${sent.json().id}`);
    await expectConforming("listMessages", "GET", "/v1/messages", "/v1/messages?template=welcome");
    await expectConforming("createMessage", "POST", "/v1/messages", "/v1/messages", {
      payload: { ...aMessage({ subject: undefined, html: undefined }), template: { slug: "welcome", variables: { name: "Ada" } }, scheduled_at: new Date(t.clock.now() + 3_600_000).toISOString() },
    });
    await expectConforming("deleteTemplate", "DELETE", "/v1/templates/{template}", "/v1/templates/welcome");
    await expectConforming("createTemplate", "POST", "/v1/templates", "/v1/templates", { payload: { ...body, slug: "bye" } });
    await expectConforming("deleteTemplate", "DELETE", "/v1/templates/{template}", "/v1/templates/bye");
    await expectConforming("deleteTemplate", "DELETE", "/v1/templates/{template}", "/v1/templates/nope");
  });

  it("for API keys and the workspace", async () => {
    const created = await expectConforming("createApiKey", "POST", "/v1/api-keys", "/v1/api-keys", { payload: { name: "CI", permission: "sending_access" }, headers: { "idempotency-key": "contract-1" } });
    await expectConforming("createApiKey", "POST", "/v1/api-keys", "/v1/api-keys", { payload: { name: "CI", permission: "sending_access" }, headers: { "idempotency-key": "contract-1" } });
    await expectConforming("createApiKey", "POST", "/v1/api-keys", "/v1/api-keys", { payload: { name: "CI", permission: "everything" }, headers: { "idempotency-key": "contract-1" } });
    const keyId = created.json().id as string;
    await expectConforming("getWorkspace", "GET", "/v1/workspace", "/v1/workspace", { key: created.json().secret as string });
    await expectConforming("listApiKeys", "GET", "/v1/api-keys", "/v1/api-keys");
    await expectConforming("getApiKey", "GET", "/v1/api-keys/{api_key_id}", `/v1/api-keys/${keyId}`);
    await expectConforming("updateApiKey", "PATCH", "/v1/api-keys/{api_key_id}", `/v1/api-keys/${keyId}`, { payload: { restrictions: { sender_domains: ["acme.example"], allowed_ips: ["127.0.0.1"] } } });
    await expectConforming("updateApiKey", "PATCH", "/v1/api-keys/{api_key_id}", `/v1/api-keys/${keyId}`, { payload: { restrictions: { allowed_ips: ["nowhere"] } } });
    const restricted = { key: created.json().secret as string };
    await expectConforming("createMessage", "POST", "/v1/messages", "/v1/messages", { ...restricted, payload: aMessage({ from: "hello@other.example" }) });
    await expectConforming("createMessageBatch", "POST", "/v1/messages/batch", "/v1/messages/batch", { ...restricted, payload: { messages: [aMessage({ from: "hello@acme.example" }), aMessage({ from: "hello@other.example" })] } });
    await expectConforming("getWorkspace", "GET", "/v1/workspace", "/v1/workspace", { ...restricted, remoteAddress: "203.0.113.9" });
    await expectConforming("rotateApiKey", "POST", "/v1/api-keys/{api_key_id}/rotate", `/v1/api-keys/${keyId}/rotate`, { payload: { overlap_seconds: 0 } });
    await expectConforming("revokeApiKey", "DELETE", "/v1/api-keys/{api_key_id}", `/v1/api-keys/${keyId}`);
    await expectConforming("rotateApiKey", "POST", "/v1/api-keys/{api_key_id}/rotate", `/v1/api-keys/${keyId}/rotate`);
    await expectConforming("updateApiKey", "PATCH", "/v1/api-keys/{api_key_id}", `/v1/api-keys/${keyId}`, { payload: { name: "Gone" } });
    await expectConforming("getWorkspace", "GET", "/v1/workspace", "/v1/workspace");
    await expectConforming("updateWorkspace", "PATCH", "/v1/workspace", "/v1/workspace", { payload: { default_from: "Acme <hello@acme.example>" } });
    await expectConforming("updateWorkspace", "PATCH", "/v1/workspace", "/v1/workspace", { payload: {} });
    const audit = await expectConforming("listAuditEvents", "GET", "/v1/audit-events", "/v1/audit-events?limit=2");
    expect(audit.json().data).toHaveLength(2);
    await expectConforming("listAuditEvents", "GET", "/v1/audit-events", "/v1/audit-events?created_after=yesterday");
    await t.runtime.services.requestLogs.flush();
    const requests = await expectConforming("listRequestLogs", "GET", "/v1/request-logs", "/v1/request-logs?limit=2&status=2xx");
    expect(requests.json().data).toHaveLength(2);
    await expectConforming("listRequestLogs", "GET", "/v1/request-logs", "/v1/request-logs?status=4x");
    const failed = (await t.call({ method: "GET", url: "/v1/messages/msg_nothing" })).headers["request-id"] as string;
    await t.runtime.services.requestLogs.flush();
    await expectConforming("getRequestLog", "GET", "/v1/request-logs/{request_id}", `/v1/request-logs/${failed}`);
    await expectConforming("getRequestLog", "GET", "/v1/request-logs/{request_id}", "/v1/request-logs/req_nothing");
  });

  it("for accounts, members and invitations", async () => {
    const owner = await signedUp(t, { email: "ada@acme.example", workspace_name: "Acme" });
    const key = await owner.session.token(owner.workspaceId);
    await expectConforming("getAccount", "GET", "/v1/account", "/v1/account", { key });
    await expectConforming("getAccount", "GET", "/v1/account", "/v1/account");
    await expectConforming("updateAccount", "PATCH", "/v1/account", "/v1/account", { key, payload: { name: "Ada Lovelace" } });
    await expectConforming("updateAccount", "PATCH", "/v1/account", "/v1/account", { key, payload: { name: 7 } });
    await expectConforming("createWorkspace", "POST", "/v1/workspaces", "/v1/workspaces", { key, payload: { name: "Staging" } });
    await expectConforming("createWorkspace", "POST", "/v1/workspaces", "/v1/workspaces", { key, payload: { name: "" } });
    const invitation = await expectConforming("createInvitation", "POST", "/v1/invitations", "/v1/invitations", { key, payload: { email: "grace@acme.example", role: "admin" } });
    await expectConforming("createInvitation", "POST", "/v1/invitations", "/v1/invitations", { key, payload: { email: "ada@acme.example" } });
    await expectConforming("listInvitations", "GET", "/v1/invitations", "/v1/invitations", { key });
    const grace = await signedUp(t, { email: "grace@acme.example", invitation_token: invitation.json().accept_url.split("/").pop() });
    await expectConforming("listMembers", "GET", "/v1/members", "/v1/members?limit=1", { key });
    await expectConforming("updateMember", "PATCH", "/v1/members/{user_id}", `/v1/members/${grace.userId}`, { key, payload: { role: "viewer" } });
    await expectConforming("updateMember", "PATCH", "/v1/members/{user_id}", `/v1/members/${owner.userId}`, { key, payload: { role: "viewer" } });
    await expectConforming("removeMember", "DELETE", "/v1/members/{user_id}", `/v1/members/${grace.userId}`, { key });
    await expectConforming("removeMember", "DELETE", "/v1/members/{user_id}", `/v1/members/${grace.userId}`, { key });
    const pending = await expectConforming("createInvitation", "POST", "/v1/invitations", "/v1/invitations", { key, payload: { email: "alan@acme.example" } });
    await expectConforming("revokeInvitation", "DELETE", "/v1/invitations/{invitation_id}", `/v1/invitations/${pending.json().id}`, { key });
    await expectConforming("revokeInvitation", "DELETE", "/v1/invitations/{invitation_id}", `/v1/invitations/${pending.json().id}`, { key });
    await expectConforming("leaveWorkspace", "POST", "/v1/workspace/leave", "/v1/workspace/leave", { key });
    await expectConforming("leaveWorkspace", "POST", "/v1/workspace/leave", "/v1/workspace/leave");
    const leaving = await expectConforming("createInvitation", "POST", "/v1/invitations", "/v1/invitations", { key, payload: { email: "barbara@acme.example", role: "viewer" } });
    const barbara = await signedUp(t, { email: "barbara@acme.example", invitation_token: leaving.json().accept_url.split("/").pop() });
    const left = await expectConforming("leaveWorkspace", "POST", "/v1/workspace/leave", "/v1/workspace/leave", { key: await barbara.session.token(owner.workspaceId) });
    expect(left.statusCode).toBe(200);
  });

  it("for a body too large or not JSON, sent to every operation that reads one, with or without a declared body", async () => {
    // Fastify parses any request body of these methods before a handler runs, so an operation
    // that takes none (cancelMessage, removeMember) still answers 413 and 415, and must say so.
    const small = await createTestApp(databases[0]!, { BODY_LIMIT_BYTES: "1024" });
    try {
      const owner = await signedUp(small, { email: "ada@acme.example", workspace_name: "Acme" });
      const key = await owner.session.token(owner.workspaceId);
      const bodies = [
        { status: 413, payload: JSON.stringify({ name: "x".repeat(2048) }), contentType: "application/json" },
        { status: 415, payload: "name=x", contentType: "text/plain" },
      ];
      for (const op of operationsOf(loadSpec()).filter((o) => o.method !== "get")) {
        const url = op.path.replace(/\{[a-z_]+\}/g, "unknown");
        for (const { status, payload, contentType } of bodies) {
          const res = await small.call({ method: op.method.toUpperCase() as "POST", url, key, payload, headers: { "content-type": contentType } });
          const problems = checker.check(op.method, op.path, res.statusCode, res.headers["content-type"] as string | undefined, res.payload);
          expect({ status: res.statusCode, problems }, `${op.operationId} with ${contentType}: ${res.payload.slice(0, 200)}`).toEqual({ status, problems: [] });
        }
      }
    } finally {
      await small.close();
    }
  });

  it("for inbound replies", async () => {
    const sent = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage() });
    const id = sent.json().id as string;
    const reply = await t.runtime.services.inbound.recordReply(
      id,
      { from: "Ada <ada@example.com>", fromAddress: "ada@example.com", to: ["reply@bounces.acme.example"], subject: "Re: Welcome", text: "Thanks", quotedText: "> Hello", html: null, messageIdHeader: "<r1@example.com>", inReplyTo: null, authentication: { spf: "pass", dkim: "none", dmarc: "none" }, attachments: [{ filename: "a.txt", content_type: "text/plain", content_id: null, content: Buffer.from("a") }], receivedAt: t.clock.now() },
      "reply_address",
    );
    const inboundId = reply.stored ? reply.inboundId : "inb_missing";
    await expectConforming("listMessageReplies", "GET", "/v1/messages/{message_id}/replies", `/v1/messages/${id}/replies`);
    await expectConforming("listMessageReplies", "GET", "/v1/messages/{message_id}/replies", "/v1/messages/msg_unknown/replies");
    await expectConforming("getInboundMessage", "GET", "/v1/inbound/{inbound_id}", `/v1/inbound/${inboundId}`);
    await expectConforming("getInboundMessage", "GET", "/v1/inbound/{inbound_id}", "/v1/inbound/inb_unknown");
    await expectConforming("getInboundAttachment", "GET", "/v1/inbound/{inbound_id}/attachments/{attachment_index}", `/v1/inbound/${inboundId}/attachments/0`);
    await expectConforming("getInboundAttachment", "GET", "/v1/inbound/{inbound_id}/attachments/{attachment_index}", `/v1/inbound/${inboundId}/attachments/1`);
    // Once content retention has removed the reply's content, its attachment is 410 content_removed.
    await t.call({ method: "PATCH", url: "/v1/workspace", payload: { content_retention_days: 1 } });
    t.clock.advance(2 * 86_400_000);
    await runMaintenance(t.runtime, { info() {}, warn() {}, error: (obj, msg) => expect.fail(`${msg}: ${JSON.stringify(obj)}`) });
    const removed = await expectConforming("getInboundAttachment", "GET", "/v1/inbound/{inbound_id}/attachments/{attachment_index}", `/v1/inbound/${inboundId}/attachments/0`);
    expect(removed.statusCode).toBe(410);
    await expectConforming("getInboundMessage", "GET", "/v1/inbound/{inbound_id}", `/v1/inbound/${inboundId}`);
    await t.call({ method: "PATCH", url: "/v1/workspace", payload: { content_retention_days: null } });
  });

  it("for the probes", async () => {
    await expectConforming("getHealth", "GET", "/health", "/health", { key: null });
    await expectConforming("getReadiness", "GET", "/ready", "/ready", { key: null });
    t.lifecycle.ready = false;
    await expectConforming("getReadiness", "GET", "/ready", "/ready", { key: null });
    t.lifecycle.ready = true;
  });

  it("and no operation of the contract was left out", () => {
    expect([...exercised].sort()).toEqual(operationsOf(loadSpec()).map((op) => op.operationId).sort());
  });
});
