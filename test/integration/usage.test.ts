import type { FastifyRequest } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { QuotaExceededError } from "../../src/domain/errors.js";
import { toProblem } from "../../src/http/problems.js";
import { UsageService } from "../../src/services/usage.js";
import { databases } from "../helpers/databases.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

const NOW = Date.parse("2026-11-21T10:00:00Z");

describe.each(databases)("Usage ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(database);
    t.clock.set(NOW);
  });
  afterEach(async () => t.close());

  /** What the accept path does for live mail: one upsert in the accepting transaction. */
  const count = (day: string, messages: number, recipients: number, workspaceId = t.workspace.id) =>
    t.runtime.repositories.transaction((trx) => t.runtime.repositories.usage.increment(trx, workspaceId, day, messages, recipients));
  const usage = async (query = "", key?: string) => {
    const res = await t.call({ method: "GET", url: `/v1/usage${query}`, ...(key ? { key } : {}) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as {
      from: string;
      to: string;
      totals: { messages: number; recipients: number };
      days: Array<{ date: string; messages: number; recipients: number }>;
      months: Array<{ month: string; messages: number; recipients: number }>;
      quota: { monthly_messages: number | null; used: number; remaining: number | null; resets_at: string };
    };
  };
  const setQuota = async (monthly_quota: number | null) => {
    const res = await t.call({ method: "PATCH", url: "/v1/workspace", payload: { monthly_quota }, key: t.workspace.liveKey });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  describe("getUsage", () => {
    it("covers this month so far by default, every day listed, zeros included", async () => {
      await count("2026-10-31", 7, 9);
      await count("2026-11-01", 3, 4);
      await count("2026-11-21", 5, 6);
      const body = await usage();
      expect(body).toMatchObject({ object: "usage", from: "2026-11-01", to: "2026-11-21", totals: { messages: 8, recipients: 10 } });
      expect(body.days).toHaveLength(21);
      expect(body.days[0]).toEqual({ date: "2026-11-01", messages: 3, recipients: 4 });
      expect(body.days[1]).toEqual({ date: "2026-11-02", messages: 0, recipients: 0 });
      expect(body.days[20]).toEqual({ date: "2026-11-21", messages: 5, recipients: 6 });
      expect(body.months).toEqual([{ month: "2026-11", messages: 8, recipients: 10 }]);
      expect(body.quota).toEqual({ monthly_messages: null, used: 8, remaining: null, resets_at: "2026-12-01T00:00:00.000Z" });
    });

    it("adds up increments of the same day", async () => {
      await count("2026-11-20", 1, 2);
      await Promise.all([count("2026-11-20", 2, 3), count("2026-11-20", 4, 5)]);
      expect((await usage("?from=2026-11-20&to=2026-11-20")).days).toEqual([{ date: "2026-11-20", messages: 7, recipients: 10 }]);
    });

    it("counts every month the range touches whole, and the days of the range only", async () => {
      await count("2026-10-01", 100, 100);
      await count("2026-10-30", 1, 1);
      await count("2026-11-02", 2, 2);
      await count("2026-11-30", 50, 50);
      await count("2026-12-01", 1000, 1000);
      const body = await usage("?from=2026-10-30&to=2026-11-02");
      expect(body.days.map((d) => d.date)).toEqual(["2026-10-30", "2026-10-31", "2026-11-01", "2026-11-02"]);
      expect(body.totals).toEqual({ messages: 3, recipients: 3 });
      expect(body.months).toEqual([
        { month: "2026-10", messages: 101, recipients: 101 },
        { month: "2026-11", messages: 52, recipients: 52 },
      ]);
      // The quota is about the current month, whatever the range.
      expect(body.quota.used).toBe(52);
    });

    it("spans a year boundary", async () => {
      await count("2026-12-31", 1, 1);
      await count("2027-01-01", 2, 2);
      const body = await usage("?from=2026-12-31&to=2027-01-01");
      expect(body.months).toEqual([
        { month: "2026-12", messages: 1, recipients: 1 },
        { month: "2027-01", messages: 2, recipients: 2 },
      ]);
    });

    it("answers the same whichever environment's key asks, and only for its own workspace", async () => {
      await count("2026-11-21", 5, 5);
      await count("2026-11-21", 9, 9, t.other.id);
      const sandbox = await usage();
      expect(await usage("", t.workspace.liveKey)).toEqual(sandbox);
      expect(sandbox.totals.messages).toBe(5);
      expect((await usage("", t.other.liveKey)).totals.messages).toBe(9);
    });

    it("reports the quota left this month and when it resets", async () => {
      await count("2026-11-03", 30, 31);
      await count("2026-10-03", 500, 500);
      await setQuota(100);
      expect((await usage()).quota).toEqual({ monthly_messages: 100, used: 30, remaining: 70, resets_at: "2026-12-01T00:00:00.000Z" });
      await count("2026-11-21", 80, 80);
      expect((await usage()).quota).toMatchObject({ used: 110, remaining: 0 });
      // A new month starts from zero.
      t.clock.set(Date.parse("2026-12-01T00:00:00Z"));
      expect((await usage()).quota).toEqual({ monthly_messages: 100, used: 0, remaining: 100, resets_at: "2027-01-01T00:00:00.000Z" });
    });

    it("starts at the first day of `to`'s month when only `to` is given, an earlier month too", async () => {
      await count("2026-08-31", 9, 9);
      await count("2026-09-02", 2, 3);
      const body = await usage("?to=2026-09-15");
      expect(body).toMatchObject({ from: "2026-09-01", to: "2026-09-15", totals: { messages: 2, recipients: 3 } });
      expect(body.days).toHaveLength(15);
      expect(body.months).toEqual([{ month: "2026-09", messages: 2, recipients: 3 }]);
      expect((await usage("?to=2026-11-05")).from).toBe("2026-11-01");
    });

    it("ends today when only `from` is given, or 366 days after an older `from`", async () => {
      expect(await usage("?from=2026-10-20")).toMatchObject({ from: "2026-10-20", to: "2026-11-21" });
      const old = await usage("?from=2025-01-01");
      expect(old).toMatchObject({ from: "2025-01-01", to: "2026-01-02" });
      expect(old.days).toHaveLength(367);
    });

    it("reads a date of the first century as the date it is, not as 19xx", async () => {
      const body = await usage("?from=0001-01-01&to=0001-01-03");
      expect(body).toMatchObject({ from: "0001-01-01", to: "0001-01-03", totals: { messages: 0 } });
      expect(body.days.map((d: { date: string }) => d.date)).toEqual(["0001-01-01", "0001-01-02", "0001-01-03"]);
      expect(body.months.map((m: { month: string }) => m.month)).toEqual(["0001-01"]);
    });

    it("accepts a range of 366 days", async () => {
      const body = await usage("?from=2024-01-01&to=2025-01-01");
      expect(body.days).toHaveLength(367);
      expect(body.months).toHaveLength(13);
    });

    it.each([
      ["?from=2026-11-10&to=2026-11-09", "/from"],
      ["?from=2026-11-22", "/from"],
      ["?from=2024-01-01&to=2025-01-02", "/to"],
      ["?from=2026-02-30", "/from"],
      ["?to=2026-13-01", "/to"],
      ["?from=yesterday", "/from"],
      ["?from=2026-11-01T00:00:00Z", "/from"],
    ])("refuses %s with 422 naming the query parameter", async (query, pointer) => {
      const res = await t.call({ method: "GET", url: `/v1/usage${query}` });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ location: "query", pointer }] });
    });
  });

  describe("updateWorkspace: monthly_quota", () => {
    it("sets the quota and clears it with null", async () => {
      expect((await t.call({ method: "GET", url: "/v1/workspace" })).json().monthly_quota).toBeNull();
      expect((await setQuota(5000)).monthly_quota).toBe(5000);
      expect((await t.call({ method: "GET", url: "/v1/workspace" })).json().monthly_quota).toBe(5000);
      // Other fields leave it alone.
      const renamed = await t.call({ method: "PATCH", url: "/v1/workspace", payload: { name: "Acme Ltd" }, key: t.workspace.liveKey });
      expect(renamed.json()).toMatchObject({ name: "Acme Ltd", monthly_quota: 5000 });
      expect((await setQuota(null)).monthly_quota).toBeNull();
    });

    it.each([[0], [-5], [1.5], ["100"], [1_000_000_001]])("refuses %j with 422 and keeps the quota", async (monthly_quota) => {
      await setQuota(10);
      const res = await t.call({ method: "PATCH", url: "/v1/workspace", payload: { monthly_quota }, key: t.workspace.liveKey });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ location: "body", pointer: "/monthly_quota" }] });
      expect((await t.call({ method: "GET", url: "/v1/workspace" })).json().monthly_quota).toBe(10);
    });
  });

  describe("sending at the quota from many requests at once", () => {
    beforeEach(async () => t.verifiedDomain("acme.example"));
    const liveMessages = async () => Number(((await t.runtime.db.knex("messages").where({ workspace_id: t.workspace.id, environment: "live" }).count({ n: "*" }).first()) as { n: number | string }).n);
    const batch = (size: number, validation?: "strict") =>
      t.call({ method: "POST", url: "/v1/messages/batch", payload: { messages: Array.from({ length: size }, () => aMessage()), ...(validation ? { validation } : {}) }, key: t.workspace.liveKey });

    it("accepts exactly the quota of concurrent sends", async () => {
      await setQuota(5);
      const answers = await Promise.all(Array.from({ length: 30 }, () => t.call({ method: "POST", url: "/v1/messages", payload: aMessage(), key: t.workspace.liveKey })));
      expect(answers.filter((a) => a.statusCode === 202)).toHaveLength(5);
      const refused = answers.filter((a) => a.statusCode !== 202);
      expect(refused).toHaveLength(25);
      for (const answer of refused) {
        expect(answer.statusCode, answer.body).toBe(429);
        expect(answer.json()).toMatchObject({ code: "monthly_quota_exceeded" });
        expect(Number(answer.headers["retry-after"])).toBe((Date.parse("2026-12-01T00:00:00Z") - NOW) / 1000);
      }
      expect((await usage("", t.workspace.liveKey)).quota).toMatchObject({ used: 5, remaining: 0 });
      expect(await liveMessages()).toBe(5);
    });

    it("accepts exactly the quota of concurrent batches' messages, and answers the others one by one", async () => {
      await setQuota(7);
      const answers = await Promise.all(Array.from({ length: 5 }, () => batch(5)));
      const items = answers.flatMap((a) => {
        expect(a.statusCode, a.body).toBe(200);
        return a.json().data as Array<{ status: number; error: { code: string } | null }>;
      });
      expect(items.filter((item) => item.status === 202)).toHaveLength(7);
      expect(items.filter((item) => item.status === 429 && item.error?.code === "monthly_quota_exceeded")).toHaveLength(18);
      expect((await usage("", t.workspace.liveKey)).quota).toMatchObject({ used: 7, remaining: 0 });
      expect(await liveMessages()).toBe(7);
    });

    it("accepts concurrent strict batches whole or refuses them whole", async () => {
      await setQuota(7);
      const answers = await Promise.all(Array.from({ length: 4 }, () => batch(3, "strict")));
      const accepted = answers.filter((a) => a.statusCode === 200);
      expect(accepted).toHaveLength(2);
      for (const answer of accepted) expect((answer.json().data as Array<{ status: number }>).map((item) => item.status)).toEqual([202, 202, 202]);
      for (const answer of answers.filter((a) => a.statusCode !== 200)) {
        expect(answer.statusCode, answer.body).toBe(429);
        expect(answer.json()).toMatchObject({ code: "monthly_quota_exceeded" });
      }
      expect((await usage("", t.workspace.liveKey)).quota).toMatchObject({ used: 6, remaining: 1 });
      expect(await liveMessages()).toBe(6);
    });
  });

  describe("sending at the quota under an Idempotency-Key", () => {
    const send = (idempotencyKey: string) =>
      t.call({ method: "POST", url: "/v1/messages", payload: aMessage(), key: t.workspace.liveKey, headers: { "idempotency-key": idempotencyKey } });
    const sendBatch = (idempotencyKey: string, size: number) =>
      t.call({ method: "POST", url: "/v1/messages/batch", payload: { messages: Array.from({ length: size }, () => aMessage()) }, key: t.workspace.liveKey, headers: { "idempotency-key": idempotencyKey } });
    /** What a crash between storing the messages and storing the answer leaves: the messages alone. */
    const loseStoredAnswers = () => t.runtime.db.knex("idempotency_keys").delete();
    beforeEach(async () => t.verifiedDomain("acme.example"));

    it("keeps no answer for a request the quota refused, so the same request goes through once the quota is raised", async () => {
      await setQuota(1);
      expect((await send("first")).statusCode).toBe(202);
      const refused = await send("second");
      expect(refused.statusCode).toBe(429);
      await setQuota(null);
      const again = await send("second");
      expect(again.statusCode, again.body).toBe(202);
      expect(again.headers["idempotent-replayed"]).toBeUndefined();
    });

    it("answers a retry of a message already accepted with that message, even at the quota (the first answer was lost)", async () => {
      await setQuota(1);
      const first = await send("only");
      await loseStoredAnswers();
      const retry = await send("only");
      expect(retry.statusCode, retry.body).toBe(202);
      expect(retry.json().id).toBe(first.json().id);
      expect((await usage("", t.workspace.liveKey)).quota.used).toBe(1);
    });

    it("does not count a retried batch's messages already accepted against the quota again", async () => {
      await setQuota(3);
      const first = (await sendBatch("nightly", 2)).json().data as Array<{ message: { id: string } }>;
      await loseStoredAnswers();
      const retry = (await sendBatch("nightly", 3)).json().data as Array<{ status: number; message: { id: string } | null }>;
      expect(retry.map((item) => item.status)).toEqual([202, 202, 202]);
      expect(retry.slice(0, 2).map((item) => item.message!.id)).toEqual(first.map((item) => item.message.id));
      expect((await usage("", t.workspace.liveKey)).quota.used).toBe(3);
    });
  });

  describe("UsageService.assertWithinQuota", () => {
    it("lets anything through without a quota, and says there is none", async () => {
      await count("2026-11-21", 1_000_000, 1_000_000);
      await expect(t.runtime.services.usage.assertWithinQuota(t.workspace.id, 1, NOW)).resolves.toBe(false);
    });

    it("allows up to the quota and refuses past it with 429 monthly_quota_exceeded until the next month", async () => {
      await setQuota(10);
      await count("2026-11-05", 8, 8);
      await count("2026-10-05", 100, 100); // last month does not count
      await expect(t.runtime.services.usage.assertWithinQuota(t.workspace.id, 2, NOW)).resolves.toBe(true);
      const error = await t.runtime.services.usage.assertWithinQuota(t.workspace.id, 3, NOW).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(QuotaExceededError);
      const secondsToDecember = (Date.parse("2026-12-01T00:00:00Z") - NOW) / 1000;
      expect((error as QuotaExceededError).extra.retryAfterSeconds).toBe(secondsToDecember);

      // The one error handler turns it into 429 with Retry-After.
      const { problem, retryAfter } = toProblem(error, { id: "req_test" } as FastifyRequest);
      expect(retryAfter).toBe(secondsToDecember);
      expect(problem).toMatchObject({ status: 429, code: "monthly_quota_exceeded", title: "Monthly quota exceeded", request_id: "req_test" });
      expect(problem.detail).toContain("10");
      expect(problem.detail).toContain("8 were accepted");
      expect(problem.detail).toContain("PATCH /v1/workspace");

      // Another workspace has its own quota; the next month starts afresh.
      await expect(t.runtime.services.usage.assertWithinQuota(t.other.id, 3, NOW)).resolves.toBe(false);
      await expect(t.runtime.services.usage.assertWithinQuota(t.workspace.id, 10, Date.parse("2026-12-01T00:00:00Z"))).resolves.toBe(true);
    });
  });
});

describe("UsageService.dayOf", () => {
  it("is the UTC day of an instant", () => {
    expect(UsageService.dayOf(Date.parse("2026-11-21T23:59:59.999Z"))).toBe("2026-11-21");
    expect(UsageService.dayOf(Date.parse("2026-11-22T00:00:00+01:00"))).toBe("2026-11-21");
    expect(UsageService.monthOf(Date.parse("2026-12-31T23:00:00Z"))).toBe("2026-12");
    expect(UsageService.nextMonthStart(Date.parse("2026-12-31T23:00:00Z"))).toBe(Date.parse("2027-01-01T00:00:00Z"));
  });
});
