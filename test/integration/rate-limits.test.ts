import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app.js";
import { createRuntime, type Runtime } from "../../src/runtime.js";
import { databases } from "../helpers/databases.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

const WINDOW_MS = 60_000;
const POLICY = '"default";q=3;w=60';

describe.each(databases)("rate limits ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(database, { RATE_LIMIT_REQUESTS: "3", RATE_LIMIT_WINDOW_SECONDS: "60" });
    // 15 s into a fixed window, so the seconds until it resets are known (45).
    t.clock.set((Math.floor(t.clock.now() / WINDOW_MS) + 1) * WINDOW_MS + 15_000);
  });
  afterEach(async () => t.close());

  const read = (key?: string) => t.call({ method: "GET", url: "/v1/workspace", ...(key ? { key } : {}) });
  const remaining = (res: LightMyRequestResponse) => /;r=(\d+);/.exec(String(res.headers.ratelimit))?.[1];
  const messageCount = async () => (await t.runtime.db.knex("messages").count({ n: "*" }).first())!.n;

  describe("every operation", () => {
    it("states the policy and what is left of it on every answer", async () => {
      const answers = [
        await read(),
        await t.call({ method: "GET", url: "/v1/api-keys/key_00000000000000000000000000" }), // a 404
        await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "" } }), // a 422
      ];
      expect(answers.map((res) => res.statusCode)).toEqual([200, 404, 422]);
      answers.forEach((res, i) => {
        expect(res.headers["ratelimit-policy"]).toBe(POLICY);
        expect(res.headers.ratelimit).toBe(`"default";r=${2 - i};t=45`);
      });
    });

    it("counts down the seconds until the window resets", async () => {
      t.clock.advance(20_500);
      expect((await read()).headers.ratelimit).toBe('"default";r=2;t=25');
    });

    it("answers the fourth request in a window with 429 rate_limited and Retry-After", async () => {
      for (let i = 0; i < 3; i++) expect((await read()).statusCode).toBe(200);
      const res = await read();
      expect(res.statusCode).toBe(429);
      expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(res.headers["retry-after"]).toBe("45");
      expect(res.headers["ratelimit-policy"]).toBe(POLICY);
      expect(res.headers.ratelimit).toBe('"default";r=0;t=45');
      expect(res.json()).toMatchObject({ code: "rate_limited", status: 429, request_id: res.headers["request-id"] });
    });

    it("stores no message for a createMessage answered 429", async () => {
      for (let i = 0; i < 3; i++) await read();
      const before = await messageCount();
      const res = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage() });
      expect(res.statusCode).toBe(429);
      expect(await messageCount()).toEqual(before);
      t.clock.advance(WINDOW_MS);
      const list = await t.call({ method: "GET", url: "/v1/messages" });
      expect(list.json().data).toEqual([]);
    });

    it("does not replay a 429 for an Idempotency-Key: the retry runs once the window resets", async () => {
      for (let i = 0; i < 3; i++) await read();
      const send = () => t.call({ method: "POST", url: "/v1/messages", payload: aMessage(), headers: { "idempotency-key": "order-1" } });
      expect((await send()).statusCode).toBe(429);
      t.clock.advance(WINDOW_MS);
      const retried = await send();
      expect(retried.statusCode).toBe(202);
      expect(retried.headers["idempotent-replayed"]).toBeUndefined();
    });

    it("gives the quota back when the window resets", async () => {
      for (let i = 0; i < 4; i++) await read();
      expect((await read()).statusCode).toBe(429);
      t.clock.advance(45_000);
      const res = await read();
      expect(res.statusCode).toBe(200);
      expect(res.headers.ratelimit).toBe('"default";r=2;t=60');
    });

    it("counts per key: another key of the same workspace is not limited", async () => {
      for (let i = 0; i < 4; i++) await read();
      expect((await read()).statusCode).toBe(429);
      const created = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Second" }, key: t.workspace.liveKey });
      expect(created.statusCode).toBe(201);
      for (const key of [t.workspace.liveKey, t.other.sandboxKey, created.json().secret as string]) {
        const res = await read(key);
        expect(res.statusCode).toBe(200);
      }
      expect(remaining(await read(t.other.sandboxKey))).toBe("1");
    });

    it("counts a rotated key's old and new secrets against one quota", async () => {
      const created = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Rotating" }, key: t.workspace.liveKey });
      const key = created.json() as { id: string; secret: string };
      const rotated = await t.call({ method: "POST", url: `/v1/api-keys/${key.id}/rotate`, payload: { overlap_seconds: 3600 }, key: t.workspace.liveKey });
      const fresh = rotated.json().secret as string;
      expect(remaining(await read(key.secret))).toBe("2");
      expect(remaining(await read(fresh))).toBe("1");
      expect(remaining(await read(key.secret))).toBe("0");
      expect((await read(fresh)).statusCode).toBe(429);
    });

    it("admits exactly the quota of concurrent requests", async () => {
      const answers = await Promise.all(Array.from({ length: 8 }, () => read()));
      const statuses = answers.map((res) => res.statusCode).sort();
      expect(statuses).toEqual([200, 200, 200, 429, 429, 429, 429, 429]);
      const left = answers.filter((res) => res.statusCode === 200).map(remaining).sort();
      expect(left).toEqual(["0", "1", "2"]);
    });

    it("does not count unauthenticated requests against a key", async () => {
      for (let i = 0; i < 5; i++) expect((await t.call({ method: "GET", url: "/v1/workspace", key: null })).statusCode).toBe(401);
      expect((await read()).headers.ratelimit).toBe('"default";r=2;t=45');
    });
  });

  describe("group commits", () => {
    /** The row each write to `table` locks while `work` runs (the binding that names it), in order. */
    const lockedRows = async (table: string, rowOf: (bindings: unknown[]) => unknown, work: () => Promise<unknown>) => {
      const rows: unknown[] = [];
      const record = (query: { sql: string; bindings?: unknown[] }) => {
        if (new RegExp(`^(insert into|update) [\`"]?${table}[\`"]? `, "i").test(query.sql)) rows.push(rowOf(query.bindings ?? []));
      };
      t.runtime.db.knex.on("query", record);
      try {
        await work();
      } finally {
        t.runtime.db.knex.off("query", record);
      }
      return rows;
    };

    it("takes a batch's counters in one order whatever order its requests came in, so two batches cannot deadlock, and still numbers requests in arrival order", async () => {
      const { rateLimits } = t.runtime.repositories;
      const expiresAt = t.clock.now() + WINDOW_MS;
      let positions: number[] = [];
      const order = await lockedRows("rate_limit_counters", (bindings) => bindings[0], async () => {
        positions = await t.runtime.db.knex.transaction((trx) => rateLimits.hitWriter.write(trx, ["key-c", "key-a", "key-b", "key-a"].map((bucket) => ({ bucket, expiresAt }))));
      });
      expect(order).toEqual(["key-a", "key-b", "key-c"]);
      expect(positions).toEqual([1, 1, 1, 2]);
    });

    it("stamps a batch's keys' last use in one order whatever order they came in", async () => {
      const { apiKeys } = t.runtime.repositories;
      const now = t.clock.now();
      const ids = ["key_0000000000000000000000000c", "key_0000000000000000000000000a", "key_0000000000000000000000000b"];
      const order = await lockedRows("api_keys", (bindings) => bindings.find((b) => typeof b === "string" && b.startsWith("key_")), () => t.runtime.db.knex.transaction((trx) => apiKeys.touchWriter.write(trx, ids.map((keyId) => ({ keyId, now, ip: null })))));
      expect(order).toEqual([...ids].sort());
    });
  });

  describe("across processes", () => {
    let second: { runtime: Runtime; app: FastifyInstance } | null = null;
    afterEach(async () => {
      if (!second) return;
      await second.app.close();
      await second.runtime.close();
      second = null;
    });

    it("shares one counter between two servers on the same database", async () => {
      // A second runtime opens its own connections to the same database: the count can only
      // agree if it lives there, not in either process's memory.
      const runtime = await createRuntime(t.runtime.config, { clock: t.clock });
      const app = await buildApp({ runtime, logger: false });
      second = { runtime, app };
      const viaSecond = () => app.inject({ method: "GET", url: "/v1/workspace", headers: { authorization: `Bearer ${t.workspace.sandboxKey}` } });

      expect(remaining(await read())).toBe("2");
      expect(remaining(await viaSecond())).toBe("1");
      expect(remaining(await read())).toBe("0");
      const refused = await viaSecond();
      expect(refused.statusCode).toBe(429);
      expect(refused.json().code).toBe("rate_limited");
      expect((await read()).statusCode).toBe(429);
    });
  });
});
