import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPrism, type PrismMock } from "../../test/helpers/prism.js";
import { Mailroom, UnprocessableEntityError } from "../src/index.js";

/**
 * Every SDK method against Prism's mock of openapi/v1.yaml. Prism validates each request against
 * the contract (a wrong path, method, parameter or body is a 4xx) and answers the documented
 * example or a response generated from the schema, so a pass means the SDK and the contract agree.
 */
describe("the SDK against the contract's mock", () => {
  let prism: PrismMock;
  let mr: Mailroom;
  // Path parameters shaped like real ids (the contract documents msg_/key_ + 26 characters).
  const MESSAGE_ID = "msg_01jd3k8m2q5v7w9x1y3z5a7b9c";
  const API_KEY_ID = "key_01jd3k8m2q5v7w9x1y3z5a7b9c";
  const DOMAIN_ID = "dom_01jd3k8m2q5v7w9x1y3z5a7b9c";
  const SUPPRESSION_ID = "sup_01jd3k8m2q5v7w9x1y3z5a7b9c";
  const TEMPLATE_ID = "tpl_01jd3k8m2q5v7w9x1y3z5a7b9c";
  const INBOUND_ID = "inb_01jd3k8m2q5v7w9x1y3z5a7b9c";

  beforeAll(async () => {
    prism = await startPrism();
    // Prism only checks that a bearer credential is present. No retries: a 5xx here is a finding.
    mr = new Mailroom({ apiKey: "svc_test_mock", baseUrl: prism.baseUrl, maxRetries: 0 });
  });
  afterAll(() => prism?.stop());

  /** A list answer: a non-empty page of `object`s (Prism generates one item from the schema). */
  const expectPageOf = (page: { data: Array<{ object: string }>; has_more: boolean }, object: string) => {
    expect(page.data.length).toBeGreaterThan(0);
    for (const item of page.data) expect(item.object).toBe(object);
    expect(page.has_more).toEqual(expect.any(Boolean));
  };

  describe("Messages", () => {
    it("create sends a message the contract accepts and returns the documented message", async () => {
      const message = await mr.messages.create({ to: "ada@example.com", subject: "Welcome to Acme", html: "<p>Hello Ada</p>" });
      expect(message).toMatchObject({ id: expect.stringMatching(/^msg_[0-9a-z]{26}$/), object: "message", status: "queued", recipients: [{ email: "ada@example.com" }] });
    });

    it("create sends every optional field in the shape the contract declares", async () => {
      const message = await mr.messages.create({
        from: "Acme <hello@acme.example>",
        to: ["ada@example.com", "Grace Hopper <grace@example.com>"],
        cc: "ops@acme.example",
        bcc: ["audit@acme.example"],
        reply_to: "support@acme.example",
        subject: "Your receipt",
        html: "<p>Thanks for your order.</p>",
        text: "Thanks for your order.",
        headers: { "X-Entity-Ref-ID": "order-1234" },
        attachments: [{ filename: "receipt.txt", content: "VGhhbmsgeW91IQ==", content_type: "text/plain" }],
        tags: ["receipt"],
        metadata: { order_id: "1234" },
        scheduled_at: "2026-12-01T09:00:00Z",
      });
      expect(message.object).toBe("message");
    });

    it("list returns a page of message summaries", async () => {
      const page = await mr.messages.list({ limit: 10, status: "delivered", recipient: "ada@example.com", tag: "receipt", created_after: "2026-11-01T00:00:00Z" });
      expectPageOf(page, "message");
    });

    it("get returns the documented message", async () => {
      await expect(mr.messages.get(MESSAGE_ID)).resolves.toMatchObject({ id: expect.stringMatching(/^msg_/), object: "message", recipients: expect.any(Array) });
    });

    it("cancel returns a message", async () => {
      await expect(mr.messages.cancel(MESSAGE_ID)).resolves.toMatchObject({ object: "message" });
    });

    it("reschedule sends a time or null and returns a message", async () => {
      await expect(mr.messages.reschedule(MESSAGE_ID, { scheduled_at: "2026-11-23T09:00:00Z" })).resolves.toMatchObject({ object: "message" });
      await expect(mr.messages.reschedule(MESSAGE_ID, { scheduled_at: null })).resolves.toMatchObject({ object: "message" });
    });

    it("create sends the tracking options the contract declares", async () => {
      const message = await mr.messages.create({ to: "ada@example.com", subject: "Hi", html: "<p>Hi</p>", track_opens: true, track_clicks: true, track_replies: true, unsubscribe: true });
      expect(message).toMatchObject({ object: "message", tracking: expect.any(Object) });
    });

    it("listReplies returns a page of inbound messages", async () => {
      const page = await mr.messages.listReplies(MESSAGE_ID, { limit: 5 });
      expectPageOf(page, "inbound_message");
    });

    it("listEvents returns a page of events", async () => {
      const page = await mr.messages.listEvents(MESSAGE_ID, { limit: 5 });
      expectPageOf(page, "event");
    });

    it("createBatch sends messages the contract accepts and returns one answer per message", async () => {
      const batch = await mr.messages.createBatch({
        messages: [
          { to: "ada@example.com", subject: "Your receipt", html: "<p>Thanks, Ada</p>", expires_at: "2026-12-01T09:00:00Z" },
          { to: "grace@example.com", subject: "Your receipt", html: "<p>Thanks, Grace</p>" },
        ],
      });
      expect(batch.object).toBe("batch");
      for (const item of batch.data) expect([202, 422, 429]).toContain(item.status);
    });

    it("the mock refuses what the contract refuses, with the typed error", async () => {
      // @ts-expect-error `to` is required: proving that the mock, too, enforces the contract.
      await expect(mr.messages.create({ subject: "no recipient", html: "<p>Hi</p>" })).rejects.toBeInstanceOf(UnprocessableEntityError);
    });
  });

  describe("Events", () => {
    it("list returns a page of events", async () => {
      const page = await mr.events.list({ type: "message.delivered", limit: 5 });
      expectPageOf(page, "event");
    });
  });

  describe("ApiKeys", () => {
    it("create returns the key with its secret", async () => {
      const key = await mr.apiKeys.create({ name: "Production web app", permission: "sending_access" });
      expect(key).toMatchObject({ object: "api_key", secret: expect.any(String), permission: expect.stringMatching(/^(full_access|sending_access)$/) });
    });

    it("list returns a page of keys", async () => {
      const page = await mr.apiKeys.list({ limit: 5 });
      expectPageOf(page, "api_key");
    });

    it("get returns a key", async () => {
      await expect(mr.apiKeys.get(API_KEY_ID)).resolves.toMatchObject({ object: "api_key" });
    });

    it("revoke returns the key", async () => {
      await expect(mr.apiKeys.revoke(API_KEY_ID)).resolves.toMatchObject({ object: "api_key" });
    });

    it("rotate returns the key with a new secret, with or without an overlap", async () => {
      await expect(mr.apiKeys.rotate(API_KEY_ID, { overlap_seconds: 3600 })).resolves.toMatchObject({ object: "api_key", secret: expect.any(String) });
      await expect(mr.apiKeys.rotate(API_KEY_ID)).resolves.toMatchObject({ object: "api_key", secret: expect.any(String) });
    });
  });

  describe("Workspace", () => {
    it("get returns the workspace", async () => {
      await expect(mr.workspace.get()).resolves.toMatchObject({ object: "workspace", environment: expect.stringMatching(/^(live|sandbox)$/) });
    });

    it("update returns the workspace", async () => {
      await expect(mr.workspace.update({ default_from: "Acme <hello@acme.example>" })).resolves.toMatchObject({ object: "workspace" });
      await expect(mr.workspace.update({ default_from: null })).resolves.toMatchObject({ object: "workspace" });
      await expect(mr.workspace.update({ monthly_quota: 50_000 })).resolves.toMatchObject({ object: "workspace" });
      await expect(mr.workspace.update({ monthly_quota: null })).resolves.toMatchObject({ object: "workspace" });
      await expect(mr.workspace.update({ tracking: { opens: true, unsubscribe: false } })).resolves.toMatchObject({ object: "workspace", tracking: expect.any(Object) });
    });
  });

  describe("Inbound", () => {
    it("get returns the documented reply", async () => {
      await expect(mr.inbound.get(INBOUND_ID)).resolves.toMatchObject({ object: "inbound_message", authentication: expect.any(Object) });
    });

    it("getAttachment returns bytes", async () => {
      await expect(mr.inbound.getAttachment(INBOUND_ID, 0)).resolves.toBeInstanceOf(Uint8Array);
    });
  });

  describe("Domains", () => {
    it("create returns the domain with the DNS records to publish", async () => {
      const domain = await mr.domains.create({ name: "acme.example", return_path_subdomain: "bounces" });
      expect(domain).toMatchObject({ object: "domain", records: expect.any(Array) });
      expect(domain.records.length).toBeGreaterThan(0);
    });

    it("list returns a page of domains", async () => {
      const page = await mr.domains.list({ limit: 5 });
      expect(page.data).toEqual(expect.any(Array));
      expect(page.has_more).toEqual(expect.any(Boolean));
    });

    it("get and verify return the domain", async () => {
      await expect(mr.domains.get(DOMAIN_ID)).resolves.toMatchObject({ object: "domain" });
      await expect(mr.domains.verify(DOMAIN_ID)).resolves.toMatchObject({ object: "domain" });
    });

    it("update sends tracking settings the contract accepts, nulls included, and returns the domain", async () => {
      await expect(mr.domains.update(DOMAIN_ID, { track_opens: true, track_clicks: false, tracking_domain: "track.acme.example" })).resolves.toMatchObject({ object: "domain" });
      await expect(mr.domains.update(DOMAIN_ID, { track_opens: null, tracking_domain: null })).resolves.toMatchObject({ object: "domain" });
    });

    it("delete returns the deleted object", async () => {
      await expect(mr.domains.delete(DOMAIN_ID)).resolves.toMatchObject({ deleted: true });
    });
  });

  describe("Suppressions", () => {
    it("list returns a page of suppressions, with or without filters", async () => {
      const page = await mr.suppressions.list({ reason: "hard_bounce", email: "gone@example.com", limit: 5 });
      expect(page.data).toEqual(expect.any(Array));
    });

    it("create returns the suppression", async () => {
      await expect(mr.suppressions.create({ email: "ada@example.com", reason: "unsubscribe", detail: "Clicked unsubscribe" })).resolves.toMatchObject({ object: "suppression" });
    });

    it("createBatch sends addresses the contract accepts and returns one answer per address", async () => {
      const batch = await mr.suppressions.createBatch({
        suppressions: [{ email: "ada@example.com" }, { email: "grace@example.com", reason: "unsubscribe", detail: "Imported from the old provider" }],
      });
      expect(batch.object).toBe("batch");
      for (const item of batch.data) expect([200, 201, 422]).toContain(item.status);
    });

    it("get returns the suppression and delete the deleted object", async () => {
      await expect(mr.suppressions.get(SUPPRESSION_ID)).resolves.toMatchObject({ object: "suppression" });
      await expect(mr.suppressions.delete(SUPPRESSION_ID)).resolves.toMatchObject({ deleted: true });
    });
  });

  describe("Templates", () => {
    it("create returns the template, with declared variables and publish", async () => {
      const template = await mr.templates.create({
        slug: "welcome",
        name: "Welcome",
        subject: "Welcome, {{ first_name }}",
        html: "<p>Hello {{ first_name }}</p>",
        text: "Hello {{ first_name }}",
        variables: [{ name: "first_name", type: "string", required: true, description: "The first name" }],
        publish: true,
      });
      expect(template).toMatchObject({ object: "template", slug: expect.any(String) });
    });

    it("list returns a page of templates", async () => {
      const page = await mr.templates.list({ limit: 5 });
      expect(page.data).toEqual(expect.any(Array));
      expect(page.has_more).toEqual(expect.any(Boolean));
    });

    it("get and update return the template, by slug or id", async () => {
      await expect(mr.templates.get("welcome")).resolves.toMatchObject({ object: "template" });
      await expect(mr.templates.get(TEMPLATE_ID)).resolves.toMatchObject({ object: "template" });
      await expect(mr.templates.update("welcome", { subject: "Hi {{ first_name }}", text: null })).resolves.toMatchObject({ object: "template" });
    });

    it("publish returns the template, for the draft or a rollback", async () => {
      await expect(mr.templates.publish("welcome")).resolves.toMatchObject({ object: "template" });
      await expect(mr.templates.publish("welcome", { version: 2 })).resolves.toMatchObject({ object: "template" });
    });

    it("listVersions returns a page of versions and getVersion one version", async () => {
      expectPageOf(await mr.templates.listVersions("welcome", { limit: 5 }), "template_version");
      await expect(mr.templates.getVersion("welcome", 1)).resolves.toMatchObject({ object: "template_version" });
    });

    it("render returns the rendered content, for a number, the draft or the default", async () => {
      await expect(mr.templates.render("welcome", { version: "draft", variables: { first_name: "Ada", order: { id: 7 } } })).resolves.toMatchObject({ object: "rendered_template" });
      await expect(mr.templates.render("welcome", { version: 1 })).resolves.toMatchObject({ object: "rendered_template" });
      await expect(mr.templates.render("welcome")).resolves.toMatchObject({ object: "rendered_template" });
    });

    it("delete returns the deleted object", async () => {
      await expect(mr.templates.delete("welcome")).resolves.toMatchObject({ deleted: true });
    });

    it("messages.create sends a template in the shape the contract declares", async () => {
      await expect(mr.messages.create({ to: "ada@example.com", template: { slug: "welcome", version: 3, variables: { first_name: "Ada" } } })).resolves.toMatchObject({ object: "message" });
      await expect(mr.messages.create({ to: "ada@example.com", template: { slug: "welcome@3" } })).resolves.toMatchObject({ object: "message" });
    });
  });

  describe("Webhooks", () => {
    const WEBHOOK_ID = "whk_01jd3k8m2q5v7w9x1y3z5a7b9c";
    const EVENT_ID = "evt_01jd3k8m3a5v7w9x1y3z5a7b9d";

    it("create returns the endpoint with its secret", async () => {
      const webhook = await mr.webhooks.create({ url: "https://acme.example/hooks/mailroom", event_types: ["message.delivered"], description: "Orders", enabled: true });
      expect(webhook).toMatchObject({ object: "webhook", secret: expect.stringMatching(/^whsec_/) });
    });

    it("list returns a page of endpoints", async () => {
      const page = await mr.webhooks.list({ limit: 5 });
      expect(page.data).toEqual(expect.any(Array));
    });

    it("get, update and delete", async () => {
      await expect(mr.webhooks.get(WEBHOOK_ID)).resolves.toMatchObject({ object: "webhook" });
      await expect(mr.webhooks.update(WEBHOOK_ID, { enabled: false, event_types: null, description: null })).resolves.toMatchObject({ object: "webhook" });
      await expect(mr.webhooks.delete(WEBHOOK_ID)).resolves.toMatchObject({ deleted: true });
    });

    it("getSecret and rotateSecret return the secrets", async () => {
      await expect(mr.webhooks.getSecret(WEBHOOK_ID)).resolves.toMatchObject({ object: "webhook_secret" });
      await expect(mr.webhooks.rotateSecret(WEBHOOK_ID, { overlap_seconds: 3600 })).resolves.toMatchObject({ object: "webhook" });
      await expect(mr.webhooks.rotateSecret(WEBHOOK_ID)).resolves.toMatchObject({ object: "webhook" });
    });

    it("test, redeliverEvent and replayEvents queue deliveries", async () => {
      await expect(mr.webhooks.test(WEBHOOK_ID, { type: "message.bounced" })).resolves.toMatchObject({ object: "webhook_delivery" });
      await expect(mr.webhooks.redeliverEvent(WEBHOOK_ID, { event_id: EVENT_ID })).resolves.toMatchObject({ object: "webhook_delivery" });
      await expect(mr.webhooks.replayEvents(WEBHOOK_ID, { since: "2026-11-21T00:00:00Z" })).resolves.toMatchObject({ object: "webhook_replay" });
    });

    it("listAttempts returns a page of attempts, with its filters", async () => {
      expectPageOf(await mr.webhooks.listAttempts(WEBHOOK_ID, { status: "failed", event_id: EVENT_ID, limit: 5 }), "webhook_attempt");
    });
  });

  describe("Usage", () => {
    it("get returns the usage and quota, with or without a range", async () => {
      await expect(mr.usage.get({ from: "2026-11-01", to: "2026-11-30" })).resolves.toMatchObject({ object: "usage", totals: expect.any(Object) });
      await expect(mr.usage.get()).resolves.toMatchObject({ object: "usage" });
    });
  });

  describe("Accounts", () => {
    // Prism checks only that a bearer credential is there, so the client's API key stands in for
    // the user access token these operations need.
    const USER_ID = "usr_01jd3k8m2q5v7w9x1y3z5a7b9c";
    const INVITATION_ID = "inv_01jd3k8m2q5v7w9x1y3z5a7b9c";

    it("get returns the user and their workspaces", async () => {
      await expect(mr.accounts.get()).resolves.toMatchObject({ user: { object: "user" }, workspaces: expect.any(Array) });
    });

    it("createWorkspace returns the caller's membership of the new workspace", async () => {
      await expect(mr.accounts.createWorkspace({ name: "Acme staging" })).resolves.toMatchObject({ object: "workspace_membership", name: expect.any(String) });
    });

    it("listMembers returns a page of members", async () => {
      expectPageOf(await mr.accounts.listMembers({ limit: 5 }), "member");
    });

    it("updateMember returns the member", async () => {
      await expect(mr.accounts.updateMember(USER_ID, { role: "admin" })).resolves.toMatchObject({ object: "member", role: expect.any(String) });
    });

    it("removeMember returns the member", async () => {
      await expect(mr.accounts.removeMember(USER_ID)).resolves.toMatchObject({ object: "member" });
    });

    it("leaveWorkspace returns the member who left", async () => {
      await expect(mr.accounts.leaveWorkspace()).resolves.toMatchObject({ object: "member" });
    });

    it("createInvitation returns the invitation with its accept_url, with or without a role", async () => {
      await expect(mr.accounts.createInvitation({ email: "grace@acme.example", role: "developer" })).resolves.toMatchObject({ object: "invitation", accept_url: expect.any(String) });
      await expect(mr.accounts.createInvitation({ email: "grace@acme.example" })).resolves.toMatchObject({ object: "invitation" });
    });

    it("listInvitations returns a page of invitations", async () => {
      expectPageOf(await mr.accounts.listInvitations({ limit: 5 }), "invitation");
    });

    it("revokeInvitation returns the invitation", async () => {
      await expect(mr.accounts.revokeInvitation(INVITATION_ID)).resolves.toMatchObject({ object: "invitation" });
    });

    it("the mock refuses a role the contract lacks, with the typed error", async () => {
      // @ts-expect-error "superuser" is not a Role
      await expect(mr.accounts.updateMember(USER_ID, { role: "superuser" })).rejects.toBeInstanceOf(UnprocessableEntityError);
    });
  });

  describe("System", () => {
    it("getHealth returns ok", async () => {
      await expect(mr.system.getHealth()).resolves.toEqual({ status: "ok" });
    });

    it("getReadiness returns ready", async () => {
      await expect(mr.system.getReadiness()).resolves.toEqual({ status: "ready" });
    });
  });
});
