import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { NewSuppression } from "../../src/db/repositories/suppressions.js";
import { databases } from "../helpers/databases.js";
import { createTestApp, type TestApp } from "../helpers/test-app.js";

describe.each(databases)("Suppressions ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(database);
  });
  afterEach(async () => t.close());

  const suppress = async (payload: Record<string, unknown>, key?: string) => {
    const res = await t.call({ method: "POST", url: "/v1/suppressions", payload, ...(key ? { key } : {}) });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; email: string; reason: string; [field: string]: unknown };
  };
  const emails = async (query = "", key?: string) => {
    const res = await t.call({ method: "GET", url: `/v1/suppressions?limit=100${query}`, ...(key ? { key } : {}) });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data as Array<{ email: string }>).map((s) => s.email);
  };

  describe("createSuppressionBatch", () => {
    type Item = { index: number; status: number; suppression: { id: string; email: string; reason: string; detail: string | null } | null; error: { code: string; errors: Array<{ pointer: string; message: string }> } | null };
    const batch = async (suppressions: unknown[], options: { key?: string; headers?: Record<string, string> } = {}) => {
      const res = await t.call({ method: "POST", url: "/v1/suppressions/batch", payload: { suppressions }, ...options });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().object).toBe("batch");
      return res.json().data as Item[];
    };

    it("adds every new address, answers each item in order, and stores them", async () => {
      const data = await batch([{ email: "ada@example.com" }, { email: "Grace@Example.com", reason: "unsubscribe", detail: "Imported" }]);
      expect(data.map((item) => [item.index, item.status, item.suppression?.email, item.suppression?.reason, item.error])).toEqual([
        [0, 201, "ada@example.com", "manual", null],
        [1, 201, "grace@example.com", "unsubscribe", null],
      ]);
      expect(data[1]!.suppression).toMatchObject({ id: expect.stringMatching(/^sup_/), detail: "Imported" });
      expect((await emails()).sort()).toEqual(["ada@example.com", "grace@example.com"]);
      const listed = await t.call({ method: "GET", url: `/v1/suppressions/${data[0]!.suppression!.id}` });
      expect(listed.json()).toEqual(data[0]!.suppression);
    });

    it("answers 200 with the existing suppression for an address already suppressed, or earlier in the batch", async () => {
      const bounced = await suppress({ email: "ada@example.com", reason: "complaint" });
      const data = await batch([{ email: "ADA@example.com" }, { email: "grace@example.com" }, { email: "grace@EXAMPLE.com", reason: "unsubscribe" }]);
      expect(data.map((item) => item.status)).toEqual([200, 201, 200]);
      expect(data[0]!.suppression).toEqual(bounced);
      expect(data[2]!.suppression).toEqual(data[1]!.suppression);
      expect((await emails()).sort()).toEqual(["ada@example.com", "grace@example.com"]);
    });

    it("answers a bad item with its own 422 problem, pointers relative to it, and stores the others", async () => {
      const data = await batch([{ email: "not-an-address" }, { email: "ada@example.com" }, { email: "grace@example.com", reason: "hard_bounce" }, { mail: "x@example.com" }, { email: "ada@" + "x".repeat(400) + ".example" }]);
      expect(data.map((item) => item.status)).toEqual([422, 201, 422, 422, 422]);
      expect(data[0]!.error).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/email", message: expect.stringContaining("not a valid email address") }] });
      expect(data[2]!.error!.errors[0]!.pointer).toBe("/reason");
      expect(data[3]!.error!.errors.map((e) => e.pointer)).toEqual(expect.arrayContaining(["/email"]));
      expect(data[4]!.error!.errors[0]!.pointer).toBe("/email");
      expect(data.filter((item) => item.status === 422).every((item) => item.suppression === null)).toBe(true);
      expect(await emails()).toEqual(["ada@example.com"]);
    });

    it("takes up to 1,000 addresses in one call, and refuses a malformed batch as a whole, storing nothing", async () => {
      const many = Array.from({ length: 1000 }, (_, i) => ({ email: `user${i}@example.com` }));
      expect((await batch(many)).every((item) => item.status === 201)).toBe(true);
      expect(Number(((await t.runtime.db.knex("suppressions").count({ n: "*" }).first()) as { n: number | string }).n)).toBe(1000);
      for (const payload of [{ suppressions: [...many, { email: "one-more@example.com" }] }, { suppressions: [] }, {}, { suppressions: {} }]) {
        const res = await t.call({ method: "POST", url: "/v1/suppressions/batch", payload });
        expect(res.statusCode, JSON.stringify(payload).slice(0, 80)).toBe(422);
        expect(res.json().code).toBe("validation_failed");
      }
      expect(Number(((await t.runtime.db.knex("suppressions").count({ n: "*" }).first()) as { n: number | string }).n)).toBe(1000);
    });

    it("two concurrent batches of the same addresses in opposite orders both succeed", async () => {
      // Each batch inserts its new addresses in one transaction: taken in opposite orders, their
      // row locks would deadlock on MariaDB, and one batch would fail with 503.
      for (let round = 0; round < 5; round++) {
        const items = Array.from({ length: 300 }, (_, i) => ({ email: `r${round}u${i}@example.com` }));
        const [forwards, backwards] = await Promise.all([batch(items), batch([...items].reverse())]);
        const created = [...forwards!, ...backwards!].filter((item) => item.status === 201).map((item) => item.suppression!.email);
        expect(created.sort()).toEqual(items.map((item) => item.email).sort());
      }
    });

    it("replays the same answer for a retry with the same Idempotency-Key", async () => {
      const call = () => t.call({ method: "POST", url: "/v1/suppressions/batch", payload: { suppressions: [{ email: "ada@example.com" }] }, headers: { "idempotency-key": "import-1" } });
      const first = await call();
      const again = await call();
      expect(again.headers["idempotent-replayed"]).toBe("true");
      expect(again.body).toBe(first.body);
      expect(first.json().data[0].status).toBe(201);
    });

    it("adds to the caller's environment only: the other environment and workspace keep their lists", async () => {
      await batch([{ email: "ada@example.com" }], { key: t.workspace.liveKey });
      expect(await emails()).toEqual([]);
      expect(await emails("", t.workspace.liveKey)).toEqual(["ada@example.com"]);
      expect(await emails("", t.other.liveKey)).toEqual([]);
      const theirs = await batch([{ email: "ada@example.com" }], { key: t.other.liveKey });
      expect(theirs[0]!.status).toBe(201);
    });
  });

  describe("createSuppression", () => {
    it("answers 201 with a Location and the suppression, reason manual by default", async () => {
      const res = await t.call({ method: "POST", url: "/v1/suppressions", payload: { email: "ada@example.com", detail: "Asked to stop receiving receipts" } });
      expect(res.statusCode).toBe(201);
      const suppression = res.json();
      expect(res.headers.location).toBe(`/v1/suppressions/${suppression.id}`);
      expect(suppression).toEqual({
        id: expect.stringMatching(/^sup_[0-9a-z]{26}$/),
        object: "suppression",
        environment: "sandbox",
        email: "ada@example.com",
        reason: "manual",
        message_id: null,
        detail: "Asked to stop receiving receipts",
        created_at: new Date(t.clock.now()).toISOString(),
      });
    });

    it("normalises the address: trimmed, lower-case, the domain in its ASCII form", async () => {
      expect((await suppress({ email: "  Ada.Lovelace@Example.COM " })).email).toBe("ada.lovelace@example.com");
      expect((await suppress({ email: "grace@Bücher.example" })).email).toBe("grace@xn--bcher-kva.example");
    });

    it("answers 200 with the existing suppression when the address is already suppressed, whatever its case", async () => {
      const first = await suppress({ email: "ada@example.com", reason: "unsubscribe" });
      t.clock.advance(60_000);
      const res = await t.call({ method: "POST", url: "/v1/suppressions", payload: { email: "ADA@example.com", reason: "manual", detail: "again" } });
      expect(res.statusCode).toBe(200);
      expect(res.headers.location).toBeUndefined();
      expect(res.json()).toEqual(first);
      expect(await emails()).toEqual(["ada@example.com"]);
    });

    it("answers one 201 and one 200 to two concurrent adds of the same address", async () => {
      const answers = await Promise.all(["ada@example.com", "ADA@example.com"].map((email) => t.call({ method: "POST", url: "/v1/suppressions", payload: { email } })));
      expect(answers.map((res) => res.statusCode).sort()).toEqual([200, 201]);
      expect(answers[0]!.json().id).toBe(answers[1]!.json().id);
      expect(await emails()).toEqual(["ada@example.com"]);
    });

    it("keeps the environments apart: a live suppression is its own", async () => {
      const sandbox = await suppress({ email: "ada@example.com" });
      const live = await suppress({ email: "ada@example.com" }, t.workspace.liveKey);
      expect(live.id).not.toBe(sandbox.id);
      expect(live.environment).toBe("live");
    });

    it.each([["ada@"], ["not an address"], ["Ada <ada@example.com>"], ["ada@localhost"], ["ada@example.com\r\nBcc: x@example.com"], ["ada@acme.example/x"], ["ada@acme.example?x"], ["ada@exa%6dple.com"]])("refuses %j with 422 and stores nothing", async (email) => {
      const res = await t.call({ method: "POST", url: "/v1/suppressions", payload: { email } });
      expect(res.statusCode).toBe(422);
      expect(res.headers["content-type"]).toContain("application/problem+json");
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ location: "body", pointer: "/email" }] });
      expect(await emails()).toEqual([]);
    });

    it("refuses hard_bounce as a reason (only Mailroom records those) and unknown fields", async () => {
      let res = await t.call({ method: "POST", url: "/v1/suppressions", payload: { email: "ada@example.com", reason: "hard_bounce" } });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/reason" }] });
      res = await t.call({ method: "POST", url: "/v1/suppressions", payload: { email: "ada@example.com", until: "2027-01-01" } });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ errors: [{ pointer: "/until" }] });
      expect(await emails()).toEqual([]);
    });

    it("refuses a sending_access key with 403", async () => {
      const key = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Sender", permission: "sending_access" } });
      const res = await t.call({ method: "POST", url: "/v1/suppressions", payload: { email: "ada@example.com" }, key: key.json().secret });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe("insufficient_permission");
    });
  });

  describe("listSuppressions", () => {
    it("pages through the environment's suppressions, newest first", async () => {
      const made: string[] = [];
      for (const name of ["a", "b", "c", "d", "e"]) {
        made.push((await suppress({ email: `${name}@example.com` })).id);
        t.clock.advance(1000);
      }
      const seen: string[] = [];
      let after: string | null = null;
      let pages = 0;
      do {
        const res = await t.call({ method: "GET", url: `/v1/suppressions?limit=2${after ? `&after=${after}` : ""}` });
        expect(res.statusCode).toBe(200);
        const page = res.json() as { data: Array<{ id: string }>; has_more: boolean; next_cursor: string | null };
        seen.push(...page.data.map((s) => s.id));
        expect(page.has_more).toBe(page.next_cursor !== null);
        after = page.next_cursor;
        pages++;
      } while (after !== null && pages < 10);
      expect(pages).toBe(3);
      expect(seen).toEqual([...made].reverse());
    });

    it("filters by reason and by address (case-insensitive)", async () => {
      await suppress({ email: "ada@example.com", reason: "unsubscribe" });
      await suppress({ email: "grace@example.com", reason: "complaint" });
      await suppress({ email: "linus@example.com" });
      expect(await emails("&reason=complaint")).toEqual(["grace@example.com"]);
      expect(await emails("&reason=hard_bounce")).toEqual([]);
      expect(await emails("&email=ADA@Example.com")).toEqual(["ada@example.com"]);
      expect(await emails("&email=nobody@example.com")).toEqual([]);
      expect(await emails("&email=ada@example.com&reason=manual")).toEqual([]);
    });

    it("refuses an unknown reason with 422", async () => {
      const res = await t.call({ method: "GET", url: "/v1/suppressions?reason=bored" });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ location: "query", pointer: "/reason" }] });
    });

    it("lists neither the other environment's nor another workspace's suppressions", async () => {
      await suppress({ email: "sandbox@example.com" });
      await suppress({ email: "live@example.com" }, t.workspace.liveKey);
      await suppress({ email: "other@example.com" }, t.other.sandboxKey);
      expect(await emails()).toEqual(["sandbox@example.com"]);
      expect(await emails("", t.workspace.liveKey)).toEqual(["live@example.com"]);
      expect(await emails("", t.other.sandboxKey)).toEqual(["other@example.com"]);
    });
  });

  describe("getSuppression", () => {
    it("answers the suppression", async () => {
      const made = await suppress({ email: "ada@example.com" });
      const res = await t.call({ method: "GET", url: `/v1/suppressions/${made.id}` });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(made);
    });

    it("answers 404 for another workspace's and for the other environment's suppression", async () => {
      const made = await suppress({ email: "ada@example.com" });
      for (const key of [t.other.sandboxKey, t.other.liveKey, t.workspace.liveKey]) {
        const res = await t.call({ method: "GET", url: `/v1/suppressions/${made.id}`, key });
        expect(res.statusCode).toBe(404);
        expect(res.json().code).toBe("not_found");
      }
    });
  });

  describe("deleteSuppression", () => {
    it("removes the address from the list", async () => {
      const made = await suppress({ email: "ada@example.com" });
      const res = await t.call({ method: "DELETE", url: `/v1/suppressions/${made.id}` });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ id: made.id, object: "suppression", deleted: true });
      expect((await t.call({ method: "GET", url: `/v1/suppressions/${made.id}` })).statusCode).toBe(404);
      expect((await t.call({ method: "DELETE", url: `/v1/suppressions/${made.id}` })).statusCode).toBe(404);
      expect(await emails()).toEqual([]);
      // The address can be suppressed again.
      expect((await suppress({ email: "ada@example.com" })).id).not.toBe(made.id);
    });

    it("answers 404 for another workspace's and for the other environment's suppression, and keeps it", async () => {
      const made = await suppress({ email: "ada@example.com" });
      for (const key of [t.other.sandboxKey, t.other.liveKey, t.workspace.liveKey]) {
        expect((await t.call({ method: "DELETE", url: `/v1/suppressions/${made.id}`, key })).statusCode).toBe(404);
      }
      expect(await emails()).toEqual(["ada@example.com"]);
    });
  });

  describe("SuppressionsRepository (delivery pipeline)", () => {
    const scope = () => ({ workspaceId: t.workspace.id, environment: "sandbox" as const });
    const bounce = (email: string, overrides: Partial<NewSuppression> = {}): NewSuppression => ({
      workspace_id: t.workspace.id,
      environment: "sandbox",
      email,
      reason: "hard_bounce",
      message_id: "msg_01jd3k8m2q5v7w9x1y3z5a7b9c",
      detail: "550 5.1.1 User unknown",
      created_at: t.clock.now(),
      ...overrides,
    });

    it("insertMissing adds new addresses and keeps an existing suppression of the same address", async () => {
      const manual = await suppress({ email: "ada@example.com", reason: "unsubscribe" });
      await t.runtime.repositories.transaction(async (trx) => {
        await t.runtime.repositories.suppressions.insertMissing(trx, [bounce("Ada@Example.com"), bounce("grace@example.com"), bounce("GRACE@example.com", { detail: "second" })]);
      });
      // A second worker reporting the same bounce changes nothing.
      await t.runtime.repositories.transaction(async (trx) => {
        await t.runtime.repositories.suppressions.insertMissing(trx, [bounce("grace@example.com", { detail: "third" })]);
      });
      const found = await t.runtime.repositories.suppressions.findByEmails(scope(), ["ADA@example.com", "grace@EXAMPLE.com", "linus@example.com"]);
      expect([...found.keys()].sort()).toEqual(["ada@example.com", "grace@example.com"]);
      expect(found.get("ada@example.com")).toMatchObject({ id: manual.id, reason: "unsubscribe" });
      expect(found.get("grace@example.com")).toMatchObject({ reason: "hard_bounce", detail: "550 5.1.1 User unknown", message_id: "msg_01jd3k8m2q5v7w9x1y3z5a7b9c" });
      expect(await emails("&reason=hard_bounce")).toEqual(["grace@example.com"]);
    });

    // SQLite runs one transaction at a time on its one connection: the race needs MySQL's concurrent ones.
    it.skipIf(database.name === "sqlite")("addMissing answers an address another transaction suppressed after its first read as existing (a snapshot read would not see it)", async () => {
      const { suppressions } = t.runtime.repositories;
      const find = suppressions.findByEmails.bind(suppressions);
      let raced = false;
      const spy = vi.spyOn(suppressions, "findByEmails").mockImplementation(async (...args) => {
        const found = await find(...args);
        // Between addMissing's first read (which fixes its snapshot) and its insert, another transaction commits the same address.
        if (!raced) {
          raced = true;
          await t.runtime.db.knex.transaction((other) => suppressions.insertMissing(other, [bounce("ada@example.com")]));
        }
        return found;
      });
      try {
        const { stored, added } = await suppressions.addMissing(scope(), [bounce("ada@example.com", { reason: "manual", detail: null }), bounce("grace@example.com", { reason: "manual", detail: null })]);
        expect(stored.get("ada@example.com")).toMatchObject({ reason: "hard_bounce" });
        expect([...added]).toEqual(["grace@example.com"]);
      } finally {
        spy.mockRestore();
      }
    });

    it("insertMissing writes nothing when its transaction rolls back", async () => {
      await expect(
        t.runtime.repositories.transaction(async (trx) => {
          await t.runtime.repositories.suppressions.insertMissing(trx, [bounce("ada@example.com")]);
          throw new Error("roll back");
        }),
      ).rejects.toThrow("roll back");
      expect(await emails()).toEqual([]);
    });

    it("findByEmails is scoped by workspace and environment", async () => {
      await suppress({ email: "ada@example.com" }, t.workspace.liveKey);
      await suppress({ email: "ada@example.com" }, t.other.sandboxKey);
      expect((await t.runtime.repositories.suppressions.findByEmails(scope(), ["ada@example.com"])).size).toBe(0);
      expect((await t.runtime.repositories.suppressions.findByEmails({ workspaceId: t.workspace.id, environment: "live" }, ["ada@example.com"])).size).toBe(1);
    });
  });
});
