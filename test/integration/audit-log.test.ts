import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { databases } from "../helpers/databases.js";
import { DashboardSession, signedUp } from "../helpers/dashboard-session.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

interface AuditEvent {
  id: string;
  environment: string;
  operation: string;
  actor: { type: string; id: string };
  target: { type: string; id: string | null };
  fields: string[];
  ip_address: string | null;
  request_id: string;
  created_at: string;
}

describe.each(databases)("audit log ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(database);
  });
  afterEach(async () => t.close());

  const auditLog = async (query = "", key?: string): Promise<AuditEvent[]> => {
    const res = await t.call({ method: "GET", url: `/v1/audit-events${query}`, ...(key ? { key } : {}) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };
  /** The id of the key a TestApp secret belongs to, as the audit log names it. */
  const keyIdOf = async (secret: string) => {
    const keys = (await t.call({ method: "GET", url: "/v1/api-keys?limit=100", key: secret })).json().data as Array<{ id: string; redacted_key: string }>;
    return keys.find((k) => k.redacted_key.endsWith(secret.slice(-4)))!.id;
  };

  describe("listAuditEvents", () => {
    it("records a change with who made it, what it changed, the fields given, the address and the request id", async () => {
      const created = await t.call({ method: "POST", url: "/v1/api-keys", remoteAddress: "203.0.113.7", payload: { name: "Billing", permission: "sending_access", restrictions: { sender_domains: ["acme.example"] } } });
      expect(created.statusCode).toBe(201);
      const [event, ...rest] = await auditLog();
      expect(rest).toEqual([]);
      expect(event).toEqual({
        id: expect.stringMatching(/^aud_[0-9a-z]{26}$/),
        object: "audit_event",
        environment: "sandbox",
        operation: "createApiKey",
        actor: { type: "api_key", id: await keyIdOf(t.workspace.sandboxKey) },
        target: { type: "api_key", id: created.json().id },
        fields: ["name", "permission", "restrictions"],
        ip_address: "203.0.113.7",
        request_id: created.headers["request-id"],
        created_at: new Date(t.clock.now()).toISOString(),
      });
    });

    it("names the fields the request gave, not those the contract's defaults filled in", async () => {
      const requests = [
        { url: "/v1/webhooks", payload: { url: "https://hooks.acme.example/mailroom" } },
        { url: "/v1/domains", payload: { name: "acme.example" } },
        { url: "/v1/templates", payload: { slug: "welcome", name: "Welcome", subject: "Hi", html: "<p>Hi</p>" } },
      ];
      for (const { url, payload } of requests) expect((await t.call({ method: "POST", url, payload })).statusCode).toBe(201);
      expect((await auditLog()).map((e) => [e.operation, e.fields]).reverse()).toEqual([
        ["createWebhook", ["url"]],
        ["createDomain", ["name"]],
        ["createTemplate", ["html", "name", "slug", "subject"]],
      ]);
    });

    it("never keeps a value, so no secret can reach the log", async () => {
      const created = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Billing" } });
      await t.call({ method: "POST", url: `/v1/api-keys/${created.json().id}/rotate`, payload: { overlap_seconds: 0 } });
      await t.call({ method: "PATCH", url: "/v1/workspace", payload: { default_from: "Ada <ada@acme.example>" } });
      const body = (await t.call({ method: "GET", url: "/v1/audit-events" })).body;
      expect(body).not.toContain(created.json().secret);
      expect(body).not.toContain("Billing");
      expect(body).not.toContain("ada@acme.example");
      expect((await auditLog()).map((e) => e.operation)).toEqual(["updateWorkspace", "rotateApiKey", "createApiKey"]);
    });

    it("shows a change to what both environments share in both logs, and an environment's own change only in its log", async () => {
      await t.call({ method: "PATCH", url: "/v1/workspace", payload: { monthly_quota: 1000 } });
      await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Sandbox only" } });
      expect((await auditLog()).map((e) => [e.operation, e.environment])).toEqual([["createApiKey", "sandbox"], ["updateWorkspace", "sandbox"]]);
      const live = await auditLog("", t.workspace.liveKey);
      expect(live.map((e) => [e.operation, e.environment, e.fields])).toEqual([["updateWorkspace", "live", ["monthly_quota"]]]);
      expect(live[0]!.actor.id).toBe(await keyIdOf(t.workspace.sandboxKey));
    });

    it("records nothing for a refused request, a read, or a send", async () => {
      await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "" } });
      await t.call({ method: "PATCH", url: "/v1/api-keys/key_00000000000000000000000000", payload: { name: "Nope" } });
      await t.call({ method: "GET", url: "/v1/api-keys" });
      await t.call({ method: "POST", url: "/v1/messages", payload: aMessage() });
      await t.call({ method: "POST", url: "/v1/suppressions", payload: { email: "ada@example.com" } });
      expect(await auditLog()).toEqual([]);
    });

    it("records nothing for a template edit or publish that changes nothing, and only the fields an edit changed", async () => {
      const template = { slug: "welcome", name: "Welcome", subject: "Hi {{ first_name }}", html: "<p>Hi {{ first_name }}</p>" };
      expect((await t.call({ method: "POST", url: "/v1/templates", payload: { ...template, publish: true } })).statusCode).toBe(201);
      const edit = async (payload: object) => {
        const res = await t.call({ method: "PATCH", url: "/v1/templates/welcome", payload });
        expect(res.statusCode, res.body).toBe(200);
      };
      const publish = async (payload: object) => {
        const res = await t.call({ method: "POST", url: "/v1/templates/welcome/publish", payload });
        expect(res.statusCode, res.body).toBe(200);
      };
      await edit({ base_revision: 1 });
      await edit({ name: "Welcome", subject: template.subject, html: template.html });
      await publish({ version: 1 }); // already the published one
      expect((await auditLog()).map((e) => e.operation)).toEqual(["createTemplate"]);
      await edit({ name: "Welcome mail", html: template.html, base_revision: 1 });
      await edit({ html: "<p>Hello {{ first_name }}</p>", subject: template.subject, base_revision: 1 });
      await publish({});
      expect((await auditLog()).map((e) => [e.operation, e.fields])).toEqual([
        ["publishTemplate", []],
        ["updateTemplate", ["html"]],
        ["updateTemplate", ["name"]],
        ["createTemplate", ["html", "name", "publish", "slug", "subject"]],
      ]);
    });

    // Each audited update: where it is, then a PATCH giving every value as it is, then one changing a single field among values as they are.
    // `readable: false`: no GET to compare the answer with (a member is read in the list).
    const updates: Array<{ operation: string; setup: (t: TestApp, key: string) => Promise<string>; same: object; partly: object; changed: string[]; readable?: false }> = [
      {
        operation: "updateApiKey",
        setup: async (t, key) => `/v1/api-keys/${(await t.call({ method: "POST", url: "/v1/api-keys", key, payload: { name: "Billing", permission: "sending_access", restrictions: { sender_domains: ["acme.example"] } } })).json().id}`,
        same: { name: "Billing", restrictions: { sender_domains: ["acme.example"] } },
        partly: { name: "Billing", restrictions: { sender_domains: ["news.acme.example"] } },
        changed: ["restrictions"],
      },
      {
        operation: "updateWebhook",
        setup: async (t, key) => `/v1/webhooks/${(await t.call({ method: "POST", url: "/v1/webhooks", key, payload: { url: "https://hooks.example.com/mailroom", event_types: ["message.delivered", "message.bounced"] } })).json().id}`,
        // The same event types in another order are the same subscription.
        same: { url: "https://hooks.example.com/mailroom", description: null, event_types: ["message.bounced", "message.delivered"], enabled: true },
        partly: { url: "https://hooks.example.com/mailroom", description: "Ops", event_types: ["message.bounced", "message.delivered"], enabled: true },
        changed: ["description"],
      },
      {
        operation: "updateWorkspace",
        setup: async () => "/v1/workspace",
        same: { name: "Acme", default_from: null, monthly_quota: null, content_retention_days: null, tracking: { opens: false } },
        partly: { name: "Acme", monthly_quota: 1000, tracking: { opens: false } },
        changed: ["monthly_quota"],
      },
      {
        operation: "updateDomain",
        setup: async (t, key) => `/v1/domains/${(await t.call({ method: "POST", url: "/v1/domains", key, payload: { name: "acme.example" } })).json().id}`,
        same: { track_opens: null, track_clicks: null, tracking_domain: null },
        partly: { track_opens: null, track_clicks: true, tracking_domain: null },
        changed: ["track_clicks"],
      },
      {
        operation: "updateMember",
        setup: async (t, key) => {
          const secret = (await t.call({ method: "POST", url: "/v1/invitations", key, payload: { email: "grace@acme.example", role: "developer" } })).json().accept_url.split("/").pop() as string;
          return `/v1/members/${(await signedUp(t, { email: "grace@acme.example", invitation_token: secret })).userId}`;
        },
        same: { role: "developer" },
        partly: { role: "admin" },
        changed: ["role"],
        readable: false,
      },
    ];

    it.each(updates)("records nothing for an $operation giving the values as they are, and only the fields it changed", async ({ operation, setup, same, partly, changed, readable }) => {
      const owner = await signedUp(t, { email: "ada@acme.example", name: "Ada", workspace_name: "Acme" });
      const key = await owner.session.token(owner.workspaceId);
      const url = await setup(t, key);
      const before = readable === false ? null : (await t.call({ method: "GET", url, key })).json();
      t.clock.advance(60_000);
      const unchanged = await t.call({ method: "PATCH", url, key, payload: same });
      expect(unchanged.statusCode, unchanged.body).toBe(200);
      // Nothing was written: not even the time it was last updated.
      if (before !== null) expect(unchanged.json()).toEqual(before);
      expect(await auditLog(`?operation=${operation}`, key)).toEqual([]);
      const edited = await t.call({ method: "PATCH", url, key, payload: partly });
      expect(edited.statusCode, edited.body).toBe(200);
      expect((await auditLog(`?operation=${operation}`, key)).map((e) => e.fields)).toEqual([changed]);
    });

    it("records a key's revocation once, however often it is revoked", async () => {
      const id = (await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Leaked" } })).json().id as string;
      const first = await t.call({ method: "DELETE", url: `/v1/api-keys/${id}` });
      expect(first.statusCode, first.body).toBe(200);
      t.clock.advance(60_000);
      const again = await t.call({ method: "DELETE", url: `/v1/api-keys/${id}` });
      expect(again.statusCode, again.body).toBe(200);
      expect(again.json().revoked_at).toBe(first.json().revoked_at);
      expect((await auditLog("?operation=revokeApiKey")).map((e) => e.target.id)).toEqual([id]);
    });

    it("records a change once however often its idempotent answer is replayed", async () => {
      const send = () => t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Once" }, headers: { "idempotency-key": "audit-1" } });
      expect((await send()).statusCode).toBe(201);
      const replay = await send();
      expect(replay.headers["idempotent-replayed"]).toBe("true");
      expect(await auditLog()).toHaveLength(1);
    });

    it("still answers a committed change with its 2xx when the audit event cannot be written", async () => {
      // The change is committed before the event is written; failing the answer would invite a
      // retry that repeats it (docs/audit-log.md). The failure is logged for the operator.
      await t.runtime.db.knex.schema.renameTable("audit_events", "audit_events_away");
      const created = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Unaudited" } });
      expect(created.statusCode).toBe(201);
      await t.runtime.db.knex.schema.renameTable("audit_events_away", "audit_events");
      expect((await t.call({ method: "GET", url: `/v1/api-keys/${created.json().id}` })).statusCode).toBe(200);
      expect(await auditLog()).toEqual([]);
    });

    it("records who revealed a webhook endpoint's signing secret", async () => {
      const webhook = await t.call({ method: "POST", url: "/v1/webhooks", payload: { url: "https://hooks.example.com/mailroom" } });
      await t.call({ method: "GET", url: `/v1/webhooks/${webhook.json().id}/secret` });
      const [revealed] = await auditLog();
      expect(revealed).toMatchObject({ operation: "getWebhookSecret", target: { type: "webhook", id: webhook.json().id }, fields: [] });
    });

    it("names a member by user id when they change something through the dashboard", async () => {
      const owner = await signedUp(t, { email: "ada@acme.example", name: "Ada", workspace_name: "Acme" });
      const token = await owner.session.token(owner.workspaceId);
      const invited = await t.call({ method: "POST", url: "/v1/invitations", key: token, payload: { email: "grace@acme.example", role: "developer" } });
      expect(invited.statusCode).toBe(201);
      const [event] = await auditLog("", token);
      expect(event).toMatchObject({ operation: "createInvitation", actor: { type: "user", id: owner.userId }, target: { type: "invitation", id: invited.json().id }, fields: ["email", "role"] });
    });

    it("records a member joining through an invitation, by sign-up or signed in, in both environments' logs, with the request's id and address", async () => {
      await t.close();
      t = await createTestApp(database, { SIGNUP: "open" });
      const owner = await signedUp(t, { email: "ada@acme.example", name: "Ada", workspace_name: "Acme" });
      const tokens = { sandbox: await owner.session.token(owner.workspaceId), live: await owner.session.token(owner.workspaceId, "live") };
      const invite = async (email: string) => (await t.call({ method: "POST", url: "/v1/invitations", key: tokens.sandbox, payload: { email, role: "developer" } })).json().accept_url.split("/").pop() as string;

      const graceSecret = await invite("grace@acme.example");
      const grace = await signedUp(t, { email: "grace@acme.example", invitation_token: graceSecret });
      const alan = await signedUp(t, { email: "alan@navy.example" });
      const accepted = await alan.session.post("/auth/invitations/accept", { token: await invite("alan@navy.example") });
      expect(accepted.statusCode, accepted.body).toBe(200);

      for (const environment of ["sandbox", "live"] as const) {
        const joined = await auditLog("?operation=acceptInvitation", tokens[environment]);
        expect(joined).toEqual([
          { id: expect.stringMatching(/^aud_/), object: "audit_event", environment, operation: "acceptInvitation", actor: { type: "user", id: alan.userId }, target: { type: "member", id: alan.userId }, fields: [], ip_address: "127.0.0.1", request_id: accepted.headers["request-id"], created_at: expect.any(String) },
          expect.objectContaining({ environment, operation: "acceptInvitation", actor: { type: "user", id: grace.userId }, target: { type: "member", id: grace.userId }, request_id: expect.stringMatching(/^req_/) }),
        ]);
      }
      // Only the workspace joined has it: the newcomers' own workspaces do not.
      expect(await auditLog("?operation=acceptInvitation", await alan.session.token(alan.workspaceId))).toEqual([]);
    });

    it("records nothing when joining fails, and the member is not added when its audit event cannot be written", async () => {
      const owner = await signedUp(t, { email: "ada@acme.example", name: "Ada", workspace_name: "Acme" });
      const token = await owner.session.token(owner.workspaceId);
      const secret = (await t.call({ method: "POST", url: "/v1/invitations", key: token, payload: { email: "grace@acme.example", role: "developer" } })).json().accept_url.split("/").pop() as string;
      const refused = await new DashboardSession(t).signUp({ email: "mallory@evil.example", invitation_token: secret });
      expect(refused.statusCode, refused.body).toBe(403);
      expect(await auditLog("?operation=acceptInvitation", token)).toEqual([]);

      // One transaction: a member is never in the workspace without the event saying how they came in.
      const { knex } = t.runtime.db;
      await knex.raw(
        database.name === "sqlite"
          ? "CREATE TRIGGER fail_audit BEFORE INSERT ON audit_events BEGIN SELECT RAISE(ABORT, 'simulated failure'); END"
          : "CREATE TRIGGER fail_audit BEFORE INSERT ON audit_events FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'simulated failure'",
      );
      try {
        const failed = await new DashboardSession(t).signUp({ email: "grace@acme.example", invitation_token: secret });
        expect(failed.statusCode, failed.body).toBe(500);
      } finally {
        await knex.raw("DROP TRIGGER IF EXISTS fail_audit");
      }
      const members = (await t.call({ method: "GET", url: "/v1/members", key: token })).json().data as Array<{ email: string }>;
      expect(members.map((m) => m.email)).toEqual(["ada@acme.example"]);
      // The invitation is still open: it can be used once the database is well again.
      const grace = await signedUp(t, { email: "grace@acme.example", invitation_token: secret });
      expect((await auditLog("?operation=acceptInvitation", token)).map((e) => e.actor.id)).toEqual([grace.userId]);
    });

    it("filters by operation, actor, target and time, and pages newest first", async () => {
      const first = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "First" } });
      t.clock.advance(60_000);
      const cutoff = new Date(t.clock.now()).toISOString();
      await t.call({ method: "PATCH", url: `/v1/api-keys/${first.json().id}`, payload: { name: "Renamed" } });
      await t.call({ method: "PATCH", url: `/v1/api-keys/${first.json().id}`, key: first.json().secret, payload: { name: "Renamed again" } });
      await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Second" } });

      expect((await auditLog("?operation=updateApiKey")).map((e) => e.operation)).toEqual(["updateApiKey", "updateApiKey"]);
      expect((await auditLog(`?actor_id=${first.json().id}`)).map((e) => e.fields)).toEqual([["name"]]);
      expect((await auditLog(`?target_id=${first.json().id}`)).map((e) => e.operation)).toEqual(["updateApiKey", "updateApiKey", "createApiKey"]);
      expect((await auditLog(`?created_before=${encodeURIComponent(cutoff)}`)).map((e) => e.operation)).toEqual(["createApiKey"]);
      expect(await auditLog(`?created_after=${encodeURIComponent(cutoff)}`)).toHaveLength(3);

      const page = (await t.call({ method: "GET", url: "/v1/audit-events?limit=3" })).json();
      expect(page.has_more).toBe(true);
      const next = (await t.call({ method: "GET", url: `/v1/audit-events?limit=3&after=${page.next_cursor}` })).json();
      expect([...page.data, ...next.data].map((e: AuditEvent) => e.id)).toEqual((await auditLog()).map((e) => e.id));
      expect(next.has_more).toBe(false);
    });

    it("shows a workspace only its own log", async () => {
      await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Ours" } });
      await t.call({ method: "POST", url: "/v1/api-keys", key: t.other.sandboxKey, payload: { name: "Theirs" } });
      const ours = await auditLog();
      const theirs = await auditLog("", t.other.sandboxKey);
      expect(ours).toHaveLength(1);
      expect(theirs).toHaveLength(1);
      expect(ours[0]!.id).not.toBe(theirs[0]!.id);
      expect(await auditLog(`?target_id=${theirs[0]!.target.id}`)).toEqual([]);
    });

    it("refuses a sending_access key with 403", async () => {
      const key = (await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Sender", permission: "sending_access" } })).json();
      const res = await t.call({ method: "GET", url: "/v1/audit-events", key: key.secret });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe("insufficient_permission");
    });
  });
});
