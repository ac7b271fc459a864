import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../test/helpers/http-server.js";
import {
  AuthenticationError,
  ConflictError,
  Mailroom,
  NotFoundError,
  PermissionDeniedError,
  UnprocessableEntityError,
  type ClientOptions,
  type Message,
} from "../src/index.js";
import { aMessage } from "./helpers.js";

/**
 * The SDK against the real server over HTTP (one server and database for the file, so each test
 * tags its messages to find its own). Proves the SDK and the server agree, not just the SDK and
 * the contract.
 */
describe("the SDK against the real server", () => {
  let server: TestServer;
  let mr: Mailroom;
  const client = (options: ClientOptions = {}) => new Mailroom({ apiKey: server.sandboxKey, baseUrl: server.baseUrl, ...options });
  const HOUR = 3_600_000;

  /** Every message carrying `tag`, walking every page. */
  const messagesTagged = async (tag: string) => {
    const ids: string[] = [];
    for await (const message of mr.messages.list({ tag, limit: 100 })) ids.push(message.id);
    return ids;
  };

  beforeAll(async () => {
    server = await startTestServer();
    mr = client();
  });
  afterAll(async () => server?.close());

  describe("messages.create", () => {
    it("accepts a message and answers it queued, with its id", async () => {
      const message: Message = await mr.messages.create(aMessage({ to: "ada@example.com" }));
      expect(message).toMatchObject({ id: expect.stringMatching(/^msg_/), object: "message", status: "queued", environment: "sandbox", to: ["ada@example.com"] });
      expect(message.recipients).toMatchObject([{ email: "ada@example.com", status: "queued" }]);
    });

    it("throws UnprocessableEntityError with a pointer per failing field", async () => {
      const error = await mr.messages.create(aMessage({ to: ["ada@example.com", "bob@"], subject: "Hi\r\n" })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnprocessableEntityError);
      const { code, errors, request_id } = error as UnprocessableEntityError;
      expect(code).toBe("validation_failed");
      expect(errors.map((field) => field.pointer).sort()).toEqual(["/subject", "/to/1"]);
      expect(request_id).toMatch(/^req_/);
    });
  });

  describe("messages.get", () => {
    it("returns the message, which the sandbox worker then delivers", async () => {
      const { id } = await mr.messages.create(aMessage({ to: "delivered@simulator.test" }));
      expect((await mr.messages.get(id)).status).toBe("queued");
      await server.testApp.drain();
      const delivered = await mr.messages.get(id);
      expect(delivered.status).toBe("delivered");
      expect(delivered.recipients).toMatchObject([{ email: "delivered@simulator.test", status: "delivered" }]);
    });

    it("throws NotFoundError for another workspace's message, as for one that does not exist", async () => {
      const theirs = await client({ apiKey: server.testApp.other.sandboxKey }).messages.create(aMessage());
      const error = await mr.messages.get(theirs.id).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error).toMatchObject({ status: 404, code: "not_found" });
    });
  });

  describe("messages.list", () => {
    it("walks every page with for await", async () => {
      const created: string[] = [];
      for (let i = 0; i < 5; i++) created.push((await mr.messages.create(aMessage({ tags: ["paging"] }))).id);
      let requests = 0;
      const counting = client({
        fetch: (request) => {
          requests++;
          return fetch(request);
        },
      });
      const listed: string[] = [];
      for await (const message of counting.messages.list({ tag: "paging", limit: 2 })) listed.push(message.id);
      expect(listed).toEqual([...created].reverse());
      expect(requests).toBe(3);
    });

    it("filters by status", async () => {
      const { id } = await mr.messages.create(aMessage({ to: "bounced@simulator.test", tags: ["status-filter"] }));
      await mr.messages.create(aMessage({ to: "delivered@simulator.test", tags: ["status-filter"] }));
      await server.testApp.drain();
      const page = await mr.messages.list({ tag: "status-filter", status: "bounced" });
      expect(page.data.map((message) => message.id)).toEqual([id]);
    });
  });

  describe("messages.listEvents and events.list", () => {
    it("list a delivered message's events in order, and the environment's events with it", async () => {
      const { id } = await mr.messages.create(aMessage({ to: "delivered@simulator.test" }));
      await server.testApp.drain();
      const types: string[] = [];
      for await (const event of mr.messages.listEvents(id)) types.push(event.type);
      expect(types[0]).toBe("message.queued");
      expect(types.at(-1)).toBe("message.delivered");
      const delivered = await mr.events.list({ type: "message.delivered", limit: 100 });
      expect(delivered.data.map((event) => event.message_id)).toContain(id);
    });
  });

  describe("messages.cancel", () => {
    it("cancels a scheduled message", async () => {
      const scheduledAt = new Date(server.testApp.clock.now() + HOUR).toISOString();
      const scheduled = await mr.messages.create(aMessage({ scheduled_at: scheduledAt }));
      expect(scheduled.status).toBe("scheduled");
      const canceled = await mr.messages.cancel(scheduled.id);
      expect(canceled).toMatchObject({ id: scheduled.id, status: "canceled" });
    });

    it("throws ConflictError message_not_cancelable once the message was delivered", async () => {
      const { id } = await mr.messages.create(aMessage());
      await server.testApp.drain();
      const error = await mr.messages.cancel(id).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConflictError);
      expect(error).toMatchObject({ code: "message_not_cancelable" });
    });
  });

  describe("messages.reschedule", () => {
    it("moves a scheduled message to another time, keeping its id", async () => {
      const scheduled = await mr.messages.create(aMessage({ scheduled_at: new Date(server.testApp.clock.now() + HOUR).toISOString() }));
      const later = new Date(server.testApp.clock.now() + 3 * HOUR).toISOString();
      const moved = await mr.messages.reschedule(scheduled.id, { scheduled_at: later });
      expect(moved).toMatchObject({ id: scheduled.id, status: "scheduled", scheduled_at: later });
    });

    it("sends it now with scheduled_at: null: due at once, the worker then delivers it", async () => {
      const scheduled = await mr.messages.create(aMessage({ scheduled_at: new Date(server.testApp.clock.now() + HOUR).toISOString() }));
      const due = await mr.messages.reschedule(scheduled.id, { scheduled_at: null });
      expect(due).toMatchObject({ id: scheduled.id, scheduled_at: new Date(server.testApp.clock.now()).toISOString() });
      await server.testApp.drain();
      expect((await mr.messages.get(scheduled.id)).status).toBe("delivered");
    });

    it("throws UnprocessableEntityError for a time more than 30 days ahead", async () => {
      const scheduled = await mr.messages.create(aMessage({ scheduled_at: new Date(server.testApp.clock.now() + HOUR).toISOString() }));
      const error = await mr.messages.reschedule(scheduled.id, { scheduled_at: new Date(server.testApp.clock.now() + 31 * 24 * HOUR).toISOString() }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnprocessableEntityError);
      expect(error).toMatchObject({ code: "validation_failed" });
    });

    it("throws ConflictError message_not_scheduled for a message already queued", async () => {
      const { id } = await mr.messages.create(aMessage());
      const error = await mr.messages.reschedule(id, { scheduled_at: null }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConflictError);
      expect(error).toMatchObject({ code: "message_not_scheduled" });
    });
  });

  describe("authentication", () => {
    it("throws AuthenticationError invalid_api_key for an unknown key", async () => {
      const error = await client({ apiKey: "svc_test_unknown" }).workspace.get().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AuthenticationError);
      expect(error).toMatchObject({ status: 401, code: "invalid_api_key" });
    });
  });

  describe("idempotency", () => {
    it("answers the same message to two creates with the same idempotencyKey", async () => {
      const first = await mr.messages.create(aMessage({ tags: ["same-key"] }), { idempotencyKey: "order-1-receipt" });
      const second = await mr.messages.create(aMessage({ tags: ["same-key"] }), { idempotencyKey: "order-1-receipt" });
      expect(second.id).toBe(first.id);
      expect(first.idempotency_key).toBe("order-1-receipt");
      expect(await messagesTagged("same-key")).toEqual([first.id]);
    });

    it("throws UnprocessableEntityError idempotency_key_reused for the same key with another body", async () => {
      await mr.messages.create(aMessage({ subject: "First" }), { idempotencyKey: "order-2-receipt" });
      const error = await mr.messages.create(aMessage({ subject: "Second" }), { idempotencyKey: "order-2-receipt" }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnprocessableEntityError);
      expect(error).toMatchObject({ code: "idempotency_key_reused" });
    });

    it("creates exactly one message when the first attempt's answer is lost on the way back", async () => {
      // The server stored the message, but the client never heard: only the Idempotency-Key,
      // reused on the retry, keeps the retry from sending the email twice.
      let attempts = 0;
      const losesFirstAnswer = async (request: Request) => {
        const response = await fetch(request);
        if (++attempts === 1) throw new TypeError("fetch failed", { cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }) });
        return response;
      };
      const message = await client({ fetch: losesFirstAnswer }).messages.create(aMessage({ tags: ["lost-answer"] }));
      expect(attempts).toBe(2);
      expect(await messagesTagged("lost-answer")).toEqual([message.id]);
    });
  });

  describe("apiKeys", () => {
    it("creates a key whose secret works at once in a new client, and lists and gets it", async () => {
      const key = await mr.apiKeys.create({ name: "Worker" });
      expect(key).toMatchObject({ id: expect.stringMatching(/^key_/), name: "Worker", permission: "full_access", secret: expect.stringMatching(/^svc_test_/) });
      await expect(client({ apiKey: key.secret }).workspace.get()).resolves.toMatchObject({ id: server.testApp.workspace.id });
      const listed: string[] = [];
      for await (const each of mr.apiKeys.list()) listed.push(each.id);
      expect(listed).toContain(key.id);
      const got = await mr.apiKeys.get(key.id);
      expect(got).toMatchObject({ id: key.id, name: "Worker" });
      expect(got).not.toHaveProperty("secret");
    });

    it("creates a sending_access key that may send but gets PermissionDeniedError for anything else", async () => {
      const key = await mr.apiKeys.create({ name: "Sender", permission: "sending_access" });
      const sender = client({ apiKey: key.secret });
      await expect(sender.messages.create(aMessage())).resolves.toMatchObject({ status: "queued" });
      const error = await sender.apiKeys.list().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PermissionDeniedError);
      expect(error).toMatchObject({ code: "insufficient_permission" });
    });

    it("rotates a key: the new secret works and, with no overlap, the old one stops", async () => {
      const key = await mr.apiKeys.create({ name: "Rotated" });
      const rotated = await mr.apiKeys.rotate(key.id, { overlap_seconds: 0 });
      expect(rotated.id).toBe(key.id);
      expect(rotated.secret).not.toBe(key.secret);
      await expect(client({ apiKey: rotated.secret }).workspace.get()).resolves.toBeDefined();
      await expect(client({ apiKey: key.secret }).workspace.get()).rejects.toBeInstanceOf(AuthenticationError);
    });

    it("revokes a key, whose secret then gets AuthenticationError", async () => {
      const key = await mr.apiKeys.create({ name: "Revoked" });
      const revoked = await mr.apiKeys.revoke(key.id);
      expect(revoked.revoked_at).toEqual(expect.any(String));
      await expect(client({ apiKey: key.secret }).workspace.get()).rejects.toBeInstanceOf(AuthenticationError);
    });
  });

  describe("workspace", () => {
    it("gets the calling key's workspace and environment", async () => {
      await expect(mr.workspace.get()).resolves.toMatchObject({ id: server.testApp.workspace.id, object: "workspace", environment: "sandbox" });
    });

    it("updates the workspace's name", async () => {
      const updated = await mr.workspace.update({ name: "Acme Ltd" });
      expect(updated.name).toBe("Acme Ltd");
      expect((await mr.workspace.get()).name).toBe("Acme Ltd");
    });
  });

  describe("tracking, engagement and replies", () => {
    it("sends with tracking options, which the message keeps, and reads the simulated opens and click per recipient", async () => {
      const sent = await mr.messages.create(aMessage({ to: ["opened@simulator.test", "clicked@simulator.test"], html: '<p><a href="https://acme.example/start">Start</a></p>', track_opens: true, track_clicks: true, tags: ["sdk-engagement"] }));
      expect(sent.tracking).toEqual({ opens: true, clicks: true, replies: false, unsubscribe: false });
      await server.testApp.drain();
      const message = await mr.messages.get(sent.id);
      const clicked = message.recipients.find((recipient) => recipient.email === "clicked@simulator.test");
      expect(clicked?.opened_at).toEqual(expect.any(String));
      expect(clicked?.clicked_at).toEqual(expect.any(String));
      expect(message.recipients.find((recipient) => recipient.email === "opened@simulator.test")?.clicked_at).toBeNull();
      const [summary] = (await mr.messages.list({ tag: "sdk-engagement" })).data;
      expect(summary?.engagement).toEqual({ opens: 3, clicks: 1, replies: 0 });
      const types: string[] = [];
      for await (const event of mr.messages.listEvents(sent.id)) types.push(event.type);
      expect(types.filter((type) => type === "message.clicked")).toHaveLength(1);
    });

    it("lists a simulated reply with listReplies and gets it with inbound.get; another id is NotFoundError", async () => {
      const sent = await mr.messages.create(aMessage({ to: "replied@simulator.test", track_replies: true }));
      await server.testApp.drain();
      const replies: string[] = [];
      for await (const reply of mr.messages.listReplies(sent.id)) replies.push(reply.id);
      expect(replies).toHaveLength(1);
      const reply = await mr.inbound.get(replies[0] as string);
      expect(reply).toMatchObject({ object: "inbound_message", message_id: sent.id, recipient: "replied@simulator.test", threaded_by: "simulated", simulated: true });
      await expect(mr.inbound.get("inb_01jd3k8m2q5v7w9x1y3z5a7b9c")).rejects.toBeInstanceOf(NotFoundError);
      await expect(mr.inbound.getAttachment(reply.id, reply.attachments.length)).rejects.toBeInstanceOf(NotFoundError);
    });

    it("updates a domain's tracking settings and the workspace's tracking defaults", async () => {
      const domain = await mr.domains.create({ name: "sdk-tracking.example" });
      const updated = await mr.domains.update(domain.id, { track_clicks: true, tracking_domain: "track.sdk-tracking.example" });
      expect(updated).toMatchObject({ track_opens: null, track_clicks: true, tracking_domain: "track.sdk-tracking.example" });
      expect(updated.records).toContainEqual(expect.objectContaining({ purpose: "tracking", type: "CNAME", name: "track.sdk-tracking.example" }));
      await expect(mr.domains.update(domain.id, { tracking_domain: "not a host" })).rejects.toBeInstanceOf(UnprocessableEntityError);
      const workspace = await mr.workspace.update({ tracking: { replies: true } });
      expect(workspace.tracking.replies).toBe(true);
      await mr.workspace.update({ tracking: { replies: false } });
    });
  });

  describe("templates", () => {
    it("creates, edits, renders and publishes a template, and sends a message from it", async () => {
      const created = await mr.templates.create({
        slug: "sdk-welcome",
        name: "Welcome",
        subject: "Welcome, {{ first_name }}",
        html: "<p>Order {{ order.id }} for {{ first_name }}</p>",
        variables: [
          { name: "first_name", type: "string", required: true },
          { name: "order", type: "object", required: true },
        ],
        publish: true,
      });
      expect(created).toMatchObject({ object: "template", slug: "sdk-welcome", published_version: 1, has_draft: false });

      const edited = await mr.templates.update("sdk-welcome", { subject: "Welcome aboard, {{ first_name }}" });
      expect(edited).toMatchObject({ published_version: 1, latest_version: 2, has_draft: true });
      const preview = await mr.templates.render("sdk-welcome", { version: "draft", variables: { first_name: "Ada", order: { id: 7 } } });
      expect(preview).toMatchObject({ object: "rendered_template", version: 2, subject: "Welcome aboard, Ada", html: "<p>Order 7 for Ada</p>" });

      const sentBefore = await mr.messages.create({ from: aMessage().from, to: "ada@example.com", tags: ["sdk-template"], template: { slug: "sdk-welcome", variables: { first_name: "Ada", order: { id: 7 } } } });
      expect(sentBefore).toMatchObject({ subject: "Welcome, Ada", template: { id: created.id, slug: "sdk-welcome", version: 1 } });

      await expect(mr.templates.publish("sdk-welcome")).resolves.toMatchObject({ published_version: 2, has_draft: false });
      const sentAfter = await mr.messages.create({ from: aMessage().from, to: "ada@example.com", template: { slug: "sdk-welcome@1", variables: { first_name: "Grace", order: { id: 8 } } } });
      expect(sentAfter).toMatchObject({ subject: "Welcome, Grace", template: { version: 1 } });

      const versions: number[] = [];
      for await (const version of mr.templates.listVersions("sdk-welcome", { limit: 1 })) versions.push(version.version);
      expect(versions).toEqual([2, 1]);
      await expect(mr.templates.getVersion("sdk-welcome", 1)).resolves.toMatchObject({ version: 1, state: "archived", subject: "Welcome, {{ first_name }}" });
      const fromTemplate: string[] = [];
      for await (const message of mr.messages.list({ template: "sdk-welcome" })) fromTemplate.push(message.id);
      expect(fromTemplate.sort()).toEqual([sentBefore.id, sentAfter.id].sort());
    });

    it("throws UnprocessableEntityError naming each bad variable, and stores nothing", async () => {
      await mr.templates.create({ slug: "sdk-strict", name: "Strict", subject: "Hi {{ name }}", html: "<p>Hi</p>", variables: [{ name: "name", type: "string", required: true }], publish: true });
      const error = (await mr.messages.create({ to: "ada@example.com", from: aMessage().from, template: { slug: "sdk-strict", variables: { nickname: 1 } } }).catch((e: unknown) => e)) as UnprocessableEntityError;
      expect(error).toBeInstanceOf(UnprocessableEntityError);
      expect(error.errors.map((field) => field.pointer).sort()).toEqual(["/template/variables/name", "/template/variables/nickname"]);
    });

    it("deletes a template; sending by its slug then fails", async () => {
      await mr.templates.create({ slug: "sdk-gone", name: "Gone", subject: "S", html: "<p>H</p>", publish: true });
      await expect(mr.templates.delete("sdk-gone")).resolves.toMatchObject({ object: "template", deleted: true });
      await expect(mr.templates.get("sdk-gone")).rejects.toBeInstanceOf(NotFoundError);
      await expect(mr.messages.create({ from: aMessage().from, to: "ada@example.com", template: { slug: "sdk-gone" } })).rejects.toMatchObject({ status: expect.any(Number) });
    });
  });

  describe("webhooks", () => {
    it("creates an endpoint whose secret getSecret shows again, rotates it, and deletes it", async () => {
      const webhook = await mr.webhooks.create({ url: "https://hooks.acme.invalid/mailroom", event_types: ["message.delivered"] });
      expect(webhook).toMatchObject({ object: "webhook", environment: "sandbox", event_types: ["message.delivered"], status: "enabled", secret: expect.stringMatching(/^whsec_/) });
      await expect(mr.webhooks.getSecret(webhook.id)).resolves.toMatchObject({ secret: webhook.secret, previous_secret: null });

      const rotated = await mr.webhooks.rotateSecret(webhook.id, { overlap_seconds: 3600 });
      expect(rotated.secret).not.toBe(webhook.secret);
      await expect(mr.webhooks.getSecret(webhook.id)).resolves.toMatchObject({ secret: rotated.secret, previous_secret: webhook.secret });

      await expect(mr.webhooks.update(webhook.id, { event_types: null, enabled: false })).resolves.toMatchObject({ event_types: null, enabled: false, status: "disabled" });
      const listed: string[] = [];
      for await (const each of mr.webhooks.list()) listed.push(each.id);
      expect(listed).toContain(webhook.id);
      await expect(mr.webhooks.delete(webhook.id)).resolves.toMatchObject({ id: webhook.id, deleted: true });
      await expect(mr.webhooks.get(webhook.id)).rejects.toBeInstanceOf(NotFoundError);
    });

    it("queues a test delivery, whose attempts are listed once made", async () => {
      const webhook = await mr.webhooks.create({ url: "https://hooks.acme.invalid/test" });
      const delivery = await mr.webhooks.test(webhook.id, { type: "message.bounced" });
      expect(delivery).toMatchObject({ object: "webhook_delivery", webhook_id: webhook.id, status: "pending", event_id: expect.any(String) });
      const page = await mr.webhooks.listAttempts(webhook.id, { event_id: delivery.event_id });
      expect(page.data).toEqual(expect.any(Array));
    });
  });

  describe("system", () => {
    it("reports the server alive and ready", async () => {
      await expect(mr.system.getHealth()).resolves.toEqual({ status: "ok" });
      await expect(mr.system.getReadiness()).resolves.toEqual({ status: "ready" });
    });
  });
});
