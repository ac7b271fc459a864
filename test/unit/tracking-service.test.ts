import { describe, expect, it, vi } from "vitest";
import { secretKeys } from "../../src/domain/secret-keys.js";
import { ManualClock } from "../../src/domain/clock.js";
import type { EngagementInput } from "../../src/services/engagement.js";
import { TrackingService, type EngagementRecorder } from "../../src/services/tracking.js";
import { TrackingTokens } from "../../src/tracking/tokens.js";

const messageId = "msg_01jd3k8m2q5v7w9x1y3z5a7b9c";
const host = "t.mail.example";
const visitor = { method: "GET", userAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/132.0", ip: "203.0.113.7" };

function setup(recorder: EngagementRecorder) {
  const clock = new ManualClock();
  const tokens = new TrackingTokens(secretKeys("ab".repeat(32)), clock);
  const errors: object[] = [];
  const service = new TrackingService(tokens, recorder, clock, { error: (obj) => void errors.push(obj) }, { recordWaitMs: 50 });
  return { clock, tokens, service, errors };
}

describe("TrackingService", () => {
  it("logs a link issued for the base host but presented at another, as a proxy rewriting Host would", async () => {
    const clock = new ManualClock();
    const tokens = new TrackingTokens(secretKeys("ab".repeat(32)), clock);
    const warnings: object[] = [];
    const log = { error: () => undefined, warn: (obj: object) => void warnings.push(obj) };
    const service = new TrackingService(tokens, { record: async () => null }, clock, log, { recordWaitMs: 50, baseHost: host });
    const token = tokens.issue({ kind: "click", messageId, position: 0, url: "https://shop.example/", host, sandbox: false });
    expect(await service.click(token, "127.0.0.1:3000", visitor)).toBeNull();
    expect(warnings).toEqual([{ host: "127.0.0.1:3000", issued_for: host }]);
    // A token that is not ours, or was issued for another host still, is only a 404.
    const elsewhere = tokens.issue({ kind: "click", messageId, position: 0, url: "https://shop.example/", host: "track.acme.example", sandbox: false });
    expect(await service.click(elsewhere, "127.0.0.1:3000", visitor)).toBeNull();
    expect(await service.click("bogus", "127.0.0.1:3000", visitor)).toBeNull();
    expect(warnings).toHaveLength(1);
  });

  it("still redirects when recording the click fails, and logs the failure", async () => {
    const { clock, tokens, service, errors } = setup({ record: async () => Promise.reject(new Error("database is down")) });
    const token = tokens.issue({ kind: "click", messageId, position: 0, url: "https://shop.example/", host, sandbox: false });
    clock.advance(60_000);
    expect(await service.click(token, host, visitor)).toEqual({ url: "https://shop.example/", sandbox: false });
    expect(await service.open(tokens.issue({ kind: "open", messageId, position: 0 }), visitor)).toBe(true);
    expect(errors).toHaveLength(2);
  });

  it("answers within its wait when the store is slow, and the write still completes", async () => {
    let finish: () => void = () => {};
    const recorded: EngagementInput[] = [];
    const { clock, tokens, service } = setup({
      record: (input) =>
        new Promise((resolve) => {
          finish = () => {
            recorded.push(input);
            resolve(null);
          };
        }),
    });
    const token = tokens.issue({ kind: "click", messageId, position: 3, url: "https://shop.example/slow", host, sandbox: false });
    clock.advance(60_000);
    // The wait is a timer: faked, it is counted rather than timed, so a loaded machine cannot stretch it.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      let answer: unknown = "pending";
      void service.click(token, host, visitor).then((redirect) => (answer = redirect));
      await vi.advanceTimersByTimeAsync(49);
      expect(answer).toBe("pending");
      await vi.advanceTimersByTimeAsync(1);
      expect(answer).toEqual({ url: "https://shop.example/slow", sandbox: false });
      expect(recorded).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
    finish();
    await new Promise((resolve) => setImmediate(resolve));
    expect(recorded).toMatchObject([{ messageId, recipient: { position: 3 }, type: "message.clicked", human: true, data: { url: "https://shop.example/slow", machine_click: false, ip: "203.0.113.7" } }]);
  });

  it("records nothing for a token it did not sign, and lets an unsubscribe's failure through", async () => {
    const calls: EngagementInput[] = [];
    const failing = setup({ record: async (input) => (calls.push(input), Promise.reject(new Error("database is down"))) });
    expect(await failing.service.click("bogus", host, visitor)).toBeNull();
    expect(await failing.service.open("bogus", visitor)).toBe(false);
    expect(await failing.service.unsubscribe("bogus", "one_click", visitor)).toBe(false);
    expect(calls).toEqual([]);
    // A 200 to a one-click POST promises the address is suppressed: a failed write must not answer it.
    const token = failing.tokens.issue({ kind: "unsubscribe", messageId, position: 0 });
    await expect(failing.service.unsubscribe(token, "one_click", visitor)).rejects.toThrow("database is down");
  });
});
