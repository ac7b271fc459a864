import { afterEach, beforeEach, describe, expect, it } from "vitest";
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

    it.each([["ada@"], ["not an address"], ["Ada <ada@example.com>"], ["ada@localhost"], ["ada@example.com\r\nBcc: x@example.com"]])("refuses %j with 422 and stores nothing", async (email) => {
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
