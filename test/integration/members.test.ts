import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { databases } from "../helpers/databases.js";
import type { DashboardSession} from "../helpers/dashboard-session.js";
import { signedUp } from "../helpers/dashboard-session.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";
import { migrate } from "../../src/db/connection.js";
import { migrationSource } from "../../src/db/migrations/index.js";

describe.each(databases)("accounts, members and roles ($name)", (database) => {
  let t: TestApp;
  let owner: { session: DashboardSession; workspaceId: string; userId: string };
  let ownerToken: string;
  beforeEach(async () => {
    t = await createTestApp(database);
    owner = await signedUp(t, { email: "ada@acme.example", name: "Ada", workspace_name: "Acme" });
    ownerToken = await owner.session.token(owner.workspaceId);
  });
  afterEach(async () => t.close());

  const as = (key: string) => ({
    get: (url: string) => t.call({ method: "GET", url, key }),
    post: (url: string, payload: object) => t.call({ method: "POST", url, payload, key }),
    patch: (url: string, payload: object) => t.call({ method: "PATCH", url, payload, key }),
    delete: (url: string) => t.call({ method: "DELETE", url, key }),
  });

  /** Starts over on an install where anyone may sign up (SIGNUP=open), with Ada as the first owner. */
  async function withOpenSignup() {
    await t.close();
    t = await createTestApp(database, { SIGNUP: "open" });
    owner = await signedUp(t, { email: "ada@acme.example" });
    ownerToken = await owner.session.token(owner.workspaceId);
  }

  /** Invites an address with a role and signs it up through the link; returns its session and token. */
  async function member(email: string, role: string) {
    const invitation = await as(ownerToken).post("/v1/invitations", { email, role });
    expect(invitation.statusCode).toBe(201);
    const secret = new URL(invitation.json().accept_url).pathname.split("/").pop()!;
    const joined = await signedUp(t, { email, invitation_token: secret });
    expect(joined.workspaceId).toBe(owner.workspaceId);
    return { ...joined, token: await joined.session.token(owner.workspaceId) };
  }

  describe("getAccount", () => {
    it("returns the user and their workspaces with roles", async () => {
      const res = await as(ownerToken).get("/v1/account");
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ user: { id: owner.userId, email: "ada@acme.example" }, workspaces: [{ id: owner.workspaceId, name: "Acme", role: "owner" }] });
    });

    it("refuses API keys: account operations act for a person", async () => {
      const res = await as(t.workspace.sandboxKey).get("/v1/account");
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe("user_token_required");
    });
  });

  describe("updateAccount", () => {
    it("renames the caller, trimmed, as every workspace's members list shows them; an empty name or null clears it", async () => {
      const grace = await member("grace@acme.example", "viewer");
      const renamed = await as(grace.token).patch("/v1/account", { name: "  Grace Hopper " });
      expect(renamed.statusCode, renamed.body).toBe(200);
      expect(renamed.json()).toMatchObject({ user: { id: grace.userId, email: "grace@acme.example", name: "Grace Hopper" }, workspaces: [{ id: owner.workspaceId, role: "viewer" }] });
      const listed = (await as(ownerToken).get("/v1/members")).json().data as Array<{ user_id: string; name: string | null }>;
      expect(listed.find((m) => m.user_id === grace.userId)?.name).toBe("Grace Hopper");
      // Nobody else changed.
      expect((await as(ownerToken).get("/v1/account")).json().user.name).toBe("Ada");

      for (const cleared of ["   ", null]) {
        await as(grace.token).patch("/v1/account", { name: "Grace" });
        const res = await as(grace.token).patch("/v1/account", { name: cleared });
        expect(res.statusCode).toBe(200);
        expect(res.json().user.name).toBeNull();
      }
    });

    it("refuses an empty body, an unknown field or a name over 100 characters, and changes nothing", async () => {
      for (const [payload, pointer] of [[{}, ""], [{ email: "eve@acme.example" }, "/email"], [{ name: "x".repeat(101) }, "/name"]] as const) {
        const res = await as(ownerToken).patch("/v1/account", payload);
        expect(res.statusCode, JSON.stringify(payload)).toBe(422);
        expect(res.json().errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
      }
      expect((await as(ownerToken).get("/v1/account")).json().user).toMatchObject({ name: "Ada", email: "ada@acme.example" });
    });

    it("refuses API keys: account operations act for a person", async () => {
      const res = await as(t.workspace.liveKey).patch("/v1/account", { name: "Mallory" });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe("user_token_required");
    });
  });

  describe("createWorkspace", () => {
    it("creates a workspace the caller owns, reachable with a new token", async () => {
      const res = await as(ownerToken).post("/v1/workspaces", { name: "Acme staging" });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toMatchObject({ object: "workspace_membership", name: "Acme staging", role: "owner" });
      const token = await owner.session.token(res.json().id, "live");
      expect((await as(token).get("/v1/workspace")).json()).toMatchObject({ name: "Acme staging", environment: "live" });
    });

    it("drops the spaces around the name, and refuses one of only spaces with 422, creating nothing", async () => {
      expect((await as(ownerToken).post("/v1/workspaces", { name: " Acme staging  " })).json().name).toBe("Acme staging");
      const refused = await as(ownerToken).post("/v1/workspaces", { name: "   " });
      expect(refused.statusCode, refused.body).toBe(422);
      expect(refused.json().errors).toEqual([expect.objectContaining({ pointer: "/name" })]);
      expect((await as(ownerToken).get("/v1/account")).json().workspaces.map((w: { name: string }) => w.name).sort()).toEqual(["Acme", "Acme staging"]);
    });
  });

  describe("invitations", () => {
    it("shows the link once, previews it, and lets the invited address join with the role", async () => {
      const res = await as(ownerToken).post("/v1/invitations", { email: "grace@acme.example", role: "viewer" });
      expect(res.json()).toMatchObject({ object: "invitation", email: "grace@acme.example", role: "viewer", invited_by: owner.userId, accept_url: expect.stringMatching(/^http:\/\/localhost(:80)?\/invitations\/[A-Za-z0-9_-]{43}$/) });
      const secret = res.json().accept_url.split("/").pop();
      const preview = await t.app.inject({ method: "GET", url: `/auth/invitations/${secret}` });
      expect(preview.json()).toMatchObject({ email: "grace@acme.example", role: "viewer", workspace_name: "Acme" });
      const listed = await as(ownerToken).get("/v1/invitations");
      expect(listed.json().data).toEqual([expect.not.objectContaining({ accept_url: expect.anything() })]);
      const grace = await signedUp(t, { email: "Grace@acme.example", invitation_token: secret });
      expect((await as(await grace.session.token(owner.workspaceId)).get("/v1/account")).json().workspaces).toEqual([expect.objectContaining({ role: "viewer" })]);
      expect((await as(ownerToken).get("/v1/invitations")).json().data).toEqual([]);
      expect((await t.app.inject({ method: "GET", url: `/auth/invitations/${secret}` })).statusCode).toBe(404);
    });

    it("lets a signed-in user accept an invitation to another workspace", async () => {
      await withOpenSignup();
      const grace = await signedUp(t, { email: "grace@navy.example" });
      const secret = (await as(ownerToken).post("/v1/invitations", { email: "grace@navy.example" })).json().accept_url.split("/").pop();
      t.clock.advance(1000);
      const res = await grace.session.post("/auth/invitations/accept", { token: secret });
      expect(res.statusCode).toBe(200);
      expect(res.json().workspaces.map((w: { id: string; role: string }) => [w.id, w.role])).toEqual([
        [grace.workspaceId, "owner"],
        [owner.workspaceId, "developer"],
      ]);
    });

    it("refuses an invitation accepted by another address, and a link that is not valid", async () => {
      await withOpenSignup();
      const eve = await signedUp(t, { email: "eve@evil.example" });
      const secret = (await as(ownerToken).post("/v1/invitations", { email: "grace@navy.example" })).json().accept_url.split("/").pop();
      expect((await eve.session.post("/auth/invitations/accept", { token: secret })).json().code).toBe("invitation_email_mismatch");
      expect((await eve.session.post("/auth/invitations/accept", { token: "nope" })).json().code).toBe("invitation_not_found");
    });

    it("refuses to invite a member again, and revokes a pending invitation", async () => {
      const grace = await member("grace@acme.example", "developer");
      expect((await as(ownerToken).post("/v1/invitations", { email: "GRACE@acme.example" })).json().code).toBe("already_a_member");
      const pending = await as(ownerToken).post("/v1/invitations", { email: "alan@acme.example" });
      expect((await as(grace.token).delete(`/v1/invitations/${pending.json().id}`)).json().code).toBe("insufficient_role");
      expect((await as(ownerToken).delete(`/v1/invitations/${pending.json().id}`)).statusCode).toBe(200);
      expect((await as(ownerToken).delete(`/v1/invitations/${pending.json().id}`)).statusCode).toBe(404);
    });

    it("lets only an owner revoke an invitation to be an owner, as only an owner may send one", async () => {
      const admin = await member("grace@acme.example", "admin");
      const toOwner = (await as(ownerToken).post("/v1/invitations", { email: "alan@acme.example", role: "owner" })).json();
      const toDeveloper = (await as(ownerToken).post("/v1/invitations", { email: "ada@navy.example", role: "developer" })).json();
      const refused = await as(admin.token).delete(`/v1/invitations/${toOwner.id}`);
      expect(refused.statusCode, refused.body).toBe(403);
      expect(refused.json().code).toBe("insufficient_role");
      expect((await as(ownerToken).get("/v1/invitations")).json().data.map((i: { id: string }) => i.id).sort()).toEqual([toOwner.id, toDeveloper.id].sort());
      expect((await as(admin.token).delete(`/v1/invitations/${toDeveloper.id}`)).statusCode).toBe(200);
      expect((await as(ownerToken).delete(`/v1/invitations/${toOwner.id}`)).statusCode).toBe(200);
    });

    it("refuses an admin's invitation to an address an owner invited to be an owner, keeping the owner's", async () => {
      const admin = await member("grace@acme.example", "admin");
      const toOwner = (await as(ownerToken).post("/v1/invitations", { email: "alan@acme.example", role: "owner" })).json();
      const refused = await as(admin.token).post("/v1/invitations", { email: "Alan@acme.example", role: "viewer" });
      expect(refused.statusCode, refused.body).toBe(403);
      expect(refused.json().code).toBe("insufficient_role");
      const pending = (await as(ownerToken).get("/v1/invitations")).json().data;
      expect(pending.map((i: { id: string; role: string }) => [i.id, i.role])).toEqual([[toOwner.id, "owner"]]);
      // Once the owner's offer has expired, it withdraws nothing: the admin's invitation replaces it.
      await t.runtime.db.knex("invitations").where({ id: toOwner.id }).update({ expires_at: t.clock.now() - 1 });
      const replaced = await as(admin.token).post("/v1/invitations", { email: "alan@acme.example", role: "viewer" });
      expect(replaced.statusCode, replaced.body).toBe(201);
      // An owner may replace it either way.
      expect((await as(ownerToken).post("/v1/invitations", { email: "alan@acme.example", role: "owner" })).statusCode).toBe(201);
    });

    it("keeps one pending invitation of two sent to one address at once, the other closed", async () => {
      const members = t.runtime.services.members;
      const principal = { workspaceId: owner.workspaceId, environment: "sandbox" as const, credential: { kind: "user_token" as const, id: "tok_test", userId: owner.userId, role: "owner" as const } };
      const both = () => Promise.all(["grace@acme.example", "Grace@acme.example"].map((email) => members.createInvitation(principal, { email }, "https://mail.example.com")));
      if (database.name === "mysql") {
        // Both have closed what was pending (nothing) and wait to insert, their foreign-key check
        // held up by a lock on the workspace's row: the interleaving that timing alone rarely gives.
        const knex = t.runtime.db.knex;
        let result!: ReturnType<typeof both>;
        await knex.transaction(async (holder) => {
          await holder("workspaces").where({ id: owner.workspaceId }).forUpdate().first("id");
          result = both();
          const waiting = async () => Number(((await knex.raw("SELECT COUNT(*) AS n FROM information_schema.processlist WHERE db = DATABASE() AND command = 'Query' AND id <> CONNECTION_ID()")) as [Array<{ n: number }>])[0][0]!.n);
          for (let tries = 0; (await waiting()) < 2; tries++) {
            if (tries > 400) throw new Error("the invitations never reached the database");
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        });
        await result;
      } else await both();
      const pending = (await as(ownerToken).get("/v1/invitations")).json().data;
      expect(pending).toHaveLength(1);
      expect(Number(((await t.runtime.db.knex("invitations").whereNull("closed_at").count({ n: "*" }).first()) as { n: number | string }).n)).toBe(1);
    });

    it("keeps the newest of an address's open invitations when migration 028 makes them unique, closing the others", async () => {
      const knex = t.runtime.db.knex;
      await knex.migrate.down({ migrationSource, name: "028-pending-invitations" });
      const base = { workspace_id: owner.workspaceId, role: "developer", invited_by: owner.userId, expires_at: t.clock.now() + 3_600_000, closed_at: null };
      await knex("invitations").insert([
        { ...base, id: "inv_a1", email: "grace@acme.example", email_normalized: "grace@acme.example", digest: "a".repeat(64), created_at: 1000 },
        { ...base, id: "inv_a2", email: "Grace@acme.example", email_normalized: "grace@acme.example", digest: "b".repeat(64), created_at: 2000 },
        { ...base, id: "inv_b1", email: "alan@acme.example", email_normalized: "alan@acme.example", digest: "c".repeat(64), created_at: 1500 },
      ]);
      await migrate(t.runtime.db);
      const rows = (await knex("invitations").orderBy("id").select("id", "closed_at", "pending_email")) as Array<{ id: string; closed_at: number | string | null; pending_email: string | null }>;
      expect(rows.map((row) => ({ ...row, closed_at: row.closed_at === null ? null : Number(row.closed_at) }))).toEqual([
        { id: "inv_a1", closed_at: 2000, pending_email: null },
        { id: "inv_a2", closed_at: null, pending_email: "grace@acme.example" },
        { id: "inv_b1", closed_at: null, pending_email: "alan@acme.example" },
      ]);
    });

    it("lets only owners invite owners", async () => {
      const admin = await member("grace@acme.example", "admin");
      const res = await as(admin.token).post("/v1/invitations", { email: "alan@acme.example", role: "owner" });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe("insufficient_role");
    });
  });

  describe("roles", () => {
    it("lets a viewer read but not send, change settings or manage keys", async () => {
      const viewer = await member("grace@acme.example", "viewer");
      expect((await as(viewer.token).get("/v1/messages")).statusCode).toBe(200);
      expect((await as(viewer.token).get("/v1/api-keys")).statusCode).toBe(200);
      for (const res of [await as(viewer.token).post("/v1/messages", aMessage()), await as(viewer.token).post("/v1/api-keys", { name: "x" }), await as(viewer.token).patch("/v1/workspace", { name: "x" })]) {
        expect(res.statusCode).toBe(403);
        expect(res.json()).toMatchObject({ code: "insufficient_role", detail: expect.stringContaining("you are a viewer") });
      }
    });

    it("lets a developer send and manage sending_access keys but not hand out full_access keys, change settings or members", async () => {
      const developer = await member("grace@acme.example", "developer");
      expect((await as(developer.token).post("/v1/messages", aMessage())).statusCode).toBe(202);
      expect((await as(developer.token).post("/v1/api-keys", { name: "ci", permission: "sending_access" })).statusCode).toBe(201);
      // A full_access key is never role-checked, so through one a developer would be an admin.
      expect((await as(developer.token).post("/v1/api-keys", { name: "ci", permission: "full_access" })).json().code).toBe("insufficient_role");
      expect((await as(developer.token).patch("/v1/workspace", { name: "x" })).statusCode).toBe(403);
      expect((await as(developer.token).patch(`/v1/members/${owner.userId}`, { role: "viewer" })).statusCode).toBe(403);
    });

    it("applies a demotion on the next call, not at the token's expiry", async () => {
      const admin = await member("grace@acme.example", "admin");
      expect((await as(admin.token).patch("/v1/workspace", { name: "Acme Inc" })).statusCode).toBe(200);
      expect((await as(ownerToken).patch(`/v1/members/${admin.userId}`, { role: "viewer" })).json()).toMatchObject({ role: "viewer" });
      expect((await as(admin.token).patch("/v1/workspace", { name: "Acme" })).statusCode).toBe(403);
    });
  });

  describe("members", () => {
    it("lists members with their roles", async () => {
      const grace = await member("grace@acme.example", "developer");
      const res = await as(grace.token).get("/v1/members");
      expect(res.json().data.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([
        ["ada@acme.example", "owner"],
        ["grace@acme.example", "developer"],
      ]);
    });

    it("lists the members with one role, paged as the whole list is", async () => {
      const grace = await member("grace@acme.example", "owner");
      await member("alan@acme.example", "developer");
      const linus = await member("linus@acme.example", "owner");
      const emails = (res: { json(): { data: Array<{ email: string }> } }) => res.json().data.map((m) => m.email);
      const first = await as(grace.token).get("/v1/members?role=owner&limit=2");
      expect(first.statusCode).toBe(200);
      expect(emails(first)).toEqual(["ada@acme.example", "grace@acme.example"]);
      expect(first.json()).toMatchObject({ has_more: true, next_cursor: grace.userId });
      const rest = await as(grace.token).get(`/v1/members?role=owner&limit=2&after=${first.json().next_cursor}`);
      expect(emails(rest)).toEqual(["linus@acme.example"]);
      expect(rest.json()).toMatchObject({ has_more: false, next_cursor: null });
      expect(emails(await as(linus.token).get("/v1/members?role=developer"))).toEqual(["alan@acme.example"]);
      expect(emails(await as(linus.token).get("/v1/members?role=viewer"))).toEqual([]);
    });

    it("refuses a role that is not one", async () => {
      const res = await as(ownerToken).get("/v1/members?role=superuser");
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ location: "query", pointer: "/role", message: "must be one of: owner, admin, developer, viewer" }] });
    });

    it("keeps the last owner: no demotion, no removal", async () => {
      for (const res of [await as(ownerToken).patch(`/v1/members/${owner.userId}`, { role: "admin" }), await as(ownerToken).delete(`/v1/members/${owner.userId}`)]) {
        expect(res.statusCode).toBe(409);
        expect(res.json().code).toBe("last_owner");
      }
    });

    it("lets only owners touch owners", async () => {
      const admin = await member("grace@acme.example", "admin");
      expect((await as(admin.token).patch(`/v1/members/${owner.userId}`, { role: "viewer" })).statusCode).toBe(403);
      expect((await as(admin.token).delete(`/v1/members/${owner.userId}`)).statusCode).toBe(403);
      expect((await as(admin.token).patch(`/v1/members/${admin.userId}`, { role: "owner" })).statusCode).toBe(403);
    });

    it("closes the pending invitations of a removed member: their links stop working", async () => {
      const admin = await member("grace@acme.example", "admin");
      const invitation = await as(admin.token).post("/v1/invitations", { email: "alan@acme.example", role: "admin" });
      const own = await as(ownerToken).post("/v1/invitations", { email: "barbara@acme.example" });
      expect((await as(ownerToken).delete(`/v1/members/${admin.userId}`)).statusCode).toBe(200);
      expect((await as(ownerToken).get("/v1/invitations")).json().data.map((i: { id: string }) => i.id)).toEqual([own.json().id]);
      const secret = invitation.json().accept_url.split("/").pop();
      expect((await t.app.inject({ method: "GET", url: `/auth/invitations/${secret}` })).statusCode).toBe(404);
      await expect(signedUp(t, { email: "alan@acme.example", invitation_token: secret })).rejects.toThrow(/invitation_not_found/);
    });

    it("closes the pending invitations a demoted member may no longer send", async () => {
      const second = await member("grace@acme.example", "owner");
      const asOwner = await as(second.token).post("/v1/invitations", { email: "alan@acme.example", role: "owner" });
      const asDeveloper = await as(second.token).post("/v1/invitations", { email: "barbara@acme.example", role: "developer" });
      expect((await as(ownerToken).patch(`/v1/members/${second.userId}`, { role: "admin" })).statusCode).toBe(200);
      // An admin may still invite developers, not owners.
      expect((await as(ownerToken).get("/v1/invitations")).json().data.map((i: { id: string }) => i.id)).toEqual([asDeveloper.json().id]);
      expect((await as(ownerToken).patch(`/v1/members/${second.userId}`, { role: "developer" })).statusCode).toBe(200);
      expect((await as(ownerToken).get("/v1/invitations")).json().data).toEqual([]);
      for (const invitation of [asOwner, asDeveloper]) {
        expect((await t.app.inject({ method: "GET", url: `/auth/invitations/${invitation.json().accept_url.split("/").pop()}` })).statusCode).toBe(404);
      }
    });

    it("keeps an owner when two owners demote each other at once", async () => {
      const grace = await member("grace@acme.example", "owner");
      for (let round = 0; round < 5; round++) {
        const answers = await Promise.all([as(ownerToken).patch(`/v1/members/${grace.userId}`, { role: "admin" }), as(grace.token).patch(`/v1/members/${owner.userId}`, { role: "admin" })]);
        expect(answers.map((res) => res.statusCode).filter((status) => status === 200), `round ${round}`).toHaveLength(1);
        const refused = answers.find((res) => res.statusCode !== 200)!;
        expect([403, 409], refused.body).toContain(refused.statusCode);
        const members = (await as(ownerToken).get("/v1/members")).json().data as Array<{ user_id: string; role: string }>;
        const owners = members.filter((m) => m.role === "owner");
        expect(owners, `round ${round}`).toHaveLength(1);
        // The one left an owner makes the other an owner again for the next round.
        const [ownerLeft, other] = owners[0]!.user_id === owner.userId ? [ownerToken, grace.userId] : [grace.token, owner.userId];
        expect((await as(ownerLeft).patch(`/v1/members/${other}`, { role: "owner" })).statusCode).toBe(200);
      }
    });

    it("keeps an owner when two owners remove each other at once", async () => {
      for (let round = 0; round < 5; round++) {
        const grace = await member(`grace${round}@acme.example`, "owner");
        const answers = await Promise.all([as(ownerToken).delete(`/v1/members/${grace.userId}`), as(grace.token).delete(`/v1/members/${owner.userId}`)]);
        expect(answers.map((res) => res.statusCode).filter((status) => status === 200), `round ${round}`).toHaveLength(1);
        const survivorToken = answers[0]!.statusCode === 200 ? ownerToken : grace.token;
        const members = (await as(survivorToken).get("/v1/members")).json().data as Array<{ role: string }>;
        expect(members.map((m) => m.role), `round ${round}`).toEqual(["owner"]);
        if (survivorToken !== ownerToken) {
          // Ada was removed: Grace invites her back as an owner, Ada accepts while signed in and
          // removes Grace, so that the next round starts as this one did.
          const invitation = await as(grace.token).post("/v1/invitations", { email: "ada@acme.example", role: "owner" });
          expect((await owner.session.post("/auth/invitations/accept", { token: invitation.json().accept_url.split("/").pop() })).statusCode).toBe(200);
          ownerToken = await owner.session.token(owner.workspaceId);
          expect((await as(ownerToken).delete(`/v1/members/${grace.userId}`)).statusCode).toBe(200);
        }
      }
    });

    it("removes a member, whose tokens stop working at once", async () => {
      const grace = await member("grace@acme.example", "developer");
      const res = await as(ownerToken).delete(`/v1/members/${grace.userId}`);
      expect(res.json()).toMatchObject({ user_id: grace.userId, email: "grace@acme.example" });
      expect((await as(grace.token).get("/v1/workspace")).statusCode).toBe(401);
      expect((await grace.session.post("/auth/token", { workspace_id: owner.workspaceId, environment: "sandbox" })).statusCode).toBe(404);
    });
  });

  describe("leaveWorkspace", () => {
    const leave = (token: string) => as(token).post("/v1/workspace/leave", {});

    it.each(["developer", "viewer"])("lets a %s leave: their tokens stop working at once and they are no longer listed", async (role) => {
      const grace = await member("grace@acme.example", role);
      const liveToken = await grace.session.token(owner.workspaceId, "live");
      const res = await leave(grace.token);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ object: "member", user_id: grace.userId, email: "grace@acme.example", role });
      for (const token of [grace.token, liveToken]) expect((await as(token).get("/v1/workspace")).statusCode).toBe(401);
      expect((await grace.session.post("/auth/token", { workspace_id: owner.workspaceId, environment: "sandbox" })).statusCode).toBe(404);
      expect((await as(ownerToken).get("/v1/members")).json().data.map((m: { user_id: string }) => m.user_id)).toEqual([owner.userId]);
    });

    it("closes the pending invitations of a member who leaves: their links stop working", async () => {
      const admin = await member("grace@acme.example", "admin");
      const invitation = await as(admin.token).post("/v1/invitations", { email: "alan@acme.example", role: "developer" });
      const own = await as(ownerToken).post("/v1/invitations", { email: "barbara@acme.example" });
      expect((await leave(admin.token)).statusCode).toBe(200);
      expect((await as(ownerToken).get("/v1/invitations")).json().data.map((i: { id: string }) => i.id)).toEqual([own.json().id]);
      const secret = invitation.json().accept_url.split("/").pop();
      expect((await t.app.inject({ method: "GET", url: `/auth/invitations/${secret}` })).statusCode).toBe(404);
    });

    it("keeps the last owner: 409 last_owner, still a member", async () => {
      const res = await leave(ownerToken);
      expect(res.statusCode).toBe(409);
      expect(res.json().code).toBe("last_owner");
      expect((await as(ownerToken).get("/v1/members")).json().data.map((m: { role: string }) => m.role)).toEqual(["owner"]);
    });

    it("lets an owner leave while another owner remains", async () => {
      const grace = await member("grace@acme.example", "owner");
      expect((await leave(ownerToken)).json()).toMatchObject({ user_id: owner.userId, role: "owner" });
      expect((await as(ownerToken).get("/v1/workspace")).statusCode).toBe(401);
      expect((await as(grace.token).get("/v1/members")).json().data.map((m: { user_id: string; role: string }) => [m.user_id, m.role])).toEqual([[grace.userId, "owner"]]);
      // Grace is now the last owner.
      expect((await leave(grace.token)).json().code).toBe("last_owner");
    });

    it("keeps an owner when two owners leave at once", async () => {
      const grace = await member("grace@acme.example", "owner");
      const answers = await Promise.all([leave(ownerToken), leave(grace.token)]);
      expect(answers.map((res) => res.statusCode).sort()).toEqual([200, 409]);
      const survivor = answers[0]!.statusCode === 200 ? grace.token : ownerToken;
      expect((await as(survivor).get("/v1/members")).json().data.map((m: { role: string }) => m.role)).toEqual(["owner"]);
    });

    it("is recorded in the audit log of both environments, the member who left as actor and target", async () => {
      const grace = await member("grace@acme.example", "developer");
      const res = await leave(grace.token);
      expect(res.statusCode).toBe(200);
      for (const environment of ["sandbox", "live"] as const) {
        const log = await as(await owner.session.token(owner.workspaceId, environment)).get(`/v1/audit-events?operation=leaveWorkspace`);
        expect(log.json().data, environment).toEqual([
          expect.objectContaining({ operation: "leaveWorkspace", actor: { type: "user", id: grace.userId }, target: { type: "member", id: grace.userId }, fields: [] }),
        ]);
      }
    });

    it("refuses a retry with the same Idempotency-Key 401: leaving ended the token", async () => {
      const grace = await member("grace@acme.example", "developer");
      const retry = () => t.call({ method: "POST", url: "/v1/workspace/leave", payload: {}, key: grace.token, headers: { "idempotency-key": "leave-1" } });
      expect((await retry()).statusCode).toBe(200);
      const again = await retry();
      expect(again.statusCode).toBe(401);
      expect(again.headers["idempotent-replayed"]).toBeUndefined();
    });

    it("refuses API keys: account operations act for a person", async () => {
      const res = await leave(t.workspace.sandboxKey);
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe("user_token_required");
    });

    it("leaves only the token's workspace: the member's other workspaces and their members stay as they were", async () => {
      const staging = (await as(ownerToken).post("/v1/workspaces", { name: "Staging" })).json();
      const stagingToken = await owner.session.token(staging.id);
      const invitation = (await as(stagingToken).post("/v1/invitations", { email: "grace@acme.example", role: "viewer" })).json();
      const grace = await member("grace@acme.example", "developer");
      expect((await grace.session.post("/auth/invitations/accept", { token: invitation.accept_url.split("/").pop() })).statusCode).toBe(200);
      const graceStaging = await grace.session.token(staging.id);
      expect((await leave(grace.token)).statusCode).toBe(200);
      expect((await as(graceStaging).get("/v1/account")).json().workspaces.map((w: { id: string; role: string }) => [w.id, w.role])).toEqual([[staging.id, "viewer"]]);
      expect((await as(stagingToken).get("/v1/members")).json().data.map((m: { user_id: string }) => m.user_id)).toEqual([owner.userId, grace.userId]);
      // Ada owns both; leaving Staging leaves her the owner of Acme.
      const alan = await member("alan@acme.example", "owner");
      expect((await as(alan.token).get("/v1/members")).json().data).toHaveLength(2);
      expect((await leave(stagingToken)).json().code).toBe("last_owner");
      expect((await as(ownerToken).get("/v1/workspace")).statusCode).toBe(200);
    });
  });

  describe("tenant isolation", () => {
    it("answers 404 for another workspace's member and invitation, and keeps environments apart", async () => {
      const staging = (await as(ownerToken).post("/v1/workspaces", { name: "Staging" })).json();
      const stagingToken = await owner.session.token(staging.id);
      const invitation = (await as(ownerToken).post("/v1/invitations", { email: "alan@acme.example" })).json();
      const grace = await member("grace@acme.example", "developer");
      const patched = await as(stagingToken).patch(`/v1/members/${grace.userId}`, { role: "viewer" });
      expect(patched.statusCode).toBe(404);
      // Members and invitations belong to the workspace, not to one of its environments.
      expect(patched.json().detail).toBe(`No member ${grace.userId} in this workspace.`);
      expect((await as(stagingToken).delete(`/v1/members/${grace.userId}`)).statusCode).toBe(404);
      const revoked = await as(stagingToken).delete(`/v1/invitations/${invitation.id}`);
      expect(revoked.statusCode).toBe(404);
      expect(revoked.json().detail).toBe(`No pending invitation ${invitation.id} in this workspace.`);
      const sent = (await as(ownerToken).post("/v1/messages", aMessage())).json();
      const liveToken = await owner.session.token(owner.workspaceId, "live");
      expect((await as(liveToken).get(`/v1/messages/${sent.id}`)).statusCode).toBe(404);
      expect((await as(stagingToken).get(`/v1/messages/${sent.id}`)).statusCode).toBe(404);
    });
  });
});
