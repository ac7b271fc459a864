import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { databases } from "../helpers/databases.js";
import { signedUp } from "../helpers/dashboard-session.js";
import { createTestApp, type TestApp } from "../helpers/test-app.js";

const HOUR = 3_600_000;
const SECRET_SHAPE = /^svc_test_[0-9A-Za-z]{38}$/;

describe.each(databases)("API keys ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(database);
  });
  afterEach(async () => t.close());

  const createKey = async (payload: Record<string, unknown> = { name: "Web app" }, key?: string) => {
    const res = await t.call({ method: "POST", url: "/v1/api-keys", payload, ...(key ? { key } : {}) });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; secret: string; [field: string]: unknown };
  };
  /** Whether a secret currently authenticates (a cheap authenticated read). */
  const statusWith = async (secret: string) => (await t.call({ method: "GET", url: "/v1/workspace", key: secret })).statusCode;
  /**
   * A workspace of people: its owner, and a member with `role`, each with a sandbox user token,
   * plus a full_access and a sending_access key the owner made in it.
   */
  const team = async (role: "developer" | "admin") => {
    const owner = await signedUp(t, { email: "ada@acme.example" });
    const ownerToken = await owner.session.token(owner.workspaceId);
    const invitation = await t.call({ method: "POST", url: "/v1/invitations", payload: { email: "grace@acme.example", role }, key: ownerToken });
    const member = await signedUp(t, { email: "grace@acme.example", invitation_token: invitation.json().accept_url.split("/").pop() });
    return {
      ownerToken,
      memberToken: await member.session.token(owner.workspaceId),
      fullKey: await createKey({ name: "Admin", permission: "full_access" }, ownerToken),
      sendingKey: await createKey({ name: "Web app", permission: "sending_access" }, ownerToken),
    };
  };
  const keyIds = async (key?: string) => {
    const res = await t.call({ method: "GET", url: "/v1/api-keys?limit=100", ...(key ? { key } : {}) });
    expect(res.statusCode).toBe(200);
    return (res.json().data as Array<{ id: string }>).map((k) => k.id);
  };

  describe("createApiKey", () => {
    it("answers 201 with a Location and the key's secret, shown this once", async () => {
      const res = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Web app", permission: "sending_access" } });
      expect(res.statusCode).toBe(201);
      const key = res.json();
      expect(res.headers.location).toBe(`/v1/api-keys/${key.id}`);
      expect(key).toMatchObject({
        id: expect.stringMatching(/^key_[0-9a-z]{26}$/),
        object: "api_key",
        name: "Web app",
        environment: "sandbox",
        permission: "sending_access",
        expires_at: null,
        last_used_at: null,
        last_used_ip: null,
        revoked_at: null,
        previous_secret_expires_at: null,
        created_at: new Date(t.clock.now()).toISOString(),
      });
      expect(key.secret).toMatch(SECRET_SHAPE);
      expect(key.redacted_key).toBe(`svc_test_…${key.secret.slice(-4)}`);
    });

    it("records who created it, the calling key or the member behind an access token, for good: a rotation keeps it; bootstrap's keys have none", async () => {
      const listed = async (key?: string) => (await t.call({ method: "GET", url: "/v1/api-keys?limit=100", ...(key ? { key } : {}) })).json().data as Array<{ id: string; name: string; created_by: unknown }>;
      const bootstrapKey = (await listed()).find((key) => key.name === "Bootstrap sandbox key")!;
      expect(bootstrapKey.created_by).toBeNull();
      expect((await createKey({ name: "From CI" })).created_by).toEqual({ type: "api_key", id: bootstrapKey.id });

      const owner = await signedUp(t, { email: "ada@acme.example" });
      const token = await owner.session.token(owner.workspaceId);
      const byAda = await createKey({ name: "By Ada" }, token);
      expect(byAda.created_by).toEqual({ type: "user", id: owner.userId });
      const rotated = await t.call({ method: "POST", url: `/v1/api-keys/${byAda.id}/rotate`, payload: {}, key: byAda.secret });
      expect(rotated.statusCode, rotated.body).toBe(200);
      expect(rotated.json().created_by).toEqual({ type: "user", id: owner.userId });
      expect((await listed(token)).find((key) => key.id === byAda.id)?.created_by).toEqual({ type: "user", id: owner.userId });
    });

    it("gives a key made with a live key a svc_live_ secret in the live environment", async () => {
      const key = await createKey({ name: "Production" }, t.workspace.liveKey);
      expect(key.secret).toMatch(/^svc_live_[0-9A-Za-z]{38}$/);
      expect(key.environment).toBe("live");
      expect(await keyIds(t.workspace.liveKey)).toContain(key.id);
      expect(await keyIds()).not.toContain(key.id);
    });

    it("gives full_access when no permission is asked for", async () => {
      const key = await createKey({ name: "Admin" });
      expect(key.permission).toBe("full_access");
    });

    it("refuses a developer a full_access key, asked for or by default, with 403 insufficient_role and creates nothing", async () => {
      const { memberToken } = await team("developer");
      const before = await keyIds(memberToken);
      for (const payload of [{ name: "Admin", permission: "full_access" }, { name: "Admin" }]) {
        const res = await t.call({ method: "POST", url: "/v1/api-keys", payload, key: memberToken });
        expect(res.statusCode, res.body).toBe(403);
        expect(res.json()).toMatchObject({ code: "insufficient_role", detail: expect.stringMatching(/^Creating a full_access key needs the admin role or above.*you are a developer.*ask an admin/is) });
      }
      expect(await keyIds(memberToken)).toEqual(before);
    });

    it("refuses a developer the replay of an admin's full_access key under the admin's Idempotency-Key, and shows no secret", async () => {
      const { ownerToken, memberToken } = await team("developer");
      const payload = { name: "CI", permission: "full_access" };
      const headers = { "idempotency-key": "ci-key-1" };
      const made = await t.call({ method: "POST", url: "/v1/api-keys", payload, headers, key: ownerToken });
      expect(made.statusCode, made.body).toBe(201);

      // The request log shows Idempotency-Keys to developers; the body is all in getApiKey.
      const replay = await t.call({ method: "POST", url: "/v1/api-keys", payload, headers, key: memberToken });
      expect(replay.statusCode, replay.body).toBe(422);
      expect(replay.headers["idempotent-replayed"]).toBeUndefined();
      expect(replay.json()).toMatchObject({ code: "idempotency_key_reused", detail: expect.stringContaining("used by another API key or member") });
      expect(replay.body).not.toContain(made.json().secret);
      // The admin's own retry is still replayed.
      const retry = await t.call({ method: "POST", url: "/v1/api-keys", payload, headers, key: ownerToken });
      expect(retry.headers["idempotent-replayed"]).toBe("true");
      expect(retry.payload).toBe(made.payload);
    });

    it("lets a developer create a sending_access key", async () => {
      const { memberToken } = await team("developer");
      const key = await createKey({ name: "CI", permission: "sending_access" }, memberToken);
      expect(key.permission).toBe("sending_access");
    });

    it("lets an admin, and a full_access key, create a full_access key", async () => {
      const { memberToken } = await team("admin");
      expect((await createKey({ name: "By an admin" }, memberToken)).permission).toBe("full_access");
      expect((await createKey({ name: "By a key", permission: "full_access" }, t.workspace.sandboxKey)).permission).toBe("full_access");
    });

    it("issues a secret that authenticates calls at once", async () => {
      const key = await createKey();
      const res = await t.call({ method: "GET", url: "/v1/workspace", key: key.secret });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ id: t.workspace.id, environment: "sandbox" });
    });

    it("keeps an expiry in the future", async () => {
      const expiresAt = new Date(t.clock.now() + 24 * HOUR).toISOString();
      const key = await createKey({ name: "Temporary", expires_at: expiresAt });
      expect(key.expires_at).toBe(expiresAt);
    });

    it("reads an expiry in every form the contract admits: an offset without minutes or colon, a space separator", async () => {
      const at = Math.floor(t.clock.now() / 1000) * 1000 + 24 * HOUR; // a whole second: the forms below have no fraction
      const local = (offsetHours: number) => new Date(at + offsetHours * HOUR).toISOString().slice(0, 19);
      for (const expiresAt of [`${local(1)}+01`, `${local(-2)}-0200`, `${local(0).replace("T", " ")}Z`]) {
        const key = await createKey({ name: "Temporary", expires_at: expiresAt });
        expect(key.expires_at, expiresAt).toBe(new Date(at).toISOString());
      }
    });

    it("refuses with 422 an expiry the format checker lets through but that names no instant (hour 24), and stores nothing", async () => {
      const before = await keyIds();
      const res = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Odd", expires_at: "2099-12-31T24:59:60+01:00" } });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ location: "body", pointer: "/expires_at" }] });
      expect(await keyIds()).toEqual(before);
    });

    it("refuses a key with 401 once its expires_at has passed", async () => {
      const key = await createKey({ name: "Temporary", expires_at: new Date(t.clock.now() + HOUR).toISOString() });
      expect(await statusWith(key.secret)).toBe(200);
      t.clock.advance(HOUR - 1000);
      expect(await statusWith(key.secret)).toBe(200);
      t.clock.advance(1000);
      const res = await t.call({ method: "GET", url: "/v1/workspace", key: key.secret });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe("invalid_api_key");
    });

    it("refuses an expiry in the past with 422 and stores nothing", async () => {
      const before = await keyIds();
      const res = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Late", expires_at: new Date(t.clock.now() - 1000).toISOString() } });
      expect(res.statusCode).toBe(422);
      expect(res.headers["content-type"]).toContain("application/problem+json");
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ location: "body", pointer: "/expires_at" }] });
      expect(await keyIds()).toEqual(before);
    });

    it("refuses an unknown field with 422 and stores nothing", async () => {
      const before = await keyIds();
      const res = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Web app", scopes: ["send"] } });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ location: "body", pointer: "/scopes", message: "is not a known field" }] });
      expect(await keyIds()).toEqual(before);
    });

    it("stores no key when its secret cannot be stored", async () => {
      const first = await createKey({ name: "First" });
      const before = await keyIds();
      const stored = await t.runtime.db.knex("api_key_secrets").where({ api_key_id: first.id }).first();
      const key = { ...(await t.runtime.repositories.apiKeys.find({ workspaceId: t.workspace.id, environment: "sandbox" }, first.id))!, id: "key_00000000000000000000000000", name: "Second" };
      // A secret whose digest is taken: its insert fails after the key's.
      await expect(t.runtime.repositories.apiKeys.insert(key, { ...stored, api_key_id: key.id })).rejects.toThrow();
      expect(await keyIds()).toEqual(before);
    });

    it("refuses a name longer than 100 characters with 422", async () => {
      const res = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "k".repeat(101) } });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/name" }] });
      expect((await createKey({ name: "k".repeat(100) })).name).toBe("k".repeat(100));
    });

    it("refuses a missing name and an unknown permission with one error per field", async () => {
      const res = await t.call({ method: "POST", url: "/v1/api-keys", payload: { permission: "root" } });
      expect(res.statusCode).toBe(422);
      const pointers = (res.json().errors as Array<{ pointer: string }>).map((e) => e.pointer).sort();
      expect(pointers).toEqual(["/name", "/permission"]);
    });
  });

  describe("listApiKeys", () => {
    it("pages through the environment's keys, newest first", async () => {
      const made = [];
      for (const name of ["one", "two", "three", "four"]) {
        made.push((await createKey({ name })).id);
        t.clock.advance(1000);
      }
      const all = await keyIds();
      // The bootstrap key is the oldest; then the four, newest first.
      expect(all).toHaveLength(5);
      expect(all.slice(0, 4)).toEqual([...made].reverse());

      const seen: string[] = [];
      let after: string | null = null;
      let pages = 0;
      do {
        const res = await t.call({ method: "GET", url: `/v1/api-keys?limit=2${after ? `&after=${after}` : ""}` });
        expect(res.statusCode).toBe(200);
        const page = res.json() as { data: Array<{ id: string }>; has_more: boolean; next_cursor: string | null };
        expect(page.data.length).toBeLessThanOrEqual(2);
        seen.push(...page.data.map((k) => k.id));
        expect(page.has_more).toBe(page.next_cursor !== null);
        after = page.next_cursor;
        pages++;
      } while (after !== null && pages < 10);
      expect(pages).toBe(3);
      expect(seen).toEqual(all);
    });

    it("includes revoked keys", async () => {
      const key = await createKey();
      expect((await t.call({ method: "DELETE", url: `/v1/api-keys/${key.id}` })).statusCode).toBe(200);
      const res = await t.call({ method: "GET", url: "/v1/api-keys" });
      const listed = (res.json().data as Array<{ id: string; revoked_at: string | null }>).find((k) => k.id === key.id);
      expect(listed?.revoked_at).toBe(new Date(t.clock.now()).toISOString());
    });

    it("shows only this environment's keys of this workspace", async () => {
      const sandbox = await createKey({ name: "sandbox" });
      const live = await createKey({ name: "live" }, t.workspace.liveKey);
      const res = await t.call({ method: "GET", url: "/v1/api-keys?limit=100" });
      const data = res.json().data as Array<{ id: string; environment: string }>;
      expect(data.map((k) => k.id)).toContain(sandbox.id);
      expect(data.map((k) => k.id)).not.toContain(live.id);
      expect(data.every((k) => k.environment === "sandbox")).toBe(true);
      expect(data).toHaveLength(2); // the bootstrap sandbox key and the one made here
    });

    it("never returns a secret", async () => {
      const key = await createKey();
      const res = await t.call({ method: "GET", url: "/v1/api-keys" });
      expect(res.body).not.toContain(key.secret);
      expect(res.body).not.toContain(t.workspace.sandboxKey);
      for (const listed of res.json().data) expect(listed).not.toHaveProperty("secret");
    });

    it("refuses a page size above 100 with 422", async () => {
      const res = await t.call({ method: "GET", url: "/v1/api-keys?limit=101" });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ location: "query", pointer: "/limit" }] });
    });
  });

  describe("getApiKey", () => {
    it("returns the key without its secret", async () => {
      const key = await createKey({ name: "Web app", permission: "sending_access" });
      const res = await t.call({ method: "GET", url: `/v1/api-keys/${key.id}` });
      expect(res.statusCode).toBe(200);
      const { secret: _secret, previous_secret_expires_at: _previous, ...expected } = key;
      expect(res.json()).toEqual(expected);
      expect(res.body).not.toContain(key.secret);
    });

    it("answers 404 for an id that does not exist", async () => {
      const res = await t.call({ method: "GET", url: "/v1/api-keys/key_00000000000000000000000000" });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: "not_found", status: 404 });
    });

    it("shows when the key was last used, to the minute", async () => {
      const key = await createKey();
      const usedAt = t.clock.now();
      expect(await statusWith(key.secret)).toBe(200);
      const lastUsed = async () => (await t.call({ method: "GET", url: `/v1/api-keys/${key.id}` })).json().last_used_at as string | null;
      expect(await lastUsed()).toBe(new Date(usedAt).toISOString());

      // Within the minute the stamp does not move; a use a minute later moves it.
      t.clock.advance(30_000);
      expect(await statusWith(key.secret)).toBe(200);
      expect(await lastUsed()).toBe(new Date(usedAt).toISOString());
      t.clock.advance(31_000);
      expect(await statusWith(key.secret)).toBe(200);
      expect(await lastUsed()).toBe(new Date(t.clock.now()).toISOString());
    });

    it("leaves last_used_at empty for a key never used", async () => {
      const key = await createKey();
      const res = await t.call({ method: "GET", url: `/v1/api-keys/${key.id}` });
      expect(res.json().last_used_at).toBeNull();
      expect(res.json().last_used_ip).toBeNull();
    });

    it("shows the address of the use that stamped last_used_at", async () => {
      const key = await createKey();
      const useFrom = async (remoteAddress: string) => (await t.call({ method: "GET", url: "/v1/workspace", key: key.secret, remoteAddress })).statusCode;
      const lastUse = async () => {
        const shown = (await t.call({ method: "GET", url: `/v1/api-keys/${key.id}` })).json();
        return [shown.last_used_at, shown.last_used_ip];
      };
      expect(await useFrom("203.0.113.7")).toBe(200);
      expect(await lastUse()).toEqual([new Date(t.clock.now()).toISOString(), "203.0.113.7"]);
      // Stamped with last_used_at, to the minute: a use within it from elsewhere does not move either.
      t.clock.advance(30_000);
      expect(await useFrom("198.51.100.4")).toBe(200);
      expect((await lastUse())[1]).toBe("203.0.113.7");
      t.clock.advance(31_000);
      expect(await useFrom("2001:db8::1")).toBe(200);
      expect(await lastUse()).toEqual([new Date(t.clock.now()).toISOString(), "2001:db8::1"]);
    });
  });

  describe("updateApiKey", () => {
    it("refuses a developer any change to a full_access key, and allows it on a sending_access key", async () => {
      const { memberToken, fullKey, sendingKey } = await team("developer");
      const refused = await t.call({ method: "PATCH", url: `/v1/api-keys/${fullKey.id}`, payload: { restrictions: { allowed_ips: null } }, key: memberToken });
      expect(refused.statusCode, refused.body).toBe(403);
      expect(refused.json()).toMatchObject({ code: "insufficient_role", detail: expect.stringContaining("Changing a full_access key needs the admin role") });
      expect((await t.call({ method: "PATCH", url: `/v1/api-keys/${sendingKey.id}`, payload: { name: "Renamed" }, key: memberToken })).statusCode).toBe(200);
    });

    it("lets an admin change a full_access key", async () => {
      const { memberToken, fullKey } = await team("admin");
      const res = await t.call({ method: "PATCH", url: `/v1/api-keys/${fullKey.id}`, payload: { name: "Renamed" }, key: memberToken });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().name).toBe("Renamed");
    });
  });

  describe("revokeApiKey", () => {
    it("lets a developer revoke a full_access key: revoking takes power away", async () => {
      const { memberToken, fullKey } = await team("developer");
      expect((await t.call({ method: "DELETE", url: `/v1/api-keys/${fullKey.id}`, key: memberToken })).statusCode).toBe(200);
      expect(await statusWith(fullKey.secret)).toBe(401);
    });

    it("answers the revoked key, whose secret then gets 401", async () => {
      const key = await createKey();
      expect(await statusWith(key.secret)).toBe(200);
      const res = await t.call({ method: "DELETE", url: `/v1/api-keys/${key.id}` });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ id: key.id, revoked_at: new Date(t.clock.now()).toISOString() });
      expect(res.body).not.toContain(key.secret);
      const refused = await t.call({ method: "GET", url: "/v1/workspace", key: key.secret });
      expect(refused.statusCode).toBe(401);
      expect(refused.json()).toMatchObject({ code: "invalid_api_key" });
    });

    it("answers the same revoked key when revoked twice", async () => {
      const key = await createKey();
      const first = await t.call({ method: "DELETE", url: `/v1/api-keys/${key.id}` });
      t.clock.advance(60_000);
      const second = await t.call({ method: "DELETE", url: `/v1/api-keys/${key.id}` });
      expect(second.statusCode).toBe(200);
      expect(second.json()).toEqual(first.json());
    });

    it("revokes every secret of a rotated key, including the one still in its overlap", async () => {
      const key = await createKey();
      const rotated = await t.call({ method: "POST", url: `/v1/api-keys/${key.id}/rotate`, payload: { overlap_seconds: 3600 } });
      expect(rotated.statusCode).toBe(200);
      expect((await t.call({ method: "DELETE", url: `/v1/api-keys/${key.id}` })).statusCode).toBe(200);
      expect(await statusWith(key.secret)).toBe(401);
      expect(await statusWith(rotated.json().secret)).toBe(401);
    });

    it("lets a key revoke itself", async () => {
      const key = await createKey();
      const res = await t.call({ method: "DELETE", url: `/v1/api-keys/${key.id}`, key: key.secret });
      expect(res.statusCode).toBe(200);
      expect(await statusWith(key.secret)).toBe(401);
    });

    it("answers 404 for an id that does not exist", async () => {
      const res = await t.call({ method: "DELETE", url: "/v1/api-keys/key_00000000000000000000000000" });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe("not_found");
    });
  });

  describe("rotateApiKey", () => {
    it("issues a new secret that works at once", async () => {
      const key = await createKey();
      const res = await t.call({ method: "POST", url: `/v1/api-keys/${key.id}/rotate`, payload: { overlap_seconds: 3600 } });
      expect(res.statusCode).toBe(200);
      const rotated = res.json();
      expect(rotated).toMatchObject({ id: key.id, object: "api_key", name: key.name, permission: key.permission, environment: "sandbox" });
      expect(rotated.secret).toMatch(SECRET_SHAPE);
      expect(rotated.secret).not.toBe(key.secret);
      expect(rotated.redacted_key).toBe(`svc_test_…${rotated.secret.slice(-4)}`);
      expect(await statusWith(rotated.secret)).toBe(200);
    });

    it("keeps the old secret working during the overlap and refuses it after", async () => {
      const key = await createKey();
      const res = await t.call({ method: "POST", url: `/v1/api-keys/${key.id}/rotate`, payload: { overlap_seconds: 3600 } });
      const rotated = res.json();
      expect(rotated.previous_secret_expires_at).toBe(new Date(t.clock.now() + HOUR).toISOString());

      t.clock.advance(HOUR - 1000);
      expect(await statusWith(key.secret)).toBe(200);
      expect(await statusWith(rotated.secret)).toBe(200);
      t.clock.advance(2000);
      expect(await statusWith(key.secret)).toBe(401);
      expect(await statusWith(rotated.secret)).toBe(200);
    });

    it("leaves one working secret after two rotations at once, not the loser's as well", async () => {
      for (let round = 0; round < 10; round++) {
        const key = await createKey();
        const rotate = () => t.call({ method: "POST", url: `/v1/api-keys/${key.id}/rotate`, payload: { overlap_seconds: 0 } });
        const answers = await Promise.all([rotate(), rotate()]);
        expect(answers.map((res) => res.statusCode)).toEqual([200, 200]);
        const working = [];
        for (const secret of [key.secret, ...answers.map((res) => res.json().secret as string)]) if ((await statusWith(secret)) === 200) working.push(secret);
        expect(working, `round ${round}`).toHaveLength(1);
      }
    });

    it("answers 409 api_key_revoked, with no secret, when the key is revoked while the rotation runs", async () => {
      const key = await createKey();
      const { apiKeys } = t.runtime.repositories;
      const rotate = apiKeys.rotate.bind(apiKeys);
      // The revocation lands after the rotation read the key and before it writes.
      vi.spyOn(apiKeys, "rotate").mockImplementationOnce(async (...args) => {
        expect((await t.call({ method: "DELETE", url: `/v1/api-keys/${key.id}` })).statusCode).toBe(200);
        return rotate(...args);
      });
      const res = await t.call({ method: "POST", url: `/v1/api-keys/${key.id}/rotate`, payload: { overlap_seconds: 0 } });
      expect(res.statusCode, res.body).toBe(409);
      expect(res.json()).toMatchObject({ code: "api_key_revoked" });
      expect(res.json()).not.toHaveProperty("secret");
      expect(await statusWith(key.secret)).toBe(401);
      expect(await t.runtime.db.knex("api_key_secrets").where({ api_key_id: key.id }).count({ n: "*" }).first()).toMatchObject({ n: 1 });
    });

    it("ends the old secret at once with overlap_seconds 0", async () => {
      const key = await createKey();
      const res = await t.call({ method: "POST", url: `/v1/api-keys/${key.id}/rotate`, payload: { overlap_seconds: 0 } });
      expect(res.statusCode).toBe(200);
      expect(res.json().previous_secret_expires_at).toBe(new Date(t.clock.now()).toISOString());
      expect(await statusWith(key.secret)).toBe(401);
      expect(await statusWith(res.json().secret)).toBe(200);
    });

    it("overlaps for 24 hours when no body is sent", async () => {
      const key = await createKey();
      const res = await t.call({ method: "POST", url: `/v1/api-keys/${key.id}/rotate` });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().previous_secret_expires_at).toBe(new Date(t.clock.now() + 24 * HOUR).toISOString());
      t.clock.advance(24 * HOUR - 1000);
      expect(await statusWith(key.secret)).toBe(200);
      t.clock.advance(1000);
      expect(await statusWith(key.secret)).toBe(401);
      expect(await statusWith(res.json().secret)).toBe(200);
    });

    it("overlaps for 24 hours when the body is {} or empty", async () => {
      const key = await createKey();
      for (const sent of [{ payload: {} }, { payload: "", headers: { "content-type": "application/json" } }]) {
        const res = await t.call({ method: "POST", url: `/v1/api-keys/${key.id}/rotate`, ...sent });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json().previous_secret_expires_at).toBe(new Date(t.clock.now() + 24 * HOUR).toISOString());
      }
    });

    it("shortens, never lengthens, an earlier secret's overlap when rotated again", async () => {
      const key = await createKey();
      const first = (await t.call({ method: "POST", url: `/v1/api-keys/${key.id}/rotate`, payload: { overlap_seconds: 3600 } })).json();
      const second = (await t.call({ method: "POST", url: `/v1/api-keys/${key.id}/rotate`, payload: { overlap_seconds: 7200 } })).json();
      t.clock.advance(HOUR + 1000);
      expect(await statusWith(key.secret)).toBe(401);
      expect(await statusWith(first.secret)).toBe(200);
      expect(await statusWith(second.secret)).toBe(200);
    });

    it("refuses to rotate a revoked key with 409", async () => {
      const key = await createKey();
      await t.call({ method: "DELETE", url: `/v1/api-keys/${key.id}` });
      const res = await t.call({ method: "POST", url: `/v1/api-keys/${key.id}/rotate`, payload: { overlap_seconds: 60 } });
      expect(res.statusCode).toBe(409);
      expect(res.headers["content-type"]).toContain("application/problem+json");
      expect(res.json()).toMatchObject({ code: "api_key_revoked", status: 409 });
      expect(await statusWith(key.secret)).toBe(401);
    });

    it("refuses to rotate an expired key with 409", async () => {
      const created = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "short-lived", expires_at: new Date(t.clock.now() + 60_000).toISOString() } });
      const key = created.json();
      t.clock.advance(61_000);
      const res = await t.call({ method: "POST", url: `/v1/api-keys/${key.id}/rotate`, payload: {} });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ code: "api_key_expired", status: 409 });
      expect(await statusWith(key.secret)).toBe(401);
    });

    it("refuses an overlap longer than 30 days or negative with 422", async () => {
      const key = await createKey();
      for (const overlap of [2_592_001, -1, "60"]) {
        const res = await t.call({ method: "POST", url: `/v1/api-keys/${key.id}/rotate`, payload: { overlap_seconds: overlap } });
        expect(res.statusCode, String(overlap)).toBe(422);
        expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/overlap_seconds" }] });
      }
      expect(await statusWith(key.secret)).toBe(200);
    });

    it("refuses a developer the rotation of a full_access key, and issues no secret", async () => {
      const { memberToken, fullKey, sendingKey } = await team("developer");
      const refused = await t.call({ method: "POST", url: `/v1/api-keys/${fullKey.id}/rotate`, payload: { overlap_seconds: 0 }, key: memberToken });
      expect(refused.statusCode, refused.body).toBe(403);
      expect(refused.json()).toMatchObject({ code: "insufficient_role", detail: expect.stringContaining("Rotating a full_access key needs the admin role") });
      expect(refused.body).not.toMatch(/svc_test_/);
      expect(await statusWith(fullKey.secret)).toBe(200);
      expect((await t.call({ method: "POST", url: `/v1/api-keys/${sendingKey.id}/rotate`, payload: {}, key: memberToken })).statusCode).toBe(200);
    });

    it("refuses a developer the replay of an admin's rotation under the admin's Idempotency-Key, and shows no secret", async () => {
      const { ownerToken, memberToken, fullKey } = await team("developer");
      const rotate = (key: string) => t.call({ method: "POST", url: `/v1/api-keys/${fullKey.id}/rotate`, payload: { overlap_seconds: 0 }, headers: { "idempotency-key": "rot-1" }, key });
      const rotated = await rotate(ownerToken);
      expect(rotated.statusCode, rotated.body).toBe(200);
      const replay = await rotate(memberToken);
      expect(replay.statusCode, replay.body).toBe(422);
      expect(replay.json()).toMatchObject({ code: "idempotency_key_reused" });
      expect(replay.body).not.toContain(rotated.json().secret);
    });

    it("lets an admin rotate a full_access key", async () => {
      const { memberToken, fullKey } = await team("admin");
      const res = await t.call({ method: "POST", url: `/v1/api-keys/${fullKey.id}/rotate`, payload: { overlap_seconds: 0 }, key: memberToken });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().secret).toMatch(SECRET_SHAPE);
    });

    it("answers 404 for an id that does not exist", async () => {
      const res = await t.call({ method: "POST", url: "/v1/api-keys/key_00000000000000000000000000/rotate", payload: {} });
      expect(res.statusCode).toBe(404);
    });
  });

});
