import { APIConnectionError, APIError } from "mailroom";
import { describe, expect, it } from "vitest";
import type { TokenGrant } from "../../dashboard/src/auth/auth-api.js";
import { TokenManager } from "../../dashboard/src/api/token-manager.js";

/**
 * The dashboard's user access tokens (dashboard/src/api/token-manager.ts): exchanged with
 * POST /auth/token, held in memory, renewed after two thirds of their life.
 */
const LIFE_SECONDS = 900;
const refusal = (status: number, code: string) => APIError.from(status, { type: "about:blank", title: code, status, code, request_id: "req_test" }, new Headers());

/** A TokenManager on a clock the test moves, whose exchanges answer `outcomes` in turn (a thrown error, or a token). */
function manager() {
  let now = 1_000_000;
  const outcomes: unknown[] = [];
  let issued = 0;
  const exchanges: string[] = [];
  const tokens = new TokenManager(async (workspaceId, environment) => {
    exchanges.push(`${workspaceId}:${environment}`);
    const outcome = outcomes.shift();
    if (outcome !== undefined) throw outcome;
    const token = `mru_test_${++issued}`;
    const grant: TokenGrant = {
      token,
      expires_at: new Date(now + LIFE_SECONDS * 1000).toISOString(),
      expires_in: LIFE_SECONDS,
      workspace_id: workspaceId,
      environment,
      role: "owner",
    };
    return grant;
  }, () => now);
  return {
    tokens,
    exchanges,
    token: () => tokens.token("ws_acme", "sandbox"),
    /** The next exchanges fail with these. */
    failNext: (...errors: unknown[]) => outcomes.push(...errors),
    advance: (seconds: number) => (now += seconds * 1000),
  };
}

describe("TokenManager", () => {
  it("exchanges once and holds the token until two thirds of its life have passed", async () => {
    const t = manager();
    expect(await t.token()).toBe("mru_test_1");
    t.advance(LIFE_SECONDS * 0.6);
    expect(await t.token()).toBe("mru_test_1");
    t.advance(LIFE_SECONDS * 0.1);
    expect(await t.token()).toBe("mru_test_2");
    expect(t.exchanges).toHaveLength(2);
  });

  it("shares one exchange between calls made together", async () => {
    const t = manager();
    expect(await Promise.all([t.token(), t.token(), t.token()])).toEqual(["mru_test_1", "mru_test_1", "mru_test_1"]);
    expect(t.exchanges).toHaveLength(1);
  });

  it("keeps using the held token while it is valid when a renewal fails for a reason that may pass", async () => {
    for (const failure of [refusal(429, "too_many_token_exchanges"), refusal(503, "service_unavailable"), new APIConnectionError()]) {
      const t = manager();
      await t.token();
      t.advance(LIFE_SECONDS * 0.7);
      t.failNext(failure);
      expect(await t.token(), String(failure)).toBe("mru_test_1");
    }
  });

  it("tries the renewal again a little later rather than on every call", async () => {
    const t = manager();
    await t.token();
    t.advance(LIFE_SECONDS * 0.7);
    t.failNext(new APIConnectionError());
    await t.token();
    await t.token();
    expect(t.exchanges).toHaveLength(2);
    t.advance(30);
    expect(await t.token()).toBe("mru_test_2");
  });

  it("fails once the held token has expired and no new one can be had", async () => {
    const t = manager();
    await t.token();
    t.advance(LIFE_SECONDS);
    t.failNext(new APIConnectionError());
    await expect(t.token()).rejects.toThrow(APIConnectionError);
  });

  it("passes on a refusal of the session itself, whose tokens are worth nothing any more", async () => {
    for (const failure of [refusal(401, "unauthorized"), refusal(403, "csrf_failed"), refusal(404, "not_found")]) {
      const t = manager();
      await t.token();
      t.advance(LIFE_SECONDS * 0.7);
      t.failNext(failure);
      await expect(t.token(), String(failure)).rejects.toBe(failure);
    }
  });

  it("never hands back the token a call was refused with, even while it has not expired", async () => {
    const t = manager();
    const refused = await t.token();
    t.failNext(new APIConnectionError());
    await expect(t.tokens.token("ws_acme", "sandbox", { replacing: refused })).rejects.toThrow(APIConnectionError);
    // Nor to a call that comes after, which exchanges afresh.
    t.failNext(new APIConnectionError());
    await expect(t.token()).rejects.toThrow(APIConnectionError);
    expect(await t.token()).toBe("mru_test_2");
  });

  it("shares a failed renewal's fallback only with the calls that were not refused", async () => {
    const t = manager();
    const held = await t.token();
    t.advance(LIFE_SECONDS * 0.7);
    t.failNext(refusal(503, "service_unavailable"), refusal(503, "service_unavailable"));
    // Renewing ahead of time, the held token still good: the calls keep it.
    const [early, later] = await Promise.all([t.token(), t.token()]);
    expect([early, later]).toEqual([held, held]);
    // The server refused it meanwhile: neither the call that says so nor any other gets it back.
    t.advance(30);
    const [plain, replacing] = await Promise.allSettled([t.token(), t.tokens.token("ws_acme", "sandbox", { replacing: held })]);
    expect(plain.status).toBe("rejected");
    expect(replacing.status).toBe("rejected");
    expect(t.exchanges).toHaveLength(3);
  });

  it("forgets every token on clear()", async () => {
    const t = manager();
    await t.token();
    t.tokens.clear();
    t.failNext(new APIConnectionError());
    await expect(t.token()).rejects.toThrow(APIConnectionError);
  });
});
