import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MAINTENANCE_INTERVAL_MS, startMaintenance } from "../../src/maintenance.js";
import type { Runtime } from "../../src/runtime.js";

/** A step the test finishes by hand: `calls` counts how often the round reached it. */
function heldStep() {
  const step = { calls: 0, release: () => {} };
  const run = vi.fn(() => {
    step.calls++;
    return new Promise<void>((resolve) => (step.release = resolve));
  });
  return Object.assign(step, { run });
}

/** A worker's runtime whose maintenance steps answer at once, but for the first one, held. */
function fakeRuntime(first: ReturnType<typeof heldStep>) {
  const done = async () => undefined;
  const later = vi.fn(done);
  const services = {
    idempotency: { prune: first.run, removeExpiredAnswers: later },
    rateLimiter: { prune: later },
    sessions: { prune: later },
    webhooks: { prune: later },
    requestLogs: { prune: later },
    domains: { recheckDue: vi.fn(async () => []) },
    retention: { removeExpiredContent: vi.fn(async () => ({ messages: 0, replies: 0, finished: true })) },
  };
  const runtime = { services, checkClock: vi.fn(async () => ({ skewMs: null, verdict: "ok", message: "" })) } as unknown as Runtime;
  return { runtime, later };
}

const log = { info() {}, warn() {}, error() {} };
/** Lets every step that can go on go on: the steps are promise chains, with no timer between them. */
const settle = async () => {
  for (let i = 0; i < 500; i++) await Promise.resolve();
};

describe("startMaintenance", () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it("skips the ticks that come while a round is still running, instead of queueing a round behind it for each", async () => {
    const first = heldStep();
    const { runtime } = fakeRuntime(first);
    const maintenance = startMaintenance(runtime, log);
    expect(first.calls).toBe(1);
    // A slow round (a locked table, a long retention sweep) spans three ticks.
    await vi.advanceTimersByTimeAsync(3 * MAINTENANCE_INTERVAL_MS);
    first.release();
    await settle();
    expect(first.calls).toBe(1);
    // The next tick after the round ended starts the next round.
    await vi.advanceTimersByTimeAsync(MAINTENANCE_INTERVAL_MS);
    expect(first.calls).toBe(2);
    maintenance.stop();
    first.release();
    await maintenance.round;
  });

  it("stop() ends the round after the step under way, so a SIGTERM waits for one step, not the whole round", async () => {
    const first = heldStep();
    const { runtime, later } = fakeRuntime(first);
    const maintenance = startMaintenance(runtime, log);
    maintenance.stop();
    first.release();
    await maintenance.round;
    expect(first.calls).toBe(1);
    expect(later).not.toHaveBeenCalled();
    // And no round comes after it.
    await vi.advanceTimersByTimeAsync(2 * MAINTENANCE_INTERVAL_MS);
    expect(first.calls).toBe(1);
  });
});
