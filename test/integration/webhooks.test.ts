import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { ENDPOINT_REREAD_MS, outcomeOf } from "../../src/webhooks/dispatcher.js";
import { RETRY_DELAYS_MS } from "../../src/webhooks/retry-schedule.js";
import { databases } from "../helpers/databases.js";
import { startDnsServer, type DnsServer } from "../helpers/dns-server.js";
import { startManualReceiver } from "../helpers/manual-receiver.js";
import { signedUp } from "../helpers/dashboard-session.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";
import { startCanary, startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";

interface Webhook {
  id: string;
  url: string;
  status: string;
  enabled: boolean;
  event_types: string[] | null;
  disabled_reason: string | null;
  disabled_at: string | null;
  failing_since: string | null;
  secret?: string;
  [field: string]: unknown;
}

interface Attempt {
  id: string;
  event_id: string;
  attempt: number;
  status: string;
  response_status: number | null;
  response_body: string | null;
  error: string | null;
  duration_ms: number;
}

/** docs/sandbox.md: the events each simulator address produces, in order. */
const SIMULATED: Array<{ address: string; events: string[] }> = [
  { address: "delivered@simulator.test", events: ["message.queued", "message.delivered"] },
  { address: "bounced@simulator.test", events: ["message.queued", "message.bounced"] },
  { address: "deferred@simulator.test", events: ["message.queued", "message.deferred", "message.delivered"] },
  { address: "complained@simulator.test", events: ["message.queued", "message.delivered", "message.opened", "message.complained"] },
  { address: "opened@simulator.test", events: ["message.queued", "message.delivered", "message.opened", "message.opened"] },
  { address: "clicked@simulator.test", events: ["message.queued", "message.delivered", "message.opened", "message.clicked"] },
  { address: "replied@simulator.test", events: ["message.queued", "message.delivered", "message.opened", "message.replied"] },
  { address: "unsubscribed@simulator.test", events: ["message.queued", "message.delivered", "message.opened", "message.unsubscribed"] },
];

describe.each(databases)("Webhooks ($name)", (database) => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  const opened: Array<{ close(): Promise<void> }> = [];

  /** A fresh app (and receiver); a test that needs other settings than its describe's opens another, and the first is closed. */
  async function open(env: Record<string, string> = {}) {
    await t?.close();
    t = await createTestApp(database, env);
    receiver = await startWebhookReceiver();
    opened.push(receiver);
  }
  afterEach(async () => {
    for (const thing of opened.splice(0)) await thing.close();
    await t.close();
  });

  const create = async (payload: Record<string, unknown> = {}, key?: string): Promise<Webhook> => {
    const res = await t.call({ method: "POST", url: "/v1/webhooks", payload: { url: receiver.url, ...payload }, ...(key ? { key } : {}) });
    expect(res.statusCode, res.body).toBe(201);
    const webhook = res.json() as Webhook;
    receiver.secrets.push(webhook.secret!);
    return webhook;
  };
  const get = async (id: string): Promise<Webhook> => (await t.call({ method: "GET", url: `/v1/webhooks/${id}` })).json();
  const send = async (to: string | string[] = "ada@example.com", key?: string) => {
    const res = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ to }), ...(key ? { key } : {}) });
    expect(res.statusCode, res.body).toBe(202);
    return res.json().id as string;
  };
  const attempts = async (id: string, query = ""): Promise<Attempt[]> => {
    const res = await t.call({ method: "GET", url: `/v1/webhooks/${id}/attempts?limit=100${query}` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };
  /**
   * An endpoint rotated with an hour's overlap whose previous secret no key opens any more: the
   * rotation kept it as it was sealed, under the old SECRET_KEY, which then goes (an operator
   * dropped SECRET_KEY_PREVIOUS before resealing). Its new secret opens.
   */
  const previousSecretUnreadable = async () => {
    const [oldKey, newKey] = ["0a".repeat(32), "1b".repeat(32)];
    await open({ SECRET_KEY: oldKey });
    const webhook = await create();
    await t.restart({ SECRET_KEY: newKey, SECRET_KEY_PREVIOUS: oldKey });
    const rotated = await t.call({ method: "POST", url: `/v1/webhooks/${webhook.id}/rotate-secret`, payload: { overlap_seconds: 3600 } });
    expect(rotated.statusCode, rotated.body).toBe(200);
    await t.restart({ SECRET_KEY: newKey });
    return { webhook, secret: rotated.json().secret as string };
  };
  const tick = () => t.runtime.dispatcher.tick();
  const count = async (table: string) => Number(((await t.runtime.db.knex(table).count({ n: "*" }).first()) as { n: number | string }).n);
  const delivery = async (webhookId: string, eventId: string) =>
    (await t.runtime.db.knex("webhook_deliveries").where({ endpoint_id: webhookId, event_id: eventId }).first()) as { state: string; attempts: number | string; locked_by: string | null };
  /** Whether each of the endpoint's deliveries is parked, in event order. */
  const parkedOf = async (webhookId: string) =>
    ((await t.runtime.db.knex("webhook_deliveries").where({ endpoint_id: webhookId }).orderBy("event_id").pluck("parked")) as Array<boolean | number>).map(Boolean);
  /** Polls until `condition` holds, for what the running dispatcher does in its own time. */
  const until = async (what: string, condition: () => Promise<boolean>, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  describe("createWebhook", () => {
    beforeEach(() => open());

    it("answers 201 with a Location, the endpoint and its whsec_ secret, which signs its deliveries", async () => {
      const res = await t.call({ method: "POST", url: "/v1/webhooks", payload: { url: receiver.url, description: "Orders" } });
      expect(res.statusCode).toBe(201);
      const webhook = res.json() as Webhook;
      expect(res.headers.location).toBe(`/v1/webhooks/${webhook.id}`);
      const now = new Date(t.clock.now()).toISOString();
      expect(webhook).toEqual({
        id: expect.stringMatching(/^whk_[0-9a-z]{26}$/),
        object: "webhook",
        environment: "sandbox",
        url: receiver.url,
        description: "Orders",
        event_types: null,
        enabled: true,
        status: "enabled",
        disabled_reason: null,
        disabled_at: null,
        failing_since: null,
        created_at: now,
        updated_at: now,
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      });
      expect(Buffer.from(webhook.secret!.slice(6), "base64")).toHaveLength(32);
      receiver.secrets.push(webhook.secret!);
      await send();
      await t.drainWebhooks();
      expect(receiver.received.map((r) => r.payload.type)).toEqual(["message.queued"]);
      expect(receiver.unverified).toEqual([]);
    });

    it("creates a disabled endpoint with enabled: false, and subscribes to the event types given", async () => {
      const webhook = await create({ event_types: ["message.delivered", "message.bounced"], enabled: false });
      expect(webhook).toMatchObject({ enabled: false, status: "disabled", disabled_reason: "manual", event_types: ["message.delivered", "message.bounced"] });
    });

    it.each([
      ["no url", {}, "/url"],
      ["an ftp URL", { url: "ftp://hooks.example/x" }, "/url"],
      ["a relative URL", { url: "/hooks" }, "/url"],
      // A URL parser would read these as http://ok/ and https://a.example/c: not what was written.
      ["a URL with an empty host", { url: "http:///ok" }, "/url"],
      ["a URL with extra slashes", { url: "https:////a.example/c" }, "/url"],
      ["a URL with backslashes", { url: "https:\\\\a.example\\c" }, "/url"],
      ["a URL without //", { url: "https:a.example/c" }, "/url"],
      ["a URL over 2048 characters", { url: `https://hooks.example/${"a".repeat(2048)}` }, "/url"],
      // Parsed, and accepted as a URI, but no HTTP request can carry it: Basic credentials are UTF-8.
      ["a URL whose password has a percent-escape that is not UTF-8", { url: "https://hook:caf%E9@hooks.example/x" }, "/url"],
      ["a URL whose user name has a percent-escape that is not UTF-8", { url: "https://%FF@hooks.example/x" }, "/url"],
      ["an unknown event type", { url: "https://hooks.example/x", event_types: ["message.exploded"] }, "/event_types/0"],
      ["an empty event type list", { url: "https://hooks.example/x", event_types: [] }, "/event_types"],
      ["an unknown field", { url: "https://hooks.example/x", secret: "whsec_mine" }, "/secret"],
    ])("refuses %s with 422 validation_failed and stores nothing", async (_label, payload, pointer) => {
      const res = await t.call({ method: "POST", url: "/v1/webhooks", payload });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().code).toBe("validation_failed");
      expect((res.json().errors as Array<{ pointer: string }>).map((e) => e.pointer)).toContain(pointer);
      expect(await count("webhook_endpoints")).toBe(0);
    });

    it("refuses a URL that is over 2048 characters once normalised with 422 validation_failed, and stores nothing", async () => {
      // 2,023 characters as sent, within the contract; stored as parsed, each ' of the query becomes %27: 6,023.
      const url = `https://hooks.example/?${"'".repeat(2000)}`;
      const res = await t.call({ method: "POST", url: "/v1/webhooks", payload: { url } });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/url", message: "must be at most 2048 characters once normalised (percent-encoded, this one is 6023)" }] });
      expect(await count("webhook_endpoints")).toBe(0);
    });
  });

  describe("listWebhooks", () => {
    beforeEach(() => open());

    it("lists the environment's endpoints newest first, a page at a time, without secrets", async () => {
      const first = await create();
      t.clock.advance(1000);
      const second = await create({ description: "second" });
      await create({}, t.workspace.liveKey);
      const page1 = (await t.call({ method: "GET", url: "/v1/webhooks?limit=1" })).json();
      expect(page1.data.map((w: Webhook) => w.id)).toEqual([second.id]);
      expect(page1.has_more).toBe(true);
      expect(page1.data[0].secret).toBeUndefined();
      const page2 = (await t.call({ method: "GET", url: `/v1/webhooks?limit=1&after=${page1.next_cursor}` })).json();
      expect(page2).toMatchObject({ data: [{ id: first.id }], has_more: false, next_cursor: null });
    });
  });

  describe("getWebhook", () => {
    beforeEach(() => open());

    it("answers the endpoint without its secret", async () => {
      const { secret: _, ...created } = await create();
      expect(await get(created.id)).toEqual(created);
    });

    it("shows a viewer the URL with its user name and password masked; developers, admins and keys see it whole, and it is sent whole", async () => {
      const owner = await signedUp(t, { email: "ada@acme.example", workspace_name: "Acme" });
      const ownerToken = await owner.session.token(owner.workspaceId);
      const tokenOf = async (email: string, role: string) => {
        const invitation = await t.call({ method: "POST", url: "/v1/invitations", key: ownerToken, payload: { email, role } });
        const joined = await signedUp(t, { email, invitation_token: new URL(invitation.json().accept_url).pathname.split("/").pop() });
        return joined.session.token(owner.workspaceId);
      };
      const viewer = await tokenOf("grace@acme.example", "viewer");
      const developer = await tokenOf("alan@acme.example", "developer");
      const whole = receiver.url.replace("http://", "http://hooks:s3cr%40t@");
      const webhook = await create({ url: whole }, ownerToken);
      expect(webhook.url).toBe(whole);

      const masked = whole.replace("hooks:s3cr%40t@", "***:***@");
      expect((await t.call({ method: "GET", url: `/v1/webhooks/${webhook.id}`, key: viewer })).json().url).toBe(masked);
      expect((await t.call({ method: "GET", url: "/v1/webhooks", key: viewer })).json().data.map((w: Webhook) => w.url)).toEqual([masked]);
      for (const key of [developer, ownerToken]) {
        expect((await t.call({ method: "GET", url: `/v1/webhooks/${webhook.id}`, key })).json().url).toBe(whole);
        expect((await t.call({ method: "GET", url: "/v1/webhooks", key })).json().data.map((w: Webhook) => w.url)).toEqual([whole]);
      }
      // A URL without credentials is shown to a viewer as it is.
      const plain = await create({}, ownerToken);
      expect((await t.call({ method: "GET", url: `/v1/webhooks/${plain.id}`, key: viewer })).json().url).toBe(receiver.url);

      // What is masked is only what a viewer sees: the receiver is sent the credentials (HTTP Basic).
      const test = await t.call({ method: "POST", url: `/v1/webhooks/${webhook.id}/test`, key: ownerToken, payload: { type: "message.delivered" } });
      expect(test.statusCode, test.body).toBe(202);
      await t.drainWebhooks();
      const [delivery] = await receiver.waitFor(1);
      expect(delivery!.headers.authorization).toBe(`Basic ${Buffer.from("hooks:s3cr@t").toString("base64")}`);
    });

    it("answers 404 for an endpoint of another workspace or of the other environment", async () => {
      const webhook = await create();
      for (const key of [t.workspace.liveKey, t.other.sandboxKey, t.other.liveKey]) {
        const res = await t.call({ method: "GET", url: `/v1/webhooks/${webhook.id}`, key });
        expect(res.statusCode).toBe(404);
        expect(res.json().code).toBe("not_found");
      }
    });
  });

  describe("updateWebhook", () => {
    beforeEach(() => open());

    it("changes the fields given and keeps the others; null event_types subscribes to everything", async () => {
      const webhook = await create({ event_types: ["message.bounced"], description: "Orders" });
      t.clock.advance(1000);
      const res = await t.call({ method: "PATCH", url: `/v1/webhooks/${webhook.id}`, payload: { event_types: ["message.delivered"] } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ event_types: ["message.delivered"], description: "Orders", url: receiver.url, updated_at: new Date(t.clock.now()).toISOString() });
      await send();
      await t.drain();
      await t.drainWebhooks();
      expect(receiver.received.map((r) => r.payload.type)).toEqual(["message.delivered"]);
      await t.call({ method: "PATCH", url: `/v1/webhooks/${webhook.id}`, payload: { event_types: null } });
      await send();
      await t.drainWebhooks();
      expect(receiver.received.map((r) => r.payload.type)).toEqual(["message.delivered", "message.queued"]);
    });

    it("sends the deliveries queued before its event types changed, and only the new types' events after", async () => {
      const webhook = await create({ event_types: ["message.queued"] });
      const before = await send();
      const res = await t.call({ method: "PATCH", url: `/v1/webhooks/${webhook.id}`, payload: { event_types: ["message.delivered"] } });
      expect(res.statusCode, res.body).toBe(200);
      const after = await send();
      await t.drain();
      await t.drainWebhooks();
      // The subscription is judged when the event happens: the queued delivery of `before` still goes.
      expect(receiver.received.map((r) => [r.payload.type, r.payload.message_id])).toEqual([
        ["message.queued", before],
        ["message.delivered", before],
        ["message.delivered", after],
      ]);
    });

    it("keeps a disabled endpoint's queued deliveries without sending them, and sends them once it is enabled again", async () => {
      const webhook = await create();
      await send();
      const disabled = await t.call({ method: "PATCH", url: `/v1/webhooks/${webhook.id}`, payload: { enabled: false } });
      expect(disabled.json()).toMatchObject({ enabled: false, status: "disabled", disabled_reason: "manual", disabled_at: new Date(t.clock.now()).toISOString() });
      await t.drainWebhooks();
      expect(receiver.received).toHaveLength(0);
      // Events while disabled are not queued for it.
      await send();
      const enabled = await t.call({ method: "PATCH", url: `/v1/webhooks/${webhook.id}`, payload: { enabled: true } });
      expect(enabled.json()).toMatchObject({ enabled: true, status: "enabled", disabled_reason: null, disabled_at: null });
      await t.drainWebhooks();
      expect(receiver.received).toHaveLength(1);
    });

    it("parks a disabled endpoint's queued deliveries out of the claim index, and unparks them when it is enabled again", async () => {
      const webhook = await create();
      const other = await create();
      await send();
      await send();
      await t.call({ method: "PATCH", url: `/v1/webhooks/${webhook.id}`, payload: { enabled: false } });
      await t.drainWebhooks();
      expect(await parkedOf(webhook.id)).toEqual([true, true]);
      expect(await parkedOf(other.id)).toEqual([false, false]);
      // Each endpoint has its own secret: the receiver tells them apart by which one verifies.
      expect(receiver.received.map((r) => r.verifiedWith)).toEqual([[1], [1]]);
      receiver.received.length = 0;
      await t.call({ method: "PATCH", url: `/v1/webhooks/${webhook.id}`, payload: { enabled: true } });
      await t.drainWebhooks();
      expect(await parkedOf(webhook.id)).toEqual([false, false]);
      expect(receiver.received.map((r) => r.verifiedWith)).toEqual([[0], [0]]);
    });

    it("redoes a park that a newer flip overtook: deliveries parked before the endpoint was enabled again are unparked and sent", async () => {
      const webhook = await create();
      await send();
      await send();
      await t.call({ method: "PATCH", url: `/v1/webhooks/${webhook.id}`, payload: { enabled: false } });
      const deliveries = t.runtime.repositories.webhookDeliveries;
      const [disabling] = await deliveries.endpointsToRepark(10);
      expect(disabling).toMatchObject({ endpointId: webhook.id, parked: true });
      // A walk parks the first delivery, then the endpoint is enabled before it goes on.
      const first = await deliveries.reparkChunk(disabling!, "", 1);
      await t.call({ method: "PATCH", url: `/v1/webhooks/${webhook.id}`, payload: { enabled: true } });
      expect(await deliveries.reparkChunk(disabling!, first as string, 1)).toBe("stale");
      expect(await parkedOf(webhook.id)).toEqual([true, false]);
      // Parked, it is not claimed although its endpoint is enabled: only the newer walk frees it.
      const now = t.clock.now();
      const claimed = await t.runtime.db.dialect.claimWebhookDeliveries(t.runtime.db.knex, { now, limit: 10, leaseUntil: now + 1000, dispatcherId: "probe", excludeEndpoints: [] });
      expect(claimed.map((row) => row.event_id)).not.toContain(first);
      await t.runtime.db.knex("webhook_deliveries").update({ locked_by: null, locked_until: null });
      await t.drainWebhooks();
      expect(await parkedOf(webhook.id)).toEqual([false, false]);
      expect(receiver.received).toHaveLength(2);
    });

    it("refuses a URL that is not http(s) with 422 and changes nothing", async () => {
      const webhook = await create();
      const res = await t.call({ method: "PATCH", url: `/v1/webhooks/${webhook.id}`, payload: { url: "mailto:ada@example.com" } });
      expect(res.statusCode).toBe(422);
      expect((await get(webhook.id)).url).toBe(receiver.url);
    });

    it("refuses a URL that is over 2048 characters once normalised with 422 validation_failed, and keeps the old one", async () => {
      const webhook = await create();
      const res = await t.call({ method: "PATCH", url: `/v1/webhooks/${webhook.id}`, payload: { url: `https://hooks.example/?${"'".repeat(2000)}` } });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/url", message: "must be at most 2048 characters once normalised (percent-encoded, this one is 6023)" }] });
      expect((await get(webhook.id)).url).toBe(receiver.url);
    });
  });

  describe("deleteWebhook", () => {
    beforeEach(() => open());

    it("removes the endpoint at once, nothing more is sent to it, and its queued deliveries and attempts go in the next maintenance round", async () => {
      const webhook = await create();
      await send();
      await t.drainWebhooks();
      await send();
      const res = await t.call({ method: "DELETE", url: `/v1/webhooks/${webhook.id}` });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ id: webhook.id, object: "webhook", deleted: true });
      await t.drainWebhooks();
      expect(receiver.received).toHaveLength(1);
      expect((await t.call({ method: "GET", url: `/v1/webhooks/${webhook.id}/attempts` })).statusCode).toBe(404);
      expect((await t.call({ method: "DELETE", url: `/v1/webhooks/${webhook.id}` })).statusCode).toBe(404);

      expect(await t.runtime.services.webhooks.prune()).toBeGreaterThan(0);
      expect(await count("webhook_deliveries")).toBe(0);
      expect(await count("webhook_attempts")).toBe(0);
      expect(await count("webhook_endpoint_purges")).toBe(0);
    });

    it("purges a large backlog slice by slice, leaving other endpoints' rows alone", async () => {
      const [doomed, kept] = [await create(), await create()];
      await send();
      const backlog = Array.from({ length: 2500 }, (_, i) => ({
        endpoint_id: doomed.id,
        event_id: `evt_backlog${String(i).padStart(18, "0")}`,
        state: "pending",
        attempts: 0,
        due_at: t.clock.now(),
        event_created_at: t.clock.now(),
        created_at: t.clock.now(),
      }));
      for (let i = 0; i < backlog.length; i += 250) await t.runtime.db.knex("webhook_deliveries").insert(backlog.slice(i, i + 250));
      expect((await t.call({ method: "DELETE", url: `/v1/webhooks/${doomed.id}` })).statusCode).toBe(200);

      expect(await t.runtime.services.webhooks.prune()).toBe(2501);
      expect((await t.runtime.db.knex("webhook_deliveries").distinct("endpoint_id")).map((r: { endpoint_id: string }) => r.endpoint_id)).toEqual([kept.id]);
      expect(await count("webhook_endpoint_purges")).toBe(0);
    });
  });

  describe("getWebhookSecret and rotateWebhookSecret", () => {
    beforeEach(() => open());

    it("shows the secret again to a full-access key", async () => {
      const webhook = await create();
      const res = await t.call({ method: "GET", url: `/v1/webhooks/${webhook.id}/secret` });
      expect(res.json()).toEqual({ object: "webhook_secret", secret: webhook.secret, previous_secret: null, previous_secret_expires_at: null });
      const stored = (await t.runtime.db.knex("webhook_endpoints").first("secret")) as { secret: string };
      expect(stored.secret).not.toContain(webhook.secret!.slice(6, 20));
    });

    it("signs with both secrets during the overlap, so a receiver with either verifies, then with the new one only", async () => {
      const webhook = await create();
      const old = webhook.secret!;
      const res = await t.call({ method: "POST", url: `/v1/webhooks/${webhook.id}/rotate-secret`, payload: { overlap_seconds: 3600 } });
      expect(res.statusCode, res.body).toBe(200);
      const rotated = res.json().secret as string;
      expect(rotated).toMatch(/^whsec_/);
      expect(rotated).not.toBe(old);
      expect((await t.call({ method: "GET", url: `/v1/webhooks/${webhook.id}/secret` })).json()).toEqual({
        object: "webhook_secret",
        secret: rotated,
        previous_secret: old,
        previous_secret_expires_at: new Date(t.clock.now() + 3_600_000).toISOString(),
      });
      receiver.secrets = [old, rotated];
      await send();
      await t.drainWebhooks();
      const [during] = receiver.received;
      expect(during!.signature.split(" ")).toHaveLength(2);
      expect(during!.verifiedWith).toEqual([0, 1]);
      // Each secret alone verifies it, with the public library.
      for (const secret of [old, rotated]) expect(() => new StandardWebhook(secret).verify(during!.body, during!.headers as Record<string, string>)).not.toThrow();

      t.clock.advance(3_600_001);
      await send();
      await t.drainWebhooks();
      const after = receiver.received[1]!;
      expect(after.signature.split(" ")).toHaveLength(1);
      expect(after.verifiedWith).toEqual([1]);
      expect((await t.call({ method: "GET", url: `/v1/webhooks/${webhook.id}/secret` })).json().previous_secret).toBeNull();
    });

    it("shows the current secret alone, as deliveries are signed, when only the previous one, still in its overlap, cannot be opened", async () => {
      const { webhook, secret } = await previousSecretUnreadable();
      const res = await t.call({ method: "GET", url: `/v1/webhooks/${webhook.id}/secret` });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ object: "webhook_secret", secret, previous_secret: null, previous_secret_expires_at: null });
    });

    it("keeps both secrets of two rotations made at once, the later signing and the earlier overlapping, so each caller's secret verifies", async () => {
      const webhook = await create();
      const rotate = () => t.call({ method: "POST", url: `/v1/webhooks/${webhook.id}/rotate-secret`, payload: { overlap_seconds: 3600 } });
      const answers = await Promise.all([rotate(), rotate()]);
      for (const res of answers) expect(res.statusCode, res.body).toBe(200);
      const told = answers.map((res) => res.json().secret as string);
      const stored = (await t.call({ method: "GET", url: `/v1/webhooks/${webhook.id}/secret` })).json();
      // As if made one after the other, in whichever order: none of them is told a secret that is not stored.
      expect([stored.secret, stored.previous_secret].sort()).toEqual([...told].sort());
      receiver.secrets = told;
      await send();
      await t.drainWebhooks();
      expect(receiver.received[0]!.verifiedWith.sort()).toEqual([0, 1]);
    });

    it("stores, of rotations made at once with nothing between their reads, the last as the secret and the one before it as the previous", async () => {
      const webhook = await create();
      const principal = { workspaceId: t.workspace.id, environment: "sandbox" as const, credential: { kind: "api_key" as const, id: "test", permission: "full_access" as const } };
      const told = (await Promise.all([1, 2, 3].map(() => t.runtime.services.webhooks.rotateSecret(principal, webhook.id, { overlap_seconds: 3600 })))).map((rotated) => rotated.secret);
      const stored = (await t.call({ method: "GET", url: `/v1/webhooks/${webhook.id}/secret` })).json();
      expect(told).toContain(stored.secret);
      expect(told).toContain(stored.previous_secret);
      expect(stored.previous_secret).not.toBe(stored.secret);
    });

    it("ends the old secret at once with overlap_seconds 0", async () => {
      const webhook = await create();
      const rotated = (await t.call({ method: "POST", url: `/v1/webhooks/${webhook.id}/rotate-secret`, payload: { overlap_seconds: 0 } })).json().secret as string;
      receiver.secrets = [webhook.secret!, rotated];
      await send();
      await t.drainWebhooks();
      expect(receiver.received[0]!.verifiedWith).toEqual([1]);
    });

    it("overlaps 24 hours when no body is sent", async () => {
      const webhook = await create();
      const res = await t.call({ method: "POST", url: `/v1/webhooks/${webhook.id}/rotate-secret` });
      expect(res.statusCode, res.body).toBe(200);
      const secret = (await t.call({ method: "GET", url: `/v1/webhooks/${webhook.id}/secret` })).json();
      expect(secret).toMatchObject({ previous_secret: webhook.secret, previous_secret_expires_at: new Date(t.clock.now() + 86_400_000).toISOString() });
    });

    it("refuses an overlap over 7 days with 422", async () => {
      const webhook = await create();
      const res = await t.call({ method: "POST", url: `/v1/webhooks/${webhook.id}/rotate-secret`, payload: { overlap_seconds: 604_801 } });
      expect(res.statusCode).toBe(422);
    });
  });

  /**
   * An endpoint disabled by its owner, with one event of the environment (whose delivery it had
   * received), and how many deliveries were stored then: a refused request must add none.
   */
  const disabledEndpoint = async () => {
    const webhook = await create();
    await send();
    await t.drainWebhooks();
    const eventId = receiver.received[0]!.id;
    const res = await t.call({ method: "PATCH", url: `/v1/webhooks/${webhook.id}`, payload: { enabled: false } });
    expect(res.statusCode, res.body).toBe(200);
    return { webhook, eventId, deliveries: await count("webhook_deliveries") };
  };
  /** A 409 webhook_disabled that names how to enable the endpoint, and nothing queued or sent. */
  const expectRefusedWhileDisabled = async (url: string, payload: Record<string, unknown>, before: { deliveries: number }) => {
    const sent = receiver.received.length;
    const res = await t.call({ method: "POST", url, payload });
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json()).toMatchObject({ code: "webhook_disabled", detail: expect.stringContaining("enabled: true") });
    expect(await count("webhook_deliveries")).toBe(before.deliveries);
    expect(Number(((await t.runtime.db.knex("webhook_deliveries").where({ state: "pending" }).count({ n: "*" }).first()) as { n: number | string }).n)).toBe(0);
    await t.drainWebhooks();
    expect(receiver.received).toHaveLength(sent);
  };

  describe("testWebhook", () => {
    beforeEach(() => open());

    it("queues a signed sample of the type asked for, subscribed or not, marked data.test", async () => {
      const webhook = await create({ event_types: ["message.delivered"] });
      const res = await t.call({ method: "POST", url: `/v1/webhooks/${webhook.id}/test`, payload: { type: "message.bounced" } });
      expect(res.statusCode, res.body).toBe(202);
      const delivery = res.json();
      expect(delivery).toEqual({
        object: "webhook_delivery",
        webhook_id: webhook.id,
        event_id: expect.stringMatching(/^evt_/),
        status: "pending",
        attempts: 0,
        next_attempt_at: new Date(t.clock.now()).toISOString(),
        last_attempt_at: null,
      });
      await t.drainWebhooks();
      const [received] = receiver.received;
      expect(received!.id).toBe(delivery.event_id);
      expect(received!.payload).toMatchObject({ id: delivery.event_id, object: "event", type: "message.bounced", environment: "sandbox", to_status: "bounced", data: { test: true } });
      expect((await attempts(webhook.id)).map((a) => [a.event_id, a.status])).toEqual([[delivery.event_id, "succeeded"]]);
    });

    it("shapes each message sample as the simulator's real event of its type: the same fields, in data too", async () => {
      const webhook = await create();
      const outcomes = ["delivered", "bounced", "deferred", "opened", "clicked", "complained", "unsubscribed", "replied"];
      await send(outcomes.map((outcome) => `${outcome}@simulator.test`));
      await t.drain();
      const real = new Map<string, Record<string, unknown>>();
      for (const event of (await t.call({ method: "GET", url: "/v1/events?limit=100" })).json().data) if (!real.has(event.type)) real.set(event.type, event);
      const shape = (event: Record<string, unknown>) => ({
        fields: Object.keys(event).sort(),
        data: Object.keys(event.data as object).filter((key) => key !== "simulated" && key !== "test").sort(),
        recipient: event.recipient === null ? null : "an address",
        from_status: event.from_status === null ? null : "a status",
      });
      const types = [...real.keys()].sort();
      expect(types).toEqual(["message.bounced", "message.clicked", "message.complained", "message.deferred", "message.delivered", "message.opened", "message.queued", "message.replied", "message.unsubscribed"]);
      for (const type of types) expect((await t.call({ method: "POST", url: `/v1/webhooks/${webhook.id}/test`, payload: { type } })).statusCode).toBe(202);
      await t.drainWebhooks();
      const samples = receiver.received.filter((r) => (r.payload.data as { test?: boolean }).test === true);
      expect(samples.map((s) => [s.payload.type, shape(s.payload as Record<string, unknown>)])).toEqual(types.map((type) => [type, shape(real.get(type)!)]));
    });

    it("refuses an unknown event type with 422", async () => {
      const webhook = await create();
      const res = await t.call({ method: "POST", url: `/v1/webhooks/${webhook.id}/test`, payload: { type: "message.exploded" } });
      expect(res.statusCode).toBe(422);
      expect(await count("webhook_deliveries")).toBe(0);
    });

    it("refuses a disabled endpoint with 409 webhook_disabled, since nothing is sent to it, and queues nothing", async () => {
      const disabled = await disabledEndpoint();
      await expectRefusedWhileDisabled(`/v1/webhooks/${disabled.webhook.id}/test`, { type: "message.delivered" }, disabled);
    });
  });

  describe("redeliverWebhookEvent", () => {
    beforeEach(() => open());

    it("sends a delivered event again with the same webhook-id and a fresh timestamp", async () => {
      const webhook = await create();
      await send();
      await t.drainWebhooks();
      const first = receiver.received[0]!;
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const res = await t.call({ method: "POST", url: `/v1/webhooks/${webhook.id}/redeliver`, payload: { event_id: first.id } });
      expect(res.statusCode, res.body).toBe(202);
      expect(res.json()).toMatchObject({ webhook_id: webhook.id, event_id: first.id, status: "pending", attempts: 0 });
      await t.drainWebhooks();
      const again = receiver.received[1]!;
      expect(again.id).toBe(first.id);
      expect(again.body).toBe(first.body);
      expect(again.timestamp).toBeGreaterThan(first.timestamp);
    });

    /**
     * Two deliveries claimed together for an endpoint that takes one request at a time: the second
     * waits behind the first, which the (manual) receiver holds until `change` has been made and
     * the endpoint's last read has aged out.
     */
    const secondWaitingBehindFirst = async (change: (webhook: Webhook) => Promise<void>) => {
      await open({ WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: "1" });
      const manual = await startManualReceiver();
      opened.push(manual);
      manual.secrets = receiver.secrets;
      const webhook = await create({ url: manual.url });
      // Both events are queued before the dispatcher starts, so one claim takes both deliveries.
      const [firstMessage, secondMessage] = [await send(), await send()];
      t.runtime.dispatcher.start();
      const first = await manual.next();
      await change(webhook);
      // A read of the endpoint serves the requests of the next ENDPOINT_REREAD_MS: past it, the next one reads again.
      await new Promise((resolve) => setTimeout(resolve, ENDPOINT_REREAD_MS + 20));
      first.answer(204);
      return { manual, webhook, firstMessage, secondMessage };
    };

    it("sends a delivery that waited behind a slow request to where the endpoint points now, not where it pointed at the claim", async () => {
      const { manual, firstMessage, secondMessage } = await secondWaitingBehindFirst(async (webhook) => {
        const res = await t.call({ method: "PATCH", url: `/v1/webhooks/${webhook.id}`, payload: { url: receiver.url } });
        expect(res.statusCode, res.body).toBe(200);
      });
      const [moved] = await receiver.waitFor(1);
      await t.runtime.dispatcher.stop();
      expect([manual.arrived.map((r) => r.payload.message_id), moved!.payload.message_id]).toEqual([[firstMessage], secondMessage]);
      expect(receiver.unverified).toEqual([]);
    });

    it("keeps a delivery that waited behind a slow request once the endpoint is disabled meanwhile, and sends it when the endpoint is enabled again", async () => {
      const { manual, webhook, secondMessage } = await secondWaitingBehindFirst(async (webhook) => {
        const res = await t.call({ method: "PATCH", url: `/v1/webhooks/${webhook.id}`, payload: { enabled: false } });
        expect(res.statusCode, res.body).toBe(200);
      });
      const events = (await t.call({ method: "GET", url: `/v1/messages/${secondMessage}/events` })).json().data as Array<{ id: string }>;
      await until("the waiting delivery to be given back", async () => (await delivery(webhook.id, events[0]!.id))?.locked_by === null);
      expect(manual.arrived).toHaveLength(1);
      expect(await delivery(webhook.id, events[0]!.id)).toMatchObject({ state: "pending" });
      expect((await t.call({ method: "PATCH", url: `/v1/webhooks/${webhook.id}`, payload: { enabled: true } })).statusCode).toBe(200);
      const resumed = await manual.next();
      resumed.answer(204);
      await t.runtime.dispatcher.stop();
      expect(resumed.payload.message_id).toBe(secondMessage);
      expect(manual.unverified).toEqual([]);
    });

    it("settles the delivery by the redelivery's answer when it is made during an attempt, whose late answer is recorded but not obeyed", async () => {
      // One request at a time: the redelivery is claimed while the first attempt is in flight, and waits for it.
      await open({ WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: "1", WEBHOOK_BATCH_SIZE: "1" });
      const manual = await startManualReceiver();
      opened.push(manual);
      manual.secrets = receiver.secrets;
      const webhook = await create({ url: manual.url });
      t.runtime.dispatcher.start();
      // Twice, and then a new event: the dispatcher lets go of both claims each time, or the
      // endpoint would soon hold its share for good and be left out of every claim.
      for (let round = 0; round < 2; round++) {
        await send();
        const first = await manual.next();
        const res = await t.call({ method: "POST", url: `/v1/webhooks/${webhook.id}/redeliver`, payload: { event_id: first.id } });
        expect(res.statusCode, res.body).toBe(202);
        first.answer(500);
        await until("the first attempt to be recorded", async () => (await attempts(webhook.id, `&event_id=${first.id}`)).length === 1);
        const again = await manual.next();
        expect(again.id).toBe(first.id);
        again.answer(204);
        await until("the redelivery to settle the delivery", async () => (await delivery(webhook.id, first.id)).state === "succeeded");
        expect((await attempts(webhook.id, `&event_id=${first.id}`)).map((a) => [a.attempt, a.status, a.response_status])).toEqual([
          [1, "succeeded", 204],
          [1, "failed", 500],
        ]);
        expect(await delivery(webhook.id, first.id)).toMatchObject({ state: "succeeded", locked_by: null });
        expect(Number((await delivery(webhook.id, first.id)).attempts)).toBe(1);
      }
      await send();
      const last = await manual.next();
      last.answer(204);
      await until("the new event's delivery to settle", async () => (await delivery(webhook.id, last.id)).state === "succeeded");
      await t.runtime.dispatcher.stop();
      // Nothing is left to retry: the failed answers did not schedule another attempt.
      t.clock.advance(RETRY_DELAYS_MS[0]!);
      await t.drainWebhooks();
      expect(manual.arrived).toHaveLength(5);
      expect(manual.unverified).toEqual([]);
    });

    it("answers 404 for an event of the other environment or another workspace", async () => {
      const webhook = await create();
      await t.verifiedDomain("acme.example");
      const live = await send("ada@example.com", t.workspace.liveKey);
      const other = await send("ada@example.com", t.other.sandboxKey);
      for (const [messageId, key] of [[live, t.workspace.liveKey], [other, t.other.sandboxKey]] as const) {
        const eventId = (await t.call({ method: "GET", url: `/v1/messages/${messageId}/events`, key })).json().data[0].id as string;
        const res = await t.call({ method: "POST", url: `/v1/webhooks/${webhook.id}/redeliver`, payload: { event_id: eventId } });
        expect(res.statusCode, res.body).toBe(404);
      }
      expect(await count("webhook_deliveries")).toBe(0);
    });

    it("refuses a disabled endpoint with 409 webhook_disabled, and leaves the event's delivery as it was", async () => {
      const disabled = await disabledEndpoint();
      await expectRefusedWhileDisabled(`/v1/webhooks/${disabled.webhook.id}/redeliver`, { event_id: disabled.eventId }, disabled);
      expect(await delivery(disabled.webhook.id, disabled.eventId)).toMatchObject({ state: "succeeded" });
    });
  });

  describe("replayWebhookEvents", () => {
    beforeEach(() => open());

    it("queues again, in the events' order, only the deliveries that failed since the time given", async () => {
      const webhook = await create();
      const before = await send(); // succeeds, and is not replayed
      await t.drainWebhooks();
      const since = new Date(t.clock.now() + 1).toISOString();
      t.clock.advance(1000);
      receiver.otherwise = { status: 500 };
      const failing = [await send(), await send(), await send()];
      // Eight attempts each, on the schedule, then failed.
      await t.drainWebhooks();
      for (const delay of RETRY_DELAYS_MS) {
        t.clock.advance(delay);
        await t.drainWebhooks();
      }
      const deliveries = (await t.runtime.db.knex("webhook_deliveries").where({ state: "failed" })) as unknown[];
      expect(deliveries).toHaveLength(3);
      receiver.received.length = 0;
      receiver.otherwise = { status: 200 };
      const res = await t.call({ method: "POST", url: `/v1/webhooks/${webhook.id}/replay`, payload: { since } });
      expect(res.statusCode, res.body).toBe(202);
      expect(res.json()).toEqual({ object: "webhook_replay", webhook_id: webhook.id, since, count: 3 });
      await t.drainWebhooks();
      expect(receiver.received.map((r) => r.payload.message_id)).toEqual(failing);
      expect(receiver.received.map((r) => r.payload.message_id)).not.toContain(before);
    });

    it("refuses a disabled endpoint with 409 webhook_disabled: enable it first, which resumes what is queued", async () => {
      const disabled = await disabledEndpoint();
      await expectRefusedWhileDisabled(`/v1/webhooks/${disabled.webhook.id}/replay`, { since: new Date(0).toISOString() }, disabled);
    });
  });

  describe("listWebhookAttempts", () => {
    beforeEach(() => open());

    it("records each attempt, newest first, with the status, the first 2 KB of the answer and how long it took", async () => {
      const webhook = await create();
      receiver.script({ status: 500, body: "é".repeat(3000) }, { status: 200, body: "ok" });
      await send();
      await t.drainWebhooks();
      t.clock.advance(RETRY_DELAYS_MS[0]!);
      await t.drainWebhooks();
      const list = await attempts(webhook.id);
      expect(list.map((a) => [a.attempt, a.status, a.response_status, a.error])).toEqual([
        [2, "succeeded", 200, null],
        [1, "failed", 500, null],
      ]);
      expect(list[0]!.response_body).toBe("ok");
      expect(Buffer.byteLength(list[1]!.response_body!)).toBeLessThanOrEqual(2048);
      expect(list[1]!.response_body!.startsWith("é".repeat(1000))).toBe(true);
      for (const attempt of list) expect(attempt.duration_ms).toBeGreaterThanOrEqual(0);
      expect((await attempts(webhook.id, "&status=failed")).map((a) => a.attempt)).toEqual([1]);
      expect((await attempts(webhook.id, `&event_id=${list[0]!.event_id}`))).toHaveLength(2);
      expect(await attempts(webhook.id, "&event_id=evt_00000000000000000000000000")).toEqual([]);
    });

    it("prunes every attempt past the retention in one round, however many there are", async () => {
      const webhook = await create();
      const old = Array.from({ length: 2300 }, (_, i) => ({
        id: `wha_old${String(i).padStart(22, "0")}`,
        endpoint_id: webhook.id,
        event_id: "evt_00000000000000000000000000",
        attempt: 1,
        status: "failed",
        response_status: 500,
        response_body: null,
        error: null,
        duration_ms: 1,
        created_at: t.clock.now(),
      }));
      for (let i = 0; i < old.length; i += 250) await t.runtime.db.knex("webhook_attempts").insert(old.slice(i, i + 250));
      t.clock.advance(30 * 24 * 3600 * 1000 + 1);
      expect(await t.runtime.services.webhooks.prune()).toBe(2300);
      expect(await count("webhook_attempts")).toBe(0);
    });

    it("keeps attempts and settled deliveries 30 days, pending ones until they settle", async () => {
      const webhook = await create();
      await send();
      await t.drainWebhooks();
      receiver.otherwise = { status: 500 };
      t.clock.advance(10 * 24 * 3600 * 1000);
      await send();
      await t.drainWebhooks();
      t.clock.advance(20 * 24 * 3600 * 1000 + 1);
      expect(await t.runtime.services.webhooks.prune()).toBe(2); // the first attempt and its delivery
      expect((await attempts(webhook.id)).map((a) => a.status)).toEqual(["failed"]);
      expect((await t.runtime.db.knex("webhook_deliveries").select("state")).map((d: { state: string }) => d.state)).toEqual(["pending"]);
    });

    it("answers 404 for another workspace's endpoint", async () => {
      const webhook = await create();
      const res = await t.call({ method: "GET", url: `/v1/webhooks/${webhook.id}/attempts`, key: t.other.sandboxKey });
      expect(res.statusCode).toBe(404);
    });
  });

  describe("delivery", () => {
    it("sends exactly the simulator's documented events, each once, in per-message sequence order", async () => {
      await open({ WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: "1" });
      await create();
      const messages = new Map<string, string[]>();
      for (const { address, events } of SIMULATED) messages.set(await send(address), events);
      await t.drain();
      t.clock.advance(t.runtime.config.sandbox.deferSeconds * 1000);
      await t.drain();
      await t.drainWebhooks();
      expect(receiver.unverified).toEqual([]);
      const ids = receiver.received.map((r) => r.id);
      expect(new Set(ids).size).toBe(ids.length);
      for (const [messageId, expected] of messages) {
        const mine = receiver.received.filter((r) => r.payload.message_id === messageId);
        // One at a time per endpoint, oldest first: they arrive in sequence order.
        expect(mine.map((r) => r.payload.sequence)).toEqual(expected.map((_, i) => i + 1));
        expect(mine.map((r) => r.payload.type)).toEqual(expected);
        for (const r of mine) expect(r.id).toBe(r.payload.id);
      }
      expect(receiver.received).toHaveLength([...messages.values()].flat().length);
      // The payload is the event as the API shows it.
      const first = receiver.received[0]!;
      const listed = (await t.call({ method: "GET", url: `/v1/messages/${first.payload.message_id}/events` })).json().data[0];
      expect(first.payload).toEqual(listed);
    });

    it("retries 500 five times on the schedule, then succeeds: six attempts, one webhook-id, fresh timestamps", async () => {
      await open();
      const webhook = await create();
      receiver.script(...Array.from({ length: 5 }, () => ({ status: 500 })));
      await send();
      const start = t.clock.now();
      await t.drainWebhooks();
      let elapsed = 0;
      for (const delay of RETRY_DELAYS_MS.slice(0, 5)) {
        t.clock.set(start + elapsed + delay - 1);
        expect(await tick(), `not before ${delay} ms`).toBe(0);
        t.clock.set(start + elapsed + delay);
        elapsed += delay;
        expect(await tick()).toBe(1);
      }
      expect(receiver.received.map((r) => r.answered)).toEqual([500, 500, 500, 500, 500, 204]);
      expect(new Set(receiver.received.map((r) => r.id)).size).toBe(1);
      const timestamps = receiver.received.map((r) => r.timestamp);
      expect([...timestamps].sort()).toEqual(timestamps);
      expect((await attempts(webhook.id)).map((a) => a.attempt)).toEqual([6, 5, 4, 3, 2, 1]);
      expect(await get(webhook.id)).toMatchObject({ failing_since: null, status: "enabled" });
      t.clock.advance(24 * 3600 * 1000);
      expect(await tick()).toBe(0);
    });

    it("waits for Retry-After when it asks for longer than the schedule", async () => {
      await open();
      await create();
      receiver.script({ status: 503, headers: { "retry-after": "600" } });
      await send();
      await t.drainWebhooks();
      t.clock.advance(RETRY_DELAYS_MS[0]!);
      expect(await tick()).toBe(0);
      t.clock.advance(600_000 - RETRY_DELAYS_MS[0]!);
      expect(await tick()).toBe(1);
      expect(receiver.received.map((r) => r.answered)).toEqual([503, 204]);
    });

    it("disables the endpoint on 410 Gone and fails the delivery", async () => {
      await open();
      const webhook = await create();
      receiver.otherwise = { status: 410 };
      await send();
      await t.drainWebhooks();
      expect(await get(webhook.id)).toMatchObject({ enabled: false, status: "disabled", disabled_reason: "gone", disabled_at: new Date(t.clock.now()).toISOString() });
      expect(await parkedOf(webhook.id)).toEqual([true]);
      t.clock.advance(3600_000);
      await send();
      await t.drainWebhooks();
      expect(receiver.received).toHaveLength(1);
      expect((await t.runtime.db.knex("webhook_deliveries").select("state")).map((d: { state: string }) => d.state)).toEqual(["failed"]);
    });

    it("sends nothing more after a 410: a delivery claimed with it and waiting behind it stays pending, parked with the endpoint", async () => {
      await open({ WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: "1" });
      const webhook = await create({ event_types: ["message.queued"] });
      receiver.otherwise = { status: 410 };
      await send();
      await send();
      // One claim takes both; the second waits for the endpoint's only slot while the first gets its 410.
      expect(await tick()).toBe(2);
      expect(receiver.received).toHaveLength(1);
      await t.drainWebhooks();
      const rows = (await t.runtime.db.knex("webhook_deliveries").where({ endpoint_id: webhook.id }).orderBy("event_id").select("state", "attempts")) as Array<{ state: string; attempts: number | string }>;
      expect(rows.map((r) => [r.state, Number(r.attempts)])).toEqual([
        ["failed", 1],
        ["pending", 0],
      ]);
      expect(await parkedOf(webhook.id)).toEqual([true, true]);
      expect(receiver.received).toHaveLength(1);
    });

    it("counts attempts by outcome on /metrics, and shows the pending deliveries' queue without a disabled endpoint's", async () => {
      await open();
      const webhook = await create({ event_types: ["message.queued"] });
      const metric = async (series: string) => {
        const body = (await t.call({ method: "GET", url: "/metrics", key: null })).body;
        const line = body.split("\n").find((l) => l.startsWith(`${series} `));
        return line === undefined ? null : Number(line.slice(series.length + 1));
      };
      const queue = async () => [await metric("mailroom_webhook_queue_depth"), await metric("mailroom_webhook_queue_due"), await metric("mailroom_webhook_queue_oldest_due_age_seconds")];
      receiver.script({ status: 500 });
      await send();
      t.clock.advance(2000);
      expect(await queue()).toEqual([1, 1, 2]);
      expect(await tick()).toBe(1);
      expect([await metric('mailroom_webhook_attempts_total{outcome="retrying"}'), await queue()]).toEqual([1, [1, 0, 0]]);
      t.clock.advance(RETRY_DELAYS_MS[0]!);
      expect(await tick()).toBe(1);
      expect([await metric('mailroom_webhook_attempts_total{outcome="succeeded"}'), await queue()]).toEqual([1, [0, 0, 0]]);
      receiver.otherwise = { status: 410 };
      await send();
      expect(await tick()).toBe(1);
      expect(await metric('mailroom_webhook_attempts_total{outcome="failed"}')).toBe(1);

      // A delivery held for a disabled endpoint waits for it to be enabled: it is not in the queue.
      receiver.otherwise = { status: 204 };
      expect((await t.call({ method: "PATCH", url: `/v1/webhooks/${webhook.id}`, payload: { enabled: true } })).statusCode).toBe(200);
      await send();
      expect(await queue()).toEqual([1, 1, 0]);
      expect((await t.call({ method: "PATCH", url: `/v1/webhooks/${webhook.id}`, payload: { enabled: false } })).statusCode).toBe(200);
      expect(await t.runtime.db.knex("webhook_deliveries").where({ state: "pending" }).count({ n: "*" }).first()).toEqual({ n: 1 });
      expect(await queue()).toEqual([0, 0, 0]);
    });

    it("counts a receiver that answers after the timeout as a failed attempt, made when it began, and retries it", async () => {
      await open({ WEBHOOK_TIMEOUT_MS: "300" });
      const webhook = await create();
      const began = t.clock.now();
      // The clock moves on while the request waits for its answer.
      receiver.script({ delayMs: 1000, onArrival: () => t.clock.advance(1000) });
      await send();
      await t.drainWebhooks();
      const [attempt] = await attempts(webhook.id);
      expect(attempt).toMatchObject({ status: "failed", error: "timeout", response_status: null, created_at: new Date(began).toISOString() });
      expect(attempt!.duration_ms).toBeGreaterThanOrEqual(300);
      expect(attempt!.duration_ms).toBeLessThan(1000);
      t.clock.advance(RETRY_DELAYS_MS[0]!);
      await t.drainWebhooks();
      expect((await attempts(webhook.id)).map((a) => a.status)).toEqual(["succeeded", "failed"]);
    });

    it.each([
      ["cannot be reached (nothing listens on its port)", (dns: DnsServer) => dns.close()],
      ["refuses to answer", async (dns: DnsServer) => dns.fail("hooks.test", "REFUSED")],
    ])("records a failed attempt as a dns error, not a refused connection, when the resolver (DNS_SERVERS) %s", async (_label, breakResolver) => {
      const dns = await startDnsServer();
      opened.push({ close: () => dns.close().catch(() => undefined) }); // closed already when it is to be unreachable
      await open({ DNS_SERVERS: dns.address });
      const webhook = await create({ url: "http://hooks.test/hooks" });
      await breakResolver(dns);
      await send();
      await t.drainWebhooks();
      expect((await attempts(webhook.id))[0]).toMatchObject({ status: "failed", error: "dns", response_status: null });
    });

    it("does not follow a 302: the attempt fails and the redirect target receives nothing", async () => {
      await open();
      const elsewhere = await startWebhookReceiver();
      opened.push(elsewhere);
      const webhook = await create();
      elsewhere.secrets = receiver.secrets;
      receiver.script({ status: 302, headers: { location: elsewhere.url } });
      await send();
      await t.drainWebhooks();
      expect(elsewhere.received).toHaveLength(0);
      expect((await attempts(webhook.id))[0]).toMatchObject({ status: "failed", response_status: 302, error: "redirect_not_followed" });
    });

    /** An endpoint whose receiver answers 500 and whose first attempt failed at `start`: failing since. */
    const failingEndpoint = async () => {
      await open();
      const webhook = await create();
      receiver.otherwise = { status: 500 };
      const start = t.clock.now();
      await send();
      await t.drainWebhooks();
      expect((await get(webhook.id)).failing_since).toBe(new Date(start).toISOString());
      return { webhook, start };
    };

    it("disables an endpoint that has failed for 5 days, with the webhook_endpoint.disabled notice on it", async () => {
      const { webhook, start } = await failingEndpoint();
      t.clock.set(start + 5 * 24 * 3600 * 1000 - 1);
      await send();
      await t.drainWebhooks();
      expect((await get(webhook.id)).status).toBe("enabled");
      t.clock.set(start + 5 * 24 * 3600 * 1000);
      await send();
      await t.drainWebhooks();
      expect(await get(webhook.id)).toMatchObject({ status: "disabled", enabled: false, disabled_reason: "failing", disabled_at: new Date(t.clock.now()).toISOString(), failing_since: new Date(start).toISOString() });
      // Its backlog leaves the claim index (the next look parks it).
      await t.drainWebhooks();
      expect(await parkedOf(webhook.id)).toEqual([true, true, true]);
      // Re-enabling starts afresh.
      const enabled = await t.call({ method: "PATCH", url: `/v1/webhooks/${webhook.id}`, payload: { enabled: true } });
      expect(enabled.json()).toMatchObject({ status: "enabled", disabled_reason: null, failing_since: null });
      await t.drainWebhooks();
      expect(await parkedOf(webhook.id)).toEqual([false, false, false]);
    });

    it("clears failing_since after a success", async () => {
      await open();
      const webhook = await create();
      receiver.script({ status: 500 });
      await send();
      await t.drainWebhooks();
      expect((await get(webhook.id)).failing_since).not.toBeNull();
      t.clock.advance(RETRY_DELAYS_MS[0]!);
      await t.drainWebhooks();
      expect((await get(webhook.id)).failing_since).toBeNull();
    });

    /**
     * Outcomes are committed in batches (group commit). Records, in one batch, attempts of the
     * endpoint's newest deliveries (oldest of them first) that got these answers, 1 ms apart from
     * now. The deliveries are left as they are (the lease given is not theirs); the attempts and
     * the endpoint's health are written as the dispatcher's would be.
     */
    const recordTogether = async (webhookId: string, answers: number[]) => {
      const eventIds = ((await t.runtime.db.knex("webhook_deliveries").where({ endpoint_id: webhookId }).orderBy("event_id", "desc").limit(answers.length).pluck("event_id")) as string[]).reverse();
      const rows = await Promise.all(eventIds.map(async (eventId) => (await t.runtime.repositories.webhookDeliveries.find({ endpointId: webhookId, eventId }))!));
      const at = t.clock.now();
      const outcomes = answers.map((status, i) => outcomeOf(rows[i]!, { status, body: null, retryAfter: null, error: null, durationMs: 1 }, { startedAt: at + i, at: at + i }, "not-the-delivery's-lease"));
      const { groupCommit, webhookDeliveries } = t.runtime.repositories;
      await Promise.all(groupCommit.submitTogether(webhookDeliveries.outcomeWriter, outcomes));
      return at;
    };

    it("starts failing_since afresh at a failure that follows a success recorded with it, so an endpoint failing for 5 days that just succeeded stays enabled", async () => {
      const { webhook, start } = await failingEndpoint();
      t.clock.set(start + 5 * 24 * 3600 * 1000);
      await send();
      await send();
      const at = await recordTogether(webhook.id, [204, 503]);
      expect(await get(webhook.id)).toMatchObject({ status: "enabled", failing_since: new Date(at + 1).toISOString() });
    });

    it("starts failing_since at the first of the failures recorded together, not the last", async () => {
      await open();
      const webhook = await create();
      await send();
      await send();
      const failedAt = await recordTogether(webhook.id, [500, 503]);
      expect((await get(webhook.id)).failing_since).toBe(new Date(failedAt).toISOString());
    });

    it("clears failing_since when the last of the attempts recorded together is a success, after failures", async () => {
      await open();
      const webhook = await create();
      await send();
      await send();
      await recordTogether(webhook.id, [500, 503]);
      t.clock.advance(1000);
      await send();
      await send();
      await recordTogether(webhook.id, [500, 204]);
      expect((await get(webhook.id)).failing_since).toBeNull();
    });

    it("records secret_unavailable without sending while the endpoint's secret cannot be opened, and delivers on the schedule once the old key is SECRET_KEY_PREVIOUS", async () => {
      const [oldKey, newKey] = ["0a".repeat(32), "1b".repeat(32)];
      await open({ SECRET_KEY: oldKey });
      const webhook = await create();
      await send();
      // SECRET_KEY changed without SECRET_KEY_PREVIOUS: the endpoint's sealed secret no longer opens.
      await t.restart({ SECRET_KEY: newKey });
      const failedAt = t.clock.now();
      await t.drainWebhooks();
      expect([receiver.received, receiver.unverified]).toEqual([[], []]);
      const [attempt, ...others] = await attempts(webhook.id);
      expect(others).toEqual([]);
      expect(attempt).toMatchObject({ attempt: 1, status: "failed", response_status: null, response_body: null, error: "secret_unavailable", duration_ms: 0 });
      const queued = (await t.runtime.db.knex("webhook_deliveries").where({ endpoint_id: webhook.id, event_id: attempt!.event_id }).first()) as { state: string; attempts: number | string; due_at: number | string; locked_by: string | null };
      expect([queued.state, Number(queued.attempts), Number(queued.due_at), queued.locked_by]).toEqual(["pending", 1, failedAt + RETRY_DELAYS_MS[0]!, null]);
      // Not the receiver's doing, but nothing reaches it: it is failing like any endpoint that gets nothing.
      expect((await get(webhook.id)).failing_since).toBe(new Date(failedAt).toISOString());

      await t.restart({ SECRET_KEY: newKey, SECRET_KEY_PREVIOUS: oldKey });
      t.clock.advance(RETRY_DELAYS_MS[0]!);
      await t.drainWebhooks();
      expect(receiver.received.map((r) => r.payload.type)).toEqual(["message.queued"]);
      expect((await attempts(webhook.id)).map((a) => [a.attempt, a.status])).toEqual([[2, "succeeded"], [1, "failed"]]);
      expect((await get(webhook.id)).failing_since).toBeNull();
    });

    it("signs with the current secret alone when only the previous one, still in its overlap, cannot be opened", async () => {
      const { webhook, secret } = await previousSecretUnreadable();
      receiver.secrets.splice(0, receiver.secrets.length, secret);
      await send();
      await t.drainWebhooks();
      expect(receiver.received.map((r) => r.payload.type)).toEqual(["message.queued"]);
      expect(String(receiver.received[0]!.headers["webhook-signature"]).split(" ")).toHaveLength(1);
      expect((await attempts(webhook.id)).map((a) => [a.status, a.error])).toEqual([["succeeded", null]]);
    });

    it("fails a delivery whose event row is gone with one event_missing attempt, sending nothing and leaving the endpoint's health alone", async () => {
      await open();
      const webhook = await create();
      const knex = t.runtime.db.knex;
      const sendWithoutEvent = async () => {
        const { id } = (await knex("events").where({ message_id: await send() }).first("id")) as { id: string };
        await knex("events").where({ id }).delete();
        return id;
      };
      const eventId = await sendWithoutEvent();
      await t.drainWebhooks();
      expect([receiver.received, receiver.unverified]).toEqual([[], []]);
      expect(await attempts(webhook.id)).toEqual([expect.objectContaining({ event_id: eventId, attempt: 1, status: "failed", response_status: null, error: "event_missing", duration_ms: 0 })]);
      expect(await delivery(webhook.id, eventId)).toMatchObject({ state: "failed", locked_by: null });
      t.clock.advance(24 * 3600 * 1000);
      expect(await tick()).toBe(0);
      expect(await attempts(webhook.id)).toHaveLength(1);
      // Neither starts failing_since (above) nor clears it: it says nothing about the receiver.
      expect((await get(webhook.id)).failing_since).toBeNull();
      receiver.script({ status: 500 });
      await send();
      await t.drainWebhooks();
      const failingSince = (await get(webhook.id)).failing_since;
      expect(failingSince).not.toBeNull();
      t.clock.advance(1000);
      await sendWithoutEvent();
      await t.drainWebhooks();
      expect((await attempts(webhook.id)).map((a) => a.error)).toEqual(["event_missing", null, "event_missing"]);
      expect((await get(webhook.id)).failing_since).toBe(failingSince);
    });

    it("on shutdown, finishes the request in flight and gives back the deliveries still waiting, unsent", async () => {
      await open({ WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: "1" });
      await create();
      receiver.otherwise = { status: 204, delayMs: 800 };
      for (let i = 0; i < 3; i++) await send();
      t.runtime.dispatcher.start();
      await new Promise((resolve) => setTimeout(resolve, 300));
      await t.runtime.dispatcher.stop();
      expect(receiver.received).toHaveLength(1);
      const rows = (await t.runtime.db.knex("webhook_deliveries").orderBy("event_id").select("state", "attempts", "locked_by")) as Array<{ state: string; attempts: number; locked_by: string | null }>;
      expect(rows.map((r) => [r.state, Number(r.attempts), r.locked_by])).toEqual([
        ["succeeded", 1, null],
        ["pending", 0, null],
        ["pending", 0, null],
      ]);
      // Claimable again at once, by this worker or another.
      receiver.otherwise = { status: 204 };
      await t.drainWebhooks();
      expect(receiver.received).toHaveLength(3);
    });

    it("keeps sending a healthy endpoint's events while endpoints that never answer have backlogs: each holds only its own share", async () => {
      // Scaled down: one request in flight per endpoint, four in all, claims of four. The dead
      // endpoints' 60 deliveries are older than the healthy one's 20 and would fill every claim.
      await open({ WEBHOOK_CONCURRENCY: "4", WEBHOOK_BATCH_SIZE: "4", WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: "1", WEBHOOK_TIMEOUT_MS: "1000" });
      const dead: Webhook[] = [];
      for (let i = 0; i < 3; i++) {
        const silent = await startManualReceiver(); // accepts every request and never answers
        opened.push(silent);
        silent.secrets = receiver.secrets;
        dead.push(await create({ url: silent.url, event_types: ["message.queued"] }));
      }
      await create({ event_types: ["message.delivered"] });
      const messages: string[] = [];
      for (let i = 0; i < 20; i++) messages.push(await send());
      await t.drain();
      t.runtime.dispatcher.start();
      // Each dead endpoint works through its backlog one timeout at a time (20 s); the healthy one must not wait for that.
      await receiver.waitFor(20, 10_000);
      expect(receiver.received.map((r) => r.payload.message_id).sort()).toEqual([...messages].sort());
      expect(receiver.unverified).toEqual([]);
      for (const webhook of dead) {
        const untried = await t.runtime.db.knex("webhook_deliveries").where({ endpoint_id: webhook.id, state: "pending", attempts: 0 }).count({ n: "*" }).first();
        expect(Number((untried as { n: number | string }).n)).toBeGreaterThan(0);
      }
    });

    it("keeps no in-flight slots for endpoints once their deliveries are done, so a long-running worker does not grow with every endpoint it ever sent to", async () => {
      await open();
      const webhooks = [];
      for (let i = 0; i < 5; i++) webhooks.push(await create({ event_types: ["message.queued"] }));
      await send();
      await t.drainWebhooks();
      expect(receiver.received).toHaveLength(5);
      expect(t.runtime.dispatcher.endpointsWithSlots).toBe(0);
      // And deleted endpoints leave nothing behind either.
      for (const webhook of webhooks) expect((await t.call({ method: "DELETE", url: `/v1/webhooks/${webhook.id}` })).statusCode).toBe(200);
      await create({ event_types: ["message.queued"] });
      await send();
      await t.drainWebhooks();
      expect(receiver.received).toHaveLength(6);
      expect(t.runtime.dispatcher.endpointsWithSlots).toBe(0);
    });

    it("sends an environment's events only to that environment's endpoints", async () => {
      await open();
      await create({}, t.workspace.liveKey);
      await send();
      await t.drainWebhooks();
      expect(receiver.received).toHaveLength(0);
    });
  });

  describe("refusing private targets (WEBHOOK_ALLOW_PRIVATE_TARGETS=false)", () => {
    let dns: DnsServer;
    beforeEach(async () => {
      dns = await startDnsServer();
      opened.push(dns);
      await open({ WEBHOOK_ALLOW_PRIVATE_TARGETS: "false", DNS_SERVERS: dns.address });
    });

    it.each([
      "http://127.0.0.1/hooks",
      "http://127.1.2.3/hooks",
      "http://2130706433/hooks",
      "http://10.1.2.3/hooks",
      "http://172.16.0.1/hooks",
      "http://172.31.255.254/hooks",
      "http://192.168.1.1/hooks",
      "http://169.254.169.254/latest/meta-data",
      "http://100.64.0.1/hooks",
      "http://0.0.0.0/hooks",
      "http://[::1]/hooks",
      "http://[::]/hooks",
      "http://[fe80::1]/hooks",
      "http://[fc00::1]/hooks",
      "http://[fd12:3456::1]/hooks",
      "http://[::ffff:127.0.0.1]/hooks",
      "http://[::ffff:10.0.0.1]/hooks",
      "http://[::ffff:169.254.169.254]/hooks",
      "http://[64:ff9b::7f00:1]/hooks",
      "http://[2002:7f00:1::1]/hooks",
      "http://[2002:a00:1::1]/hooks",
    ])("refuses %s when saved with 422 webhook_target_not_allowed and stores nothing", async (url) => {
      const res = await t.call({ method: "POST", url: "/v1/webhooks", payload: { url } });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json()).toMatchObject({ code: "webhook_target_not_allowed", errors: [{ pointer: "/url" }] });
      expect(await count("webhook_endpoints")).toBe(0);
    });

    // IPv4-mapped, NAT64 and 6to4 addresses are judged by the IPv4 address they carry, not refused whole.
    it.each(["http://[::ffff:93.184.216.34]/hooks", "http://[64:ff9b::5db8:d822]/hooks", "http://[2002:5db8:d822::1]/hooks"])("accepts %s, which carries a public IPv4 address", async (url) => {
      const res = await t.call({ method: "POST", url: "/v1/webhooks", payload: { url } });
      expect(res.statusCode, res.body).toBe(201);
    });

    it("refuses a host name that resolves to a loopback address, when saved and when changed", async () => {
      dns.set("loopback.test", [{ type: "A", address: "127.0.0.1" }]);
      dns.set("v6.test", [{ type: "AAAA", address: "::1" }]);
      dns.set("public.test", [{ type: "A", address: "93.184.216.34" }]);
      for (const [url, host, address] of [
        ["http://loopback.test/hooks", "loopback.test", "127.0.0.1"],
        ["http://v6.test/hooks", "v6.test", "::1"],
      ]) {
        const res = await t.call({ method: "POST", url: "/v1/webhooks", payload: { url } });
        expect(res.statusCode, url).toBe(422);
        expect(res.json()).toMatchObject({ code: "webhook_target_not_allowed", errors: [{ pointer: "/url", message: `${host} resolves to a private, loopback or link-local address` }] });
        // The answer maps no internal name to its address.
        expect(res.body).not.toContain(address);
      }
      const ok = await t.call({ method: "POST", url: "/v1/webhooks", payload: { url: "https://public.test/hooks" } });
      expect(ok.statusCode).toBe(201);
      const patched = await t.call({ method: "PATCH", url: `/v1/webhooks/${ok.json().id}`, payload: { url: "http://loopback.test/x" } });
      expect(patched.statusCode).toBe(422);
      // A host that does not resolve yet is accepted: it is checked again at every delivery.
      expect((await t.call({ method: "POST", url: "/v1/webhooks", payload: { url: "https://not-yet.test/hooks" } })).statusCode).toBe(201);
    });

    it("refuses at connect time a name re-pointed at loopback after it was saved (DNS rebinding): no connection is made", async () => {
      const canary = await startCanary("::");
      opened.push(canary);
      dns.set("rebind.test", [{ type: "A", address: "93.184.216.34" }]);
      const res = await t.call({ method: "POST", url: "/v1/webhooks", payload: { url: `http://rebind.test:${canary.port}/hooks` } });
      expect(res.statusCode, res.body).toBe(201);
      dns.set("rebind.test", [{ type: "A", address: "127.0.0.1" }]);
      await send();
      await t.drainWebhooks();
      expect(canary.connections).toBe(0);
      expect((await attempts(res.json().id))[0]).toMatchObject({ status: "failed", error: "target_not_allowed", response_status: null });
    });

    // The loopback forms reach the canary (listening on every local address) if anything connects.
    it.each(["127.0.0.1", "[::1]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "0.0.0.0", "[::]", "[::127.0.0.1]"])(
      "refuses to connect to %s at delivery time, even when stored before the guard was on",
      async (host) => {
        const canary = await startCanary("::");
        opened.push(canary);
        const res = await t.call({ method: "POST", url: "/v1/webhooks", payload: { url: "https://public-later.test/hooks" } });
        expect(res.statusCode).toBe(201);
        // As if saved while the operator allowed private targets.
        await t.runtime.db.knex("webhook_endpoints").update({ url: `http://${host}:${canary.port}/hooks` });
        await send();
        await t.drainWebhooks();
        expect(canary.connections).toBe(0);
        expect((await attempts(res.json().id))[0]).toMatchObject({ status: "failed", error: "target_not_allowed", response_status: null });
      },
    );

    // Addresses no test can listen on: refused before connecting (otherwise a timeout or a network error).
    it.each(["10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "[fe80::1]", "[fc00::1]", "[::ffff:10.0.0.1]"])(
      "refuses to connect to %s at delivery time",
      async (host) => {
        const res = await t.call({ method: "POST", url: "/v1/webhooks", payload: { url: "https://public-later.test/hooks" } });
        await t.runtime.db.knex("webhook_endpoints").update({ url: `http://${host}/hooks` });
        await send();
        await t.drainWebhooks();
        const [attempt] = await attempts(res.json().id);
        expect(attempt).toMatchObject({ status: "failed", error: "target_not_allowed", response_status: null });
        expect(attempt!.duration_ms).toBeLessThan(1000); // not a 15 s timeout
      },
    );
  });
});

