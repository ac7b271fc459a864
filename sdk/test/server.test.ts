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

  describe("system", () => {
    it("reports the server alive and ready", async () => {
      await expect(mr.system.getHealth()).resolves.toEqual({ status: "ok" });
      await expect(mr.system.getReadiness()).resolves.toEqual({ status: "ready" });
    });
  });
});
