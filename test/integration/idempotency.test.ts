import { randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { actorOf } from "../../src/domain/environments.js";
import { runMaintenance } from "../../src/maintenance.js";
import { IdempotencyService } from "../../src/services/idempotency.js";
import { ContractChecker } from "../helpers/contract.js";
import { databases } from "../helpers/databases.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

const HOUR = 3600 * 1000;

describe.each(databases)("Idempotency-Key ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(database);
  });
  afterEach(async () => t.close());

  const send = (body: Record<string, unknown>, key: string | null, apiKey?: string) =>
    t.call({ method: "POST", url: "/v1/messages", payload: body, ...(key === null ? {} : { headers: { "idempotency-key": key } }), ...(apiKey ? { key: apiKey } : {}) });

  const messagesWithKey = async (key: string) => Number(((await t.runtime.db.knex("messages").where({ idempotency_key: key }).count({ n: "*" }).first()) as { n: number | string }).n);
  const count = async (table: string) => Number(((await t.runtime.db.knex(table).count({ n: "*" }).first()) as { n: number | string }).n);
  const storedAnswer = async (key: string) => (await t.runtime.db.knex("idempotency_keys").where({ idempotency_key: key }).first("state", "response")) as { state: string; response: string | null };

  describe("createMessage", () => {
    it("replays the first response byte for byte when the same Idempotency-Key is sent again", async () => {
      const first = await send(aMessage(), "order-1234");
      expect(first.statusCode).toBe(202);
      expect(first.headers["idempotent-replayed"]).toBeUndefined();
      expect(first.json().idempotency_key).toBe("order-1234");

      // Time passes and the message moves on; the replay is still the original answer.
      t.clock.advance(60_000);
      await t.drain();
      const again = await send(aMessage(), "order-1234");
      expect(again.statusCode).toBe(202);
      expect(again.headers["idempotent-replayed"]).toBe("true");
      expect(again.headers.location).toBe(first.headers.location);
      expect(again.headers["content-type"]).toBe(first.headers["content-type"]);
      expect(again.payload).toBe(first.payload);
      expect(again.headers["request-id"]).not.toBe(first.headers["request-id"]);
      expect(await messagesWithKey("order-1234")).toBe(1);
      expect(await count("messages")).toBe(1);
    });

    it("treats a body with its fields in another order as the same request", async () => {
      const first = await send({ to: "ada@example.com", from: "hello@acme.example", subject: "Hi", html: "<p>Hi</p>", metadata: { a: "1", b: "2" } }, "same-thing");
      const again = await send({ metadata: { b: "2", a: "1" }, html: "<p>Hi</p>", subject: "Hi", from: "hello@acme.example", to: "ada@example.com" }, "same-thing");
      expect(again.statusCode).toBe(202);
      expect(again.headers["idempotent-replayed"]).toBe("true");
      expect(again.payload).toBe(first.payload);
    });

    it("refuses the same key with a different body with 422 idempotency_key_reused", async () => {
      const first = await send(aMessage(), "order-1234");
      expect(first.statusCode).toBe(202);
      const changed = await send(aMessage({ subject: "Something else" }), "order-1234");
      expect(changed.statusCode).toBe(422);
      expect(changed.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(changed.json()).toMatchObject({ status: 422, code: "idempotency_key_reused" });
      expect(await count("messages")).toBe(1);
      expect(await count("jobs")).toBe(1);
    });

    it("refuses the same key and body from another API key of the workspace with 422 idempotency_key_reused, and replays to the key that sent it, whichever of its secrets", async () => {
      const made = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Second", permission: "sending_access" } });
      const second = made.json() as { id: string; secret: string };
      const first = await send(aMessage(), "order-77");
      expect(first.statusCode).toBe(202);

      const other = await send(aMessage(), "order-77", second.secret);
      expect(other.statusCode, other.body).toBe(422);
      expect(other.json()).toMatchObject({ code: "idempotency_key_reused", detail: expect.stringContaining("another API key or member") });
      expect(other.body).not.toContain(first.json().id);
      expect(await messagesWithKey("order-77")).toBe(1);

      // The same key with a rotated secret is the same caller.
      const sentBySecond = await send(aMessage({ subject: "Second's" }), "second-1", second.secret);
      const rotated = await t.call({ method: "POST", url: `/v1/api-keys/${second.id}/rotate`, payload: { overlap_seconds: 0 } });
      const again = await send(aMessage({ subject: "Second's" }), "second-1", rotated.json().secret);
      expect(again.headers["idempotent-replayed"]).toBe("true");
      expect(again.payload).toBe(sentBySecond.payload);
    });

    it("lets no other caller take over a crashed request's key, and its own retry still does", async () => {
      const body = aMessage();
      const principal = await t.runtime.services.auth.authenticate(t.workspace.sandboxKey, "127.0.0.1");
      const scope = { workspaceId: principal.workspaceId, environment: principal.environment };
      await t.runtime.services.idempotency.claim(scope, "crash-6", IdempotencyService.fingerprint("createMessage", "/v1/messages", body), actorOf(principal.credential));
      const stored = await t.runtime.services.messages.create(principal, body, "crash-6");
      t.clock.advance(t.runtime.config.idempotency.lockSeconds * 1000);
      const second = (await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Second", permission: "sending_access" } })).json() as { secret: string };

      const other = await send(body, "crash-6", second.secret);
      expect(other.statusCode, other.body).toBe(422);
      expect(other.json()).toMatchObject({ code: "idempotency_key_reused" });
      const retry = await send(body, "crash-6");
      expect(retry.statusCode, retry.body).toBe(202);
      expect(retry.json().id).toBe(stored.id);
    });

    it("refuses the same key on a different operation with 422 idempotency_key_reused", async () => {
      const first = await send(aMessage(), "shared-key");
      const id = first.json().id as string;
      const cancel = await t.call({ method: "POST", url: `/v1/messages/${id}/cancel`, headers: { "idempotency-key": "shared-key" } });
      expect(cancel.statusCode).toBe(422);
      expect(cancel.json()).toMatchObject({ code: "idempotency_key_reused" });
      expect((await t.call({ method: "GET", url: `/v1/messages/${id}` })).json().status).toBe("queued");

      const apiKey = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "ci" }, headers: { "idempotency-key": "shared-key" } });
      expect(apiKey.statusCode).toBe(422);
      expect(apiKey.json()).toMatchObject({ code: "idempotency_key_reused" });
    });

    it("keeps keys apart per environment and per workspace", async () => {
      await t.verifiedDomain("acme.example");
      const sandbox = await send(aMessage(), "welcome-1");
      const live = await send(aMessage(), "welcome-1", t.workspace.liveKey);
      const other = await send(aMessage(), "welcome-1", t.other.sandboxKey);
      for (const res of [sandbox, live, other]) {
        expect(res.statusCode).toBe(202);
        expect(res.headers["idempotent-replayed"]).toBeUndefined();
      }
      expect(new Set([sandbox.json().id, live.json().id, other.json().id]).size).toBe(3);
      expect(await messagesWithKey("welcome-1")).toBe(3);
      // A different body is fine elsewhere, too.
      const otherBody = await send(aMessage({ subject: "Different" }), "welcome-2", t.other.sandboxKey);
      const mine = await send(aMessage(), "welcome-2");
      expect([otherBody.statusCode, mine.statusCode]).toEqual([202, 202]);
    });

    it("reads a quoted structured-field string \"abc\" as the same key as bare abc", async () => {
      const quoted = await send(aMessage(), '"abc"');
      expect(quoted.statusCode).toBe(202);
      expect(quoted.json().idempotency_key).toBe("abc");
      const bare = await send(aMessage(), "abc");
      expect(bare.statusCode).toBe(202);
      expect(bare.headers["idempotent-replayed"]).toBe("true");
      expect(bare.payload).toBe(quoted.payload);
      expect(await count("messages")).toBe(1);
    });

    it("reads escapes in a quoted key as RFC 8941 does, and refuses a quoted key with a bare quote or backslash inside", async () => {
      const escaped = await send(aMessage(), String.raw`"say \"hi\" \\ bye"`);
      expect(escaped.statusCode, escaped.body).toBe(202);
      expect(escaped.json().idempotency_key).toBe(String.raw`say "hi" \ bye`);
      for (const key of ['"a"b"', String.raw`"a\b"`, String.raw`"a\"`]) {
        const res = await send(aMessage(), key);
        expect(res.statusCode, key).toBe(422);
        expect(res.json()).toMatchObject({ code: "validation_failed" });
      }
      expect(await count("messages")).toBe(1);
    });

    it("refuses an over-long or non-printable key with 422 validation_failed, storing nothing", async () => {
      for (const key of ["k".repeat(256), "k".repeat(300), `"${"k".repeat(256)}"`, '""', "tab\tkey", "caf\u00e9"]) {
        const res = await send(aMessage(), key);
        expect(res.statusCode, key).toBe(422);
        expect(res.json()).toMatchObject({ code: "validation_failed" });
        for (const error of res.json().errors) expect(error).toMatchObject({ location: "header", pointer: expect.stringMatching(/idempotency-key/i) });
      }
      expect(await count("messages")).toBe(0);
      expect(await count("idempotency_keys")).toBe(0);
      // 255 characters is the longest allowed.
      expect((await send(aMessage(), "k".repeat(255))).statusCode).toBe(202);
    });

    it("creates exactly one message when 20 requests race with one key, ten times over", async () => {
      for (let round = 0; round < 10; round++) {
        const key = `race-${round}`;
        // Round 0 starts all 20 at once; later rounds spread the starts over a few milliseconds so
        // that some arrive while the first runs and some after it finished.
        const responses = await Promise.all(
          Array.from({ length: 20 }, async (_, i) => {
            await new Promise((resolve) => setTimeout(resolve, (i * round) % 17));
            return send(aMessage({ subject: `Race ${round}` }), key);
          }),
        );
        const created = responses.filter((r) => r.statusCode === 202);
        expect(created.length, responses.map((r) => `${r.statusCode} ${r.body.slice(0, 80)}`).join("\n")).toBeGreaterThanOrEqual(1);
        const ids = new Set(created.map((r) => r.json().id));
        expect(ids.size).toBe(1);
        expect(created.filter((r) => r.headers["idempotent-replayed"] === undefined)).toHaveLength(1);
        const original = created.find((r) => r.headers["idempotent-replayed"] === undefined)!;
        for (const res of responses) {
          if (res.statusCode === 202) {
            expect(res.payload).toBe(original.payload);
          } else {
            expect(res.statusCode, res.body).toBe(409);
            expect(res.json()).toMatchObject({ code: "idempotency_key_in_use" });
            expect(res.headers["retry-after"]).toBeDefined();
          }
        }
        expect(await messagesWithKey(key)).toBe(1);
      }
      expect(await count("messages")).toBe(10);
      expect(await count("jobs")).toBe(10);
    });

    it("forgets keys after the retention, so the key can be used again", async () => {
      const first = await send(aMessage(), "monthly-report");
      expect(first.statusCode).toBe(202);
      t.clock.advance(23 * HOUR);
      expect(await t.runtime.services.idempotency.prune()).toBe(0);
      expect((await send(aMessage({ subject: "Other" }), "monthly-report")).json()).toMatchObject({ code: "idempotency_key_reused" });

      t.clock.advance(2 * HOUR);
      expect(await t.runtime.services.idempotency.prune()).toBe(1);
      expect(await count("idempotency_keys")).toBe(0);

      const next = await send(aMessage({ subject: "Next month" }), "monthly-report");
      expect(next.statusCode, next.body).toBe(202);
      expect(next.headers["idempotent-replayed"]).toBeUndefined();
      expect(next.json()).toMatchObject({ subject: "Next month", idempotency_key: "monthly-report", status: "queued" });
      expect(next.json().id).not.toBe(first.json().id);
      expect(await count("messages")).toBe(2);
      await t.drain();
      expect((await t.call({ method: "GET", url: `/v1/messages/${next.json().id}` })).json().status).toBe("delivered");
    });

    it("prunes every expired key in one round, however many there are, and keeps the live ones", async () => {
      const now = t.clock.now();
      const row = (key: string, expires_at: number) => ({ workspace_id: "ws_other", environment: "sandbox", idempotency_key: key, fingerprint: "f".repeat(64), claim_token: "c".repeat(32), state: "done", response_status: 202, response: null, locked_until: now, created_at: now - 25 * HOUR, expires_at });
      const rows = [...Array.from({ length: 2500 }, (_, i) => row(`expired-${i}`, now - 1)), row("live", now + HOUR)];
      for (let i = 0; i < rows.length; i += 200) await t.runtime.db.knex("idempotency_keys").insert(rows.slice(i, i + 200));
      expect(await t.runtime.services.idempotency.prune()).toBe(2500);
      expect(await t.runtime.db.knex("idempotency_keys").pluck("idempotency_key")).toEqual(["live"]);
    });

    it("treats an expired key as new even before it is pruned", async () => {
      const first = await send(aMessage(), "expired-key");
      t.clock.advance(25 * HOUR);
      const next = await send(aMessage({ subject: "New" }), "expired-key");
      expect(next.statusCode, next.body).toBe(202);
      expect(next.json().id).not.toBe(first.json().id);
      expect(next.json().subject).toBe("New");
    });

    it("answers 409 while a crashed request's claim holds the key, then the retry returns the same message", async () => {
      const body = aMessage({ to: "grace@example.com" });
      const principal = await t.runtime.services.auth.authenticate(t.workspace.sandboxKey, "127.0.0.1");
      const scope = { workspaceId: principal.workspaceId, environment: principal.environment };
      // The crashed request claimed the key and stored its message, then died before answering.
      const claim = await t.runtime.services.idempotency.claim(scope, "crash-1", IdempotencyService.fingerprint("createMessage", "/v1/messages", body), actorOf(principal.credential));
      expect(claim.kind).toBe("proceed");
      const stored = await t.runtime.services.messages.create(principal, body, "crash-1");

      const during = await send(body, "crash-1");
      expect(during.statusCode).toBe(409);
      expect(during.json()).toMatchObject({ code: "idempotency_key_in_use" });
      expect(Number(during.headers["retry-after"])).toBeGreaterThanOrEqual(1);

      t.clock.advance(t.runtime.config.idempotency.lockSeconds * 1000 - 1);
      expect((await send(body, "crash-1")).statusCode).toBe(409);

      t.clock.advance(1);
      const retry = await send(body, "crash-1");
      expect(retry.statusCode, retry.body).toBe(202);
      expect(retry.json().id).toBe(stored.id);
      expect(retry.headers.location).toBe(`/v1/messages/${stored.id}`);
      expect(await messagesWithKey("crash-1")).toBe(1);
      expect(await count("jobs")).toBe(1);

      // The retry's answer is now the stored one.
      const replay = await send(body, "crash-1");
      expect(replay.headers["idempotent-replayed"]).toBe("true");
      expect(replay.payload).toBe(retry.payload);
    });

    it("tells a retry of a key in use how long the server's lock lasts, so that a client knows how long a crashed claim can hold it", async () => {
      await t.restart({ IDEMPOTENCY_LOCK_SECONDS: "7" });
      const body = aMessage();
      const principal = await t.runtime.services.auth.authenticate(t.workspace.sandboxKey, "127.0.0.1");
      await t.runtime.services.idempotency.claim({ workspaceId: principal.workspaceId, environment: principal.environment }, "locked-7", IdempotencyService.fingerprint("createMessage", "/v1/messages", body), actorOf(principal.credential));

      const during = await send(body, "locked-7");
      expect(during.statusCode).toBe(409);
      expect(during.headers["retry-after"]).toBe("1");
      expect(during.json()).toMatchObject({ code: "idempotency_key_in_use", lock_seconds: 7 });

      t.clock.advance(7000);
      expect((await send(body, "locked-7")).statusCode).toBe(202);
    });

    it("stores one message when two attempts of one request are accepted at the same moment", async () => {
      // A request still running when its claim's lock ran out, and its retry that took the key over.
      const principal = await t.runtime.services.auth.authenticate(t.workspace.sandboxKey, "127.0.0.1");
      const [a, b] = await Promise.all([t.runtime.services.messages.create(principal, aMessage(), "twice"), t.runtime.services.messages.create(principal, aMessage(), "twice")]);
      expect(a.id).toBe(b.id);
      expect(await messagesWithKey("twice")).toBe(1);
      expect(await count("jobs")).toBe(1);
    });

    // SQLite has one writer: its transactions cannot interleave like this.
    it.skipIf(database.name === "sqlite")("sees a key that another node claimed after its own transaction began", async () => {
      const knex = t.runtime.db.knex;
      const claims = t.runtime.repositories.idempotency.claimWriter;
      const now = t.clock.now();
      const item = (claimToken: string) => ({
        scope: { workspaceId: t.workspace.id, environment: "sandbox" as const },
        key: "two-nodes",
        fingerprint: "f".repeat(64),
        claimedBy: "key_node",
        claimToken,
        now,
        lockedUntil: now + 60_000,
        expiresAt: now + 24 * HOUR,
      });
      // A group-commit transaction that has already read something (e.g. a rate-limit counter).
      const mine = await knex.transaction();
      try {
        await mine("rate_limit_counters").count({ n: "*" });
        await knex.transaction((theirs) => claims.write(theirs, [item("theirs".padEnd(32, "0"))]));
        const [record] = await claims.write(mine, [item("mine".padEnd(32, "0"))]);
        expect(record).toMatchObject({ claim_token: "theirs".padEnd(32, "0"), state: "running" });
        await mine.commit();
      } catch (error) {
        await mine.rollback();
        throw error;
      }
    });

    it("answers 409 while a crashed request's claim holds the key, then runs the request when it had stored nothing", async () => {
      const body = aMessage();
      const principal = await t.runtime.services.auth.authenticate(t.workspace.sandboxKey, "127.0.0.1");
      await t.runtime.services.idempotency.claim({ workspaceId: principal.workspaceId, environment: principal.environment }, "crash-2", IdempotencyService.fingerprint("createMessage", "/v1/messages", body), actorOf(principal.credential));
      expect((await send(body, "crash-2")).statusCode).toBe(409);
      t.clock.advance(t.runtime.config.idempotency.lockSeconds * 1000);
      const retry = await send(body, "crash-2");
      expect(retry.statusCode).toBe(202);
      expect(await messagesWithKey("crash-2")).toBe(1);
    });

    it("answers a retry that takes over a crashed request's key with the message it stored, though the request would no longer pass its checks", async () => {
      const body = aMessage({ expires_at: new Date(t.clock.now() + 90_000).toISOString() });
      const principal = await t.runtime.services.auth.authenticate(t.workspace.sandboxKey, "127.0.0.1");
      const scope = { workspaceId: principal.workspaceId, environment: principal.environment };
      await t.runtime.services.idempotency.claim(scope, "crash-3", IdempotencyService.fingerprint("createMessage", "/v1/messages", body), actorOf(principal.credential));
      const stored = await t.runtime.services.messages.create(principal, body, "crash-3");
      // By the time the lock lets a retry in, the message's expires_at has passed: checked again,
      // it would be refused, though it was accepted and is being sent.
      t.clock.advance(91_000);
      const retry = await send(body, "crash-3");
      expect(retry.statusCode, retry.body).toBe(202);
      expect(retry.json().id).toBe(stored.id);
      expect(await messagesWithKey("crash-3")).toBe(1);
    });

    it("refuses a different request under a crashed request's key with 422 once the lock ran out, and lets the crashed request's own retry take it over", async () => {
      const body = aMessage({ subject: "Invoice 7" });
      const principal = await t.runtime.services.auth.authenticate(t.workspace.sandboxKey, "127.0.0.1");
      const scope = { workspaceId: principal.workspaceId, environment: principal.environment };
      await t.runtime.services.idempotency.claim(scope, "crash-4", IdempotencyService.fingerprint("createMessage", "/v1/messages", body), actorOf(principal.credential));
      const stored = await t.runtime.services.messages.create(principal, body, "crash-4");
      t.clock.advance(t.runtime.config.idempotency.lockSeconds * 1000);
      const other = await send(aMessage({ subject: "Invoice 8" }), "crash-4");
      expect(other.statusCode, other.body).toBe(422);
      expect(other.json()).toMatchObject({ code: "idempotency_key_reused" });
      const retry = await send(body, "crash-4");
      expect(retry.statusCode, retry.body).toBe(202);
      expect(retry.json()).toMatchObject({ id: stored.id, subject: "Invoice 7" });
      expect(await messagesWithKey("crash-4")).toBe(1);
    });

    it("answers a batch retry that takes over a crashed attempt's key with the messages it stored, and runs the rest", async () => {
      const due = new Date(t.clock.now() + 90_000).toISOString();
      const messages = [aMessage({ expires_at: due }), aMessage({ to: "grace@example.com" })];
      const principal = await t.runtime.services.auth.authenticate(t.workspace.sandboxKey, "127.0.0.1");
      const scope = { workspaceId: principal.workspaceId, environment: principal.environment };
      await t.runtime.services.idempotency.claim(scope, "crash-5", IdempotencyService.fingerprint("createMessageBatch", "/v1/messages/batch", { messages, validation: "permissive" }), actorOf(principal.credential));
      // The crashed attempt had stored the first message only.
      const [first] = await t.runtime.services.messages.createBatch(principal, messages.slice(0, 1), "crash-5");
      t.clock.advance(91_000);
      const retry = await t.call({ method: "POST", url: "/v1/messages/batch", payload: { messages }, headers: { "idempotency-key": "crash-5" } });
      expect(retry.statusCode, retry.body).toBe(200);
      const items = retry.json().data as Array<{ index: number; status: number; message: { id: string } | null }>;
      expect(items.map((item) => [item.index, item.status])).toEqual([[0, 202], [1, 202]]);
      expect(items[0]!.message!.id).toBe(first!.message!.id);
      expect(await count("messages")).toBe(2);
    });
  });

  describe("large answers", () => {
    it("replays byte for byte an answer whose html is 4 MiB of quotes, stored deflated", async () => {
      // Escaped once in the answer and again inside the stored JSON: 16 MiB before deflating.
      const body = aMessage({ html: `<p>${'"'.repeat(4 * 1024 * 1024)}</p>` });
      const first = await send(body, "quotes");
      expect(first.statusCode, first.body.slice(0, 500)).toBe(202);
      const again = await send(body, "quotes");
      expect(again.statusCode).toBe(202);
      expect(again.headers["idempotent-replayed"]).toBe("true");
      expect(again.payload === first.payload).toBe(true);
      expect((await storedAnswer("quotes")).response!.length).toBeLessThan(1024 * 1024);
    }, 60_000);

    it("keeps no answer too large to store, and lets a retry take its key over at once, answering the message stored", async () => {
      // Random text hardly deflates: this answer stays past STORED_ANSWER_MAX_BYTES (8 MiB).
      const body = aMessage({ html: randomBytes(6.9 * 1024 * 1024).toString("base64") });
      const first = await send(body, "incompressible");
      expect(first.statusCode, first.body.slice(0, 500)).toBe(202);
      expect(await storedAnswer("incompressible")).toEqual({ state: "unkept", response: null });

      const retry = await send(body, "incompressible");
      expect(retry.statusCode, retry.body.slice(0, 500)).toBe(202);
      expect(retry.headers["idempotent-replayed"]).toBeUndefined();
      expect(retry.json().id).toBe(first.json().id);
      expect(retry.headers.location).toBe(first.headers.location);
      expect(await messagesWithKey("incompressible")).toBe(1);
      expect(await count("jobs")).toBe(1);

      const other = await send(aMessage(), "incompressible");
      expect(other.statusCode).toBe(422);
      expect(other.json()).toMatchObject({ code: "idempotency_key_reused" });
    }, 60_000);

    it("replays a batch of 100 templated messages of 120 KB html each byte for byte", async () => {
      const row = `<tr>\n  <td class="content" style="padding: 12px 24px; font-family: Arial, sans-serif; color: #333333;" align="left" valign="top">\n    <a href="https://shop.example.com/p/12345?utm_source=mail&amp;utm_medium=email" style="color: #1a73e8;">Picked for {{ first_name }}</a> &mdash; only $19.99\n  </td>\n</tr>\n`;
      const html = `<table role="presentation" width="100%">\n${row.repeat(Math.ceil(120_000 / row.length))}</table>`;
      const template = { slug: "weekly", name: "Weekly", subject: "Picks for {{ first_name }}", html, variables: [{ name: "first_name", type: "string", required: true }], publish: true };
      expect((await t.call({ method: "POST", url: "/v1/templates", payload: template })).statusCode).toBe(201);
      const messages = Array.from({ length: 100 }, (_, i) => ({ ...aMessage({ subject: undefined, html: undefined }), template: { slug: "weekly", variables: { first_name: `Customer "${i}"` } } }));
      const batch = () => t.call({ method: "POST", url: "/v1/messages/batch", payload: { messages }, headers: { "idempotency-key": "weekly-picks" } });

      const first = await batch();
      expect(first.statusCode, first.body.slice(0, 500)).toBe(200);
      expect((first.json().data as Array<{ status: number }>).every((item) => item.status === 202)).toBe(true);
      expect(first.payload.length).toBeGreaterThan(12_000_000);
      const again = await batch();
      expect(again.statusCode).toBe(200);
      expect(again.headers["idempotent-replayed"]).toBe("true");
      expect(again.payload === first.payload).toBe(true);
      expect((await storedAnswer("weekly-picks")).response!.length).toBeLessThan(2 * 1024 * 1024);
      expect(await count("messages")).toBe(100);
    }, 60_000);
  });

  describe("validation failures", () => {
    it("keeps no answer for a request refused by validation, so the fixed request runs under the same key", async () => {
      const body = { to: "ada@example.com", subject: "Hi", html: "<p>Hi</p>" };
      const refused = await send(body, "no-sender-yet");
      expect(refused.statusCode).toBe(422);
      expect(refused.json()).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/from" }] });
      expect((await t.call({ method: "PATCH", url: "/v1/workspace", payload: { default_from: "Acme <hello@acme.example>" } })).statusCode).toBe(200);
      const accepted = await send(body, "no-sender-yet");
      expect(accepted.statusCode).toBe(202);
      expect(accepted.headers["idempotent-replayed"]).toBeUndefined();
    });
  });

  describe("cancelMessage", () => {
    it("replays a cancel sent again with the same key", async () => {
      const { id } = (await send(aMessage(), null)).json();
      const first = await t.call({ method: "POST", url: `/v1/messages/${id}/cancel`, headers: { "idempotency-key": "cancel-1" } });
      expect(first.statusCode).toBe(200);
      const again = await t.call({ method: "POST", url: `/v1/messages/${id}/cancel`, headers: { "idempotency-key": "cancel-1" } });
      expect(again.headers["idempotent-replayed"]).toBe("true");
      expect(again.payload).toBe(first.payload);
    });

    it("refuses the same key on another message's cancel", async () => {
      const a = (await send(aMessage(), null)).json().id;
      const b = (await send(aMessage(), null)).json().id;
      expect((await t.call({ method: "POST", url: `/v1/messages/${a}/cancel`, headers: { "idempotency-key": "cancel-x" } })).statusCode).toBe(200);
      const other = await t.call({ method: "POST", url: `/v1/messages/${b}/cancel`, headers: { "idempotency-key": "cancel-x" } });
      expect(other.statusCode).toBe(422);
      expect(other.json()).toMatchObject({ code: "idempotency_key_reused" });
      expect((await t.call({ method: "GET", url: `/v1/messages/${b}` })).json().status).toBe("queued");
    });
  });

  describe("with answers kept longer than the workspace's content retention", () => {
    // A 202 carries the message's html and text: kept for 30 days, it would outlive a retention
    // that removed them from the message.
    beforeEach(async () => {
      await t.close();
      t = await createTestApp(database, { IDEMPOTENCY_RETENTION_HOURS: String(30 * 24) });
    });
    const retain = async (days: number | null) => expect((await t.call({ method: "PATCH", url: "/v1/workspace", payload: { content_retention_days: days } })).statusCode).toBe(200);

    it("keeps an answer only as long as the content retention", async () => {
      await retain(2);
      const first = await send(aMessage(), "receipt-1");
      expect(first.json().html).not.toBeNull();
      await t.drain();
      t.clock.advance(47 * HOUR);
      expect((await send(aMessage(), "receipt-1")).headers["idempotent-replayed"]).toBe("true");

      t.clock.advance(2 * HOUR);
      expect(await t.runtime.services.idempotency.removeExpiredAnswers()).toBe(1);
      expect(await t.runtime.services.idempotency.prune()).toBe(0);
      expect(await storedAnswer("receipt-1")).toEqual({ state: "removed", response: null });
      expect((await t.runtime.services.retention.removeExpiredContent()).messages).toBe(1);
      // The retry is told where the message is; read there, it is as it is now: without its content.
      const later = await send(aMessage(), "receipt-1");
      expect(later.statusCode, later.body).toBe(409);
      expect(later.json()).toMatchObject({ code: "idempotency_answer_removed", original_status: 202, original_location: first.headers.location });
      const message = await t.call({ method: "GET", url: later.json().original_location });
      expect(message.json()).toMatchObject({ id: first.json().id, html: null, text: null });
      expect(message.json().content_removed_at).not.toBeNull();
    });

    it("shortens the answers stored before a retention is set, and keeps their keys", async () => {
      await send(aMessage(), "receipt-2");
      await retain(1);
      t.clock.advance(25 * HOUR);
      expect(await t.runtime.services.idempotency.removeExpiredAnswers()).toBe(1);
      expect(await t.runtime.services.idempotency.prune()).toBe(0);
      const retry = await send(aMessage(), "receipt-2");
      expect(retry.headers["idempotent-replayed"]).toBeUndefined();
      expect(retry.json()).toMatchObject({ code: "idempotency_answer_removed" });
      // Forgotten only when the key's own window ends.
      t.clock.advance(29 * 24 * HOUR);
      expect(await t.runtime.services.idempotency.prune()).toBe(1);
    });

    // The key outlives its answer: the retention removes the answer (it holds the content), not
    // the key, which keeps what it needs to recognise its request and caller for its whole window.
    const maintain = () => runMaintenance(t.runtime, { info() {}, warn() {}, error() {} });

    it("refuses a different request under a key whose answer the retention removed, for the key's whole window", async () => {
      await retain(2);
      const first = await send(aMessage(), "receipt-4");
      expect(first.statusCode).toBe(202);
      await t.drain();
      t.clock.advance(49 * HOUR);
      await maintain();
      const changed = await send(aMessage({ subject: "Another receipt" }), "receipt-4");
      expect(changed.statusCode, changed.body).toBe(422);
      expect(changed.json()).toMatchObject({ code: "idempotency_key_reused" });
      expect(changed.body).not.toContain(first.json().id);

      // Nor does another caller's copy of the same request get anything of it.
      const second = (await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Second", permission: "sending_access" } })).json() as { secret: string };
      const other = await send(aMessage(), "receipt-4", second.secret);
      expect(other.statusCode, other.body).toBe(422);
      expect(other.json()).toMatchObject({ code: "idempotency_key_reused" });
      expect(other.body).not.toContain(first.json().id);

      t.clock.advance(27 * 24 * HOUR);
      await maintain();
      expect((await send(aMessage({ subject: "Yet another" }), "receipt-4")).statusCode).toBe(422);
      expect(await messagesWithKey("receipt-4")).toBe(1);
    });

    it("answers a retry of the request whose answer the retention removed with 409 idempotency_answer_removed, naming what it created, and runs nothing again", async () => {
      await retain(2);
      const first = await send(aMessage(), "receipt-5");
      await t.drain();
      t.clock.advance(49 * HOUR);
      await maintain();
      expect(await storedAnswer("receipt-5")).toEqual({ state: "removed", response: null });
      const retry = await send(aMessage(), "receipt-5");
      expect(retry.statusCode, retry.body).toBe(409);
      expect(retry.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(retry.headers["idempotent-replayed"]).toBeUndefined();
      expect(retry.json()).toMatchObject({ code: "idempotency_answer_removed", original_status: 202, original_location: first.headers.location });
      expect(new ContractChecker().check("POST", "/v1/messages", 409, retry.headers["content-type"] as string, retry.payload)).toEqual([]);
      expect(retry.body).not.toContain("<p>");
      expect(await messagesWithKey("receipt-5")).toBe(1);
      expect(await count("messages")).toBe(1);
    });

    it("refuses a replay of an answer past the retention even before the round removes it", async () => {
      await retain(2);
      await send(aMessage(), "receipt-6");
      t.clock.advance(49 * HOUR);
      const retry = await send(aMessage(), "receipt-6");
      expect(retry.statusCode, retry.body).toBe(409);
      expect(retry.json()).toMatchObject({ code: "idempotency_answer_removed", original_status: 202 });
      expect((await send(aMessage({ subject: "Other" }), "receipt-6")).json()).toMatchObject({ code: "idempotency_key_reused" });
    });

    it("creates nothing twice when a retry comes after the retention removed a new API key's answer", async () => {
      await retain(1);
      const create = () => t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "ci", permission: "sending_access" }, headers: { "idempotency-key": "ci-key" } });
      const first = await create();
      expect(first.statusCode).toBe(201);
      const keys = await count("api_keys");
      t.clock.advance(25 * HOUR);
      await maintain();
      const retry = await create();
      expect(retry.statusCode, retry.body).toBe(409);
      expect(retry.json()).toMatchObject({ code: "idempotency_answer_removed", original_status: 201, original_location: first.headers.location });
      expect(retry.body).not.toContain(first.json().secret);
      expect(await count("api_keys")).toBe(keys);
    });

    it("keeps answers for the full setting without a retention", async () => {
      await send(aMessage(), "receipt-3");
      await retain(null);
      t.clock.advance(29 * 24 * HOUR);
      expect(await t.runtime.services.idempotency.prune()).toBe(0);
      expect((await send(aMessage(), "receipt-3")).headers["idempotent-replayed"]).toBe("true");
    });
  });
});
