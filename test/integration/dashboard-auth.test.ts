import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { databases } from "../helpers/databases.js";
import { DashboardSession, signedUp } from "../helpers/dashboard-session.js";
import { createTestApp, type TestApp } from "../helpers/test-app.js";

const PASSWORD = "correct horse battery";

describe.each(databases)("dashboard sessions: /auth/* ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(database);
  });
  afterEach(async () => t.close());

  const rowCount = async (table: string) => Number(((await t.runtime.db.knex(table).count({ n: "*" }).first()) as { n: number | string }).n);
  const userCount = () => rowCount("users");

  /**
   * MariaDB: runs `work` while one connection holds the workspaces table, and lets go once two
   * statements wait in the database. A sign-up writes its workspace last, so two first sign-ups
   * have then both read `users` before either commits: the race that timing alone rarely hits.
   * (SQLite has one connection: its transactions never interleave.)
   */
  async function whileWorkspacesLocked<T>(work: () => Promise<T>): Promise<T> {
    const knex = t.runtime.db.knex;
    let result!: Promise<T>;
    await knex.transaction(async (holder) => {
      await holder.raw("LOCK TABLES workspaces WRITE");
      result = work();
      const waiting = async () => Number(((await knex.raw("SELECT COUNT(*) AS n FROM information_schema.processlist WHERE db = DATABASE() AND command = 'Query' AND id <> CONNECTION_ID()")) as [Array<{ n: number }>])[0][0]!.n);
      for (let tries = 0; (await waiting()) < 2; tries++) {
        if (tries > 400) throw new Error("the sign-ups never reached the database");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await holder.raw("UNLOCK TABLES");
    });
    return result;
  }

  describe("GET /auth/session", () => {
    it("answers a signed-out visitor with a CSRF token in the body and an HttpOnly, SameSite=Strict __Host- cookie", async () => {
      const res = await t.app.inject({ method: "GET", url: "/auth/session" });
      expect(res.statusCode).toBe(200);
      expect(res.headers["cache-control"]).toBe("no-store");
      const body = res.json();
      expect(body).toEqual({ signed_in: false, user: null, workspaces: [], csrf_token: expect.any(String), signup: "first_user" });
      const cookie = (res.cookies as Array<Record<string, unknown>>).find((c) => c.name === "__Host-mailroom_csrf");
      expect(cookie).toMatchObject({ value: body.csrf_token, httpOnly: true, secure: true, sameSite: "Strict", path: "/" });
    });

    it("uses unprefixed cookies without Secure on plain HTTP away from loopback", async () => {
      const res = await t.app.inject({ method: "GET", url: "/auth/session", headers: { host: "mail.internal:3000" } });
      const cookie = (res.cookies as Array<Record<string, unknown>>).find((c) => c.name === "mailroom_csrf");
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict" });
      expect(cookie?.secure).toBeUndefined();
    });
  });

  describe("sign-up", () => {
    it("lets the first user create the first workspace and own it", async () => {
      const session = new DashboardSession(t);
      const res = await session.signUp({ email: "Ada@Acme.example", name: "Ada", workspace_name: "Acme" });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toMatchObject({ signed_in: true, user: { object: "user", email: "Ada@Acme.example", name: "Ada" }, workspaces: [{ name: "Acme", role: "owner" }] });
      expect(session.cookie("__Host-mailroom_session")).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const stored = (await t.runtime.db.knex("users").first()) as { password_hash: string };
      expect(stored.password_hash).toMatch(/^scrypt\$17\$8\$1\$/);
      expect((await session.load()).signup).toBe("invitation_only");
    });

    it("refuses a second sign-up without an invitation, storing nothing", async () => {
      await signedUp(t, { email: "ada@acme.example" });
      const res = await new DashboardSession(t).signUp({ email: "eve@evil.example" });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ code: "signup_closed" });
      expect(await userCount()).toBe(1);
    });

    it("lets anyone sign up with SIGNUP=open, each into a workspace of their own", async () => {
      await t.close();
      t = await createTestApp(database, { SIGNUP: "open" });
      const first = await signedUp(t, { email: "ada@acme.example" });
      const second = await signedUp(t, { email: "grace@navy.example" });
      expect(second.workspaceId).not.toBe(first.workspaceId);
    });

    it("refuses an address already registered, whatever its case", async () => {
      await t.close();
      t = await createTestApp(database, { SIGNUP: "open" });
      await signedUp(t, { email: "ada@acme.example" });
      const res = await new DashboardSession(t).signUp({ email: "ADA@acme.example" });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ code: "email_taken" });
    });

    it("refuses a short password and a malformed address with every failing field", async () => {
      const res = await new DashboardSession(t).signUp({ email: "not-an-address", password: "short" });
      expect(res.statusCode).toBe(422);
      expect(res.json().errors).toEqual([expect.objectContaining({ pointer: "/email" })]);
      const short = await new DashboardSession(t).signUp({ email: "ada@acme.example", password: "short" });
      expect(short.statusCode).toBe(422);
      expect(short.json().errors).toEqual([expect.objectContaining({ pointer: "/password", message: "must be 10 to 200 characters long" })]);
      expect(await userCount()).toBe(0);
    });

    it("lets exactly one of two simultaneous first sign-ups through", async () => {
      const both = () => Promise.all([new DashboardSession(t).signUp({ email: "ada@acme.example" }), new DashboardSession(t).signUp({ email: "mallory@evil.example" })]);
      const answers = database.name === "mysql" ? await whileWorkspacesLocked(both) : await both();
      expect(answers.map((res) => res.statusCode).sort()).toEqual([201, 403]);
      expect(answers.find((res) => res.statusCode === 403)!.json().code).toBe("signup_closed");
      expect(await userCount()).toBe(1);
    });

    it("answers 409 email_taken to the second of two simultaneous sign-ups of one address", async () => {
      await t.close();
      t = await createTestApp(database, { SIGNUP: "open" });
      await signedUp(t, { email: "ada@acme.example" });
      const both = () => Promise.all([new DashboardSession(t).signUp({ email: "grace@navy.example" }), new DashboardSession(t).signUp({ email: "GRACE@navy.example" })]);
      const answers = database.name === "mysql" ? await whileWorkspacesLocked(both) : await both();
      expect(answers.map((res) => res.statusCode).sort()).toEqual([201, 409]);
      expect(answers.find((res) => res.statusCode === 409)!.json().code).toBe("email_taken");
      expect(await userCount()).toBe(2);
    });

    it("refuses a made-up invitation token before anything else, even for a registered address", async () => {
      await signedUp(t, { email: "ada@acme.example" });
      const res = await new DashboardSession(t).signUp({ email: "ada@acme.example", invitation_token: "made-up" });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe("invitation_not_found");
      expect([await userCount(), await rowCount("sessions")]).toEqual([1, 1]);
    });

    it("refuses an invitation for another address, storing nothing", async () => {
      const { session, workspaceId } = await signedUp(t, { email: "ada@acme.example" });
      const invitation = await t.call({ method: "POST", url: "/v1/invitations", key: await session.token(workspaceId), payload: { email: "grace@acme.example" } });
      const token = invitation.json().accept_url.split("/").pop();
      const res = await new DashboardSession(t).signUp({ email: "mallory@evil.example", invitation_token: token });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe("invitation_email_mismatch");
      expect(await userCount()).toBe(1);
    });

    it("counts every sign-up attempt against the client: the 21st refused one in 15 minutes answers 429", async () => {
      const visitor = new DashboardSession(t);
      await signedUp(t, { email: "ada@acme.example" });
      for (let i = 0; i < 20; i++) expect((await visitor.signUp({ email: `mallory${i}@evil.example`, invitation_token: "made-up" })).statusCode).toBe(404);
      const blocked = await visitor.signUp({ email: "mallory@evil.example", invitation_token: "made-up" });
      expect(blocked.statusCode).toBe(429);
      expect(blocked.json().code).toBe("too_many_attempts");
    });
  });

  describe("sign-in", () => {
    it("signs in with the right password and answers unknown address and wrong password alike", async () => {
      await signedUp(t, { email: "ada@acme.example" });
      const ok = await new DashboardSession(t).signIn("ADA@acme.example");
      expect(ok.statusCode).toBe(200);
      const wrong = await new DashboardSession(t).signIn("ada@acme.example", "wrong password!");
      const unknown = await new DashboardSession(t).signIn("nobody@acme.example", "wrong password!");
      expect(wrong.statusCode).toBe(401);
      expect(unknown.statusCode).toBe(401);
      const strip = (body: Record<string, unknown>) => ({ ...body, request_id: undefined });
      expect(strip(wrong.json())).toEqual(strip(unknown.json()));
      expect(wrong.json().code).toBe("invalid_credentials");
    });

    it("ends the session the browser had, with its tokens, when it signs in again: the cookie it replaced stops working", async () => {
      await t.close();
      t = await createTestApp(database, { SIGNUP: "open" });
      const { session, workspaceId } = await signedUp(t, { email: "ada@acme.example" });
      await signedUp(t, { email: "bob@acme.example" });
      const token = await session.token(workspaceId);
      const replaced = session.cookie("__Host-mailroom_session")!;
      // A failed attempt leaves the browser signed in as it was.
      expect((await session.signIn("bob@acme.example", "wrong password!")).statusCode).toBe(401);
      expect((await session.load()).signed_in).toBe(true);
      expect((await session.signIn("bob@acme.example")).statusCode).toBe(200);
      expect(session.cookie("__Host-mailroom_session")).not.toBe(replaced);
      const stale = await t.app.inject({ method: "GET", url: "/auth/session", headers: { cookie: `__Host-mailroom_session=${replaced}` } });
      expect(stale.json().signed_in).toBe(false);
      expect((await t.call({ method: "GET", url: "/v1/workspace", key: token })).statusCode).toBe(401);
      // Bob's sign-up session, and the browser's new one.
      expect(await rowCount("sessions")).toBe(2);
      expect(await session.load()).toMatchObject({ signed_in: true, user: { email: "bob@acme.example" } });
      // A sign-up from a signed-in browser replaces its session the same way.
      const bobs = session.cookie("__Host-mailroom_session")!;
      expect((await session.signUp({ email: "carol@acme.example" })).statusCode).toBe(201);
      const gone = await t.app.inject({ method: "GET", url: "/auth/session", headers: { cookie: `__Host-mailroom_session=${bobs}` } });
      expect(gone.json().signed_in).toBe(false);
      expect(await rowCount("sessions")).toBe(2);
    });

    it("throttles an address after 5 failures in 15 minutes, even for the right password, then lets it in again", async () => {
      await signedUp(t, { email: "ada@acme.example" });
      const session = new DashboardSession(t);
      for (let i = 0; i < 5; i++) expect((await session.signIn("ada@acme.example", "wrong password!")).statusCode).toBe(401);
      const blocked = await session.signIn("ada@acme.example");
      expect(blocked.statusCode).toBe(429);
      expect(blocked.json().code).toBe("too_many_attempts");
      expect(Number(blocked.headers["retry-after"])).toBeGreaterThan(0);
      t.clock.advance(15 * 60 * 1000);
      expect((await session.signIn("ada@acme.example")).statusCode).toBe(200);
    });

    it("counts each attempt before checking its password, so of 12 simultaneous guesses only 5 are checked", async () => {
      await signedUp(t, { email: "ada@acme.example" });
      const session = new DashboardSession(t);
      await session.load();
      const answers = await Promise.all(Array.from({ length: 12 }, () => session.post("/auth/sign-in", { email: "ada@acme.example", password: "wrong password!" })));
      expect(answers.map((res) => res.statusCode).filter((status) => status !== 429)).toEqual([401, 401, 401, 401, 401]);
      expect((await session.signIn("ada@acme.example")).statusCode).toBe(429);
    });

    it("counts a client's failures, not its users' successful sign-ins (many people behind one NAT)", async () => {
      await signedUp(t, { email: "ada@acme.example" });
      // 19 refused sign-ups (cheap: no password is hashed) leave the client one short of its 20.
      const visitor = new DashboardSession(t);
      for (let i = 0; i < 19; i++) expect((await visitor.signUp({ email: `mallory${i}@evil.example`, invitation_token: "made-up" })).statusCode).toBe(404);
      for (let i = 0; i < 3; i++) expect((await new DashboardSession(t).signIn("ada@acme.example")).statusCode).toBe(200);
      expect((await new DashboardSession(t).signIn("ada@acme.example", "wrong password!")).statusCode).toBe(401);
      expect((await new DashboardSession(t).signIn("ada@acme.example")).statusCode).toBe(429);
    });
  });

  describe("CSRF", () => {
    const routes = [
      ["/auth/sign-up", { email: "eve@evil.example", password: PASSWORD }],
      ["/auth/sign-in", { email: "ada@acme.example", password: PASSWORD }],
      ["/auth/sign-out", undefined],
      ["/auth/password", { current_password: PASSWORD, new_password: "another long password" }],
      ["/auth/token", { workspace_id: "ws_x", environment: "sandbox" }],
      ["/auth/invitations/accept", { token: "x" }],
    ] as const;

    it.each(routes)("refuses POST %s without the token, with a wrong one, from another origin or site", async (url, payload) => {
      const { session } = await signedUp(t, { email: "ada@acme.example" });
      const attempts: Array<Record<string, string>> = [
        { "x-csrf-token": "" },
        { "x-csrf-token": "forged" },
        { origin: "https://evil.example" },
        { "sec-fetch-site": "cross-site" },
        { "sec-fetch-site": "same-site" },
      ];
      for (const headers of attempts) {
        const res = await session.post(url, payload as object | undefined, headers);
        expect(res.statusCode, JSON.stringify(headers)).toBe(403);
        expect(res.json().code).toBe("csrf_failed");
      }
      // Nothing changed: still signed in, one user, the password unchanged.
      expect((await session.load()).signed_in).toBe(true);
      expect(await userCount()).toBe(1);
      expect((await new DashboardSession(t).signIn("ada@acme.example")).statusCode).toBe(200);
    });

    it("accepts a same-origin request carrying the token", async () => {
      const { session } = await signedUp(t, { email: "ada@acme.example" });
      const res = await session.post("/auth/sign-out", undefined, { origin: "http://localhost:80", "sec-fetch-site": "same-origin" });
      expect(res.statusCode).toBe(204);
    });

    it.each(["https://Mail.Example.com", "https://mail.example.com:443", "https://mail.example.com/"])("accepts the browser's origin when PUBLIC_URL is written %s", async (publicUrl) => {
      await t.close();
      t = await createTestApp(database, { PUBLIC_URL: publicUrl });
      const session = new DashboardSession(t);
      await session.load();
      const res = await session.post("/auth/sign-up", { email: "ada@acme.example", password: PASSWORD }, { origin: "https://mail.example.com", "sec-fetch-site": "same-origin" });
      expect(res.statusCode).toBe(201);
    });
  });

  describe("tokens", () => {
    it("exchanges the session for a 15-minute token scoped to one workspace and environment", async () => {
      const { session, workspaceId } = await signedUp(t, { email: "ada@acme.example" });
      const res = await session.post("/auth/token", { workspace_id: workspaceId, environment: "live" });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ token: expect.stringMatching(/^mru_live_/), expires_in: 900, workspace_id: workspaceId, environment: "live", role: "owner" });
      const workspace = await t.call({ method: "GET", url: "/v1/workspace", key: res.json().token });
      expect(workspace.json()).toMatchObject({ id: workspaceId, environment: "live" });
      t.clock.advance(15 * 60 * 1000);
      expect((await t.call({ method: "GET", url: "/v1/workspace", key: res.json().token })).statusCode).toBe(401);
    });

    it("gives no token for a workspace the user is not a member of", async () => {
      const { session } = await signedUp(t, { email: "ada@acme.example" });
      const res = await session.post("/auth/token", { workspace_id: t.workspace.id, environment: "sandbox" });
      expect(res.statusCode).toBe(404);
    });

    it("never accepts the session cookie on /v1", async () => {
      const { session } = await signedUp(t, { email: "ada@acme.example" });
      const res = await session.request({ method: "GET", url: "/v1/workspace" });
      expect(res.statusCode).toBe(401);
    });

    it("revokes the session's tokens on sign-out", async () => {
      const { session, workspaceId } = await signedUp(t, { email: "ada@acme.example" });
      const token = await session.token(workspaceId);
      expect((await session.post("/auth/sign-out")).statusCode).toBe(204);
      expect((await t.call({ method: "GET", url: "/v1/workspace", key: token })).statusCode).toBe(401);
      expect((await session.post("/auth/token", { workspace_id: workspaceId, environment: "sandbox" })).json().code).toBe("not_signed_in");
    });

    it("refuses a token exchanged by a request that resolved its session before sign-out", async () => {
      const { session, workspaceId } = await signedUp(t, { email: "ada@acme.example" });
      const sessions = t.runtime.services.sessions;
      // The exchange has resolved its session; sign-out completes; then the exchange stores its token.
      const active = (await sessions.resolve(session.cookie("__Host-mailroom_session")))!;
      expect((await session.post("/auth/sign-out")).statusCode).toBe(204);
      const late = await sessions.exchange(active, workspaceId, "sandbox");
      expect((await t.call({ method: "GET", url: "/v1/workspace", key: late.token })).statusCode).toBe(401);
    });

    it("refuses a token once its session has expired", async () => {
      const { session, workspaceId } = await signedUp(t, { email: "ada@acme.example" });
      const token = await session.token(workspaceId);
      expect((await t.call({ method: "GET", url: "/v1/workspace", key: token })).statusCode).toBe(200);
      await t.runtime.db.knex("sessions").update({ expires_at: t.clock.now() });
      expect((await t.call({ method: "GET", url: "/v1/workspace", key: token })).statusCode).toBe(401);
    });

    it("keeps a token working past the session's first idle expiry: the exchange renewed the session", async () => {
      const { session, workspaceId } = await signedUp(t, { email: "ada@acme.example" });
      t.clock.advance(7 * 24 * 3600 * 1000 - 10 * 60 * 1000);
      const token = await session.token(workspaceId);
      t.clock.advance(11 * 60 * 1000);
      expect((await t.call({ method: "GET", url: "/v1/workspace", key: token })).statusCode).toBe(200);
    });

    it("answers 429 with Retry-After past 60 exchanges a minute for one session, not for the user's other sessions", async () => {
      const { session, workspaceId } = await signedUp(t, { email: "ada@acme.example" });
      for (let i = 0; i < 60; i++) expect((await session.post("/auth/token", { workspace_id: workspaceId, environment: "sandbox" })).statusCode).toBe(200);
      const refused = await session.post("/auth/token", { workspace_id: workspaceId, environment: "sandbox" });
      expect(refused.statusCode).toBe(429);
      expect(refused.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(refused.json().code).toBe("too_many_token_exchanges");
      expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
      expect(Number(refused.headers["retry-after"])).toBeLessThanOrEqual(60);
      const other = new DashboardSession(t);
      await other.signIn("ada@acme.example");
      await other.token(workspaceId);
      t.clock.advance(60 * 1000);
      await session.token(workspaceId);
    });
  });

  describe("change password", () => {
    it("needs the current password, then signs out every other session", async () => {
      const { session, workspaceId } = await signedUp(t, { email: "ada@acme.example" });
      const other = new DashboardSession(t);
      await other.signIn("ada@acme.example");
      const otherToken = await other.token(workspaceId);
      expect((await session.post("/auth/password", { current_password: "wrong password!", new_password: "a brand new password" })).statusCode).toBe(403);
      expect((await session.post("/auth/password", { current_password: PASSWORD, new_password: "a brand new password" })).statusCode).toBe(200);
      expect((await t.call({ method: "GET", url: "/v1/workspace", key: otherToken })).statusCode).toBe(401);
      expect((await other.load()).signed_in).toBe(false);
      expect((await session.load()).signed_in).toBe(true);
      expect((await new DashboardSession(t).signIn("ada@acme.example", "a brand new password")).statusCode).toBe(200);
    });

    it("throttles wrong current passwords like sign-ins: after 5, even the right one answers 429 for 15 minutes", async () => {
      const { session } = await signedUp(t, { email: "ada@acme.example" });
      for (let i = 0; i < 5; i++) expect((await session.post("/auth/password", { current_password: "wrong password!", new_password: "a brand new password" })).statusCode).toBe(403);
      const blocked = await session.post("/auth/password", { current_password: PASSWORD, new_password: "a brand new password" });
      expect(blocked.statusCode).toBe(429);
      expect(blocked.json().code).toBe("too_many_attempts");
      t.clock.advance(15 * 60 * 1000);
      expect((await session.post("/auth/password", { current_password: PASSWORD, new_password: "a brand new password" })).statusCode).toBe(200);
    });

    it("replaces the session: the old cookie and its tokens are signed out, the new cookie and CSRF token work", async () => {
      const { session, workspaceId } = await signedUp(t, { email: "ada@acme.example" });
      const oldCookie = session.cookie("__Host-mailroom_session")!;
      const oldCsrf = session.csrf;
      const oldToken = await session.token(workspaceId);
      const res = await session.post("/auth/password", { current_password: PASSWORD, new_password: "a brand new password" });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ signed_in: true, user: { email: "ada@acme.example" }, csrf_token: expect.any(String) });
      expect(res.json().csrf_token).not.toBe(oldCsrf);
      expect(session.cookie("__Host-mailroom_session")).not.toBe(oldCookie);
      expect((await t.call({ method: "GET", url: "/v1/workspace", key: oldToken })).statusCode).toBe(401);
      const stale = await t.app.inject({ method: "GET", url: "/auth/session", headers: { cookie: `__Host-mailroom_session=${oldCookie}` } });
      expect(stale.json().signed_in).toBe(false);
      // The page goes on with the answer's CSRF token.
      session.csrf = res.json().csrf_token;
      const token = await session.token(workspaceId);
      expect((await t.call({ method: "GET", url: "/v1/workspace", key: token })).statusCode).toBe(200);
      expect((await session.load()).signed_in).toBe(true);
    });

    it("refuses a sign-in that checked the old password while the password changed", async () => {
      const { session } = await signedUp(t, { email: "ada@acme.example" });
      const thief = new DashboardSession(t);
      await thief.load();
      // The thief's sign-in has read the user (with the old hash); the change completes; then it checks and signs in.
      const users = t.runtime.repositories.users;
      const findByEmail = users.findByEmail.bind(users);
      let changed: number | undefined;
      users.findByEmail = async (...args) => {
        const user = await findByEmail(...args);
        users.findByEmail = findByEmail;
        changed = (await session.post("/auth/password", { current_password: PASSWORD, new_password: "a brand new password" })).statusCode;
        return user;
      };
      const late = await thief.signIn("ada@acme.example");
      expect(changed).toBe(200);
      expect(late.statusCode).toBe(401);
      expect((await thief.load()).signed_in).toBe(false);
    });

    it("answers 409 password_changed to the second of two changes that checked the same password", async () => {
      const { session } = await signedUp(t, { email: "ada@acme.example" });
      const other = new DashboardSession(t);
      await other.signIn("ada@acme.example");
      // This change has checked the current password; the other one then completes; then this one goes on.
      const counters = t.runtime.repositories.rateLimits;
      const reset = counters.reset.bind(counters);
      let otherChange: number | undefined;
      counters.reset = async (...args) => {
        counters.reset = reset;
        otherChange = (await other.post("/auth/password", { current_password: PASSWORD, new_password: "the other new password" })).statusCode;
        return reset(...args);
      };
      const late = await session.post("/auth/password", { current_password: PASSWORD, new_password: "a brand new password" });
      expect(otherChange).toBe(200);
      expect(late.statusCode).toBe(409);
      expect(late.json()).toMatchObject({ code: "password_changed", status: 409 });
      // The first change stands, and its caller stays signed in.
      expect((await other.load()).signed_in).toBe(true);
      expect((await new DashboardSession(t).signIn("ada@acme.example", "the other new password")).statusCode).toBe(200);
      expect((await new DashboardSession(t).signIn("ada@acme.example", "a brand new password")).statusCode).toBe(401);
    });

    it("refuses a token that another session exchanged while the password changed", async () => {
      const { session, workspaceId } = await signedUp(t, { email: "ada@acme.example" });
      const thief = new DashboardSession(t);
      await thief.signIn("ada@acme.example");
      const sessions = t.runtime.services.sessions;
      const active = (await sessions.resolve(thief.cookie("__Host-mailroom_session")))!;
      expect((await session.post("/auth/password", { current_password: PASSWORD, new_password: "a brand new password" })).statusCode).toBe(200);
      const late = await sessions.exchange(active, workspaceId, "live");
      expect((await t.call({ method: "GET", url: "/v1/workspace", key: late.token })).statusCode).toBe(401);
      t.clock.advance(14 * 60 * 1000);
      expect((await t.call({ method: "GET", url: "/v1/workspace", key: late.token })).statusCode).toBe(401);
    });
  });
});
