import { afterEach, describe, expect, it } from "vitest";
import { ClaimLoop } from "../../src/delivery/claim-loop.js";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A queue as a worker holds it: numbered items claimed under a lease, held until the batch they
 * came in is finished, which the test decides (each batch waits in `batches`).
 */
function queue(settings: { due: number; capacity: number; batchSize: number; pollMs?: number; leaseMs?: number }) {
  let due = settings.due;
  let next = 0;
  let claimFails = false;
  const held = new Set<number>();
  const limits: number[] = [];
  const renewals: number[][] = [];
  const logged: string[] = [];
  const batches: Array<() => void> = [];
  const loop = new ClaimLoop<number>({
    claim: async (limit) => {
      limits.push(limit);
      if (claimFails) {
        claimFails = false;
        throw new Error("the database went away");
      }
      const claimed = Array.from({ length: Math.min(limit, due) }, () => next++);
      due -= claimed.length;
      for (const item of claimed) held.add(item);
      return claimed;
    },
    work: (batch) =>
      new Promise<void>((resolve) =>
        batches.push(() => {
          for (const item of batch) held.delete(item);
          resolve();
        }),
      ),
    held: () => held.size,
    renewLeases: async () => {
      renewals.push([...held]);
    },
    capacity: settings.capacity,
    batchSize: settings.batchSize,
    pollMs: settings.pollMs ?? 60_000,
    leaseMs: settings.leaseMs ?? 60_000,
    log: { error: (_fields, message) => logged.push(message) },
    messages: { claimFailed: "claim failed", renewFailed: "renewal failed" },
  });
  return {
    loop,
    held,
    limits,
    renewals,
    logged,
    batches,
    addDue: (count: number) => (due += count),
    failNextClaim: () => (claimFails = true),
    /** Finishes every batch in hand, then stops. */
    async finish() {
      const stopped = loop.stop();
      while (batches.length > 0) batches.shift()!();
      await stopped;
    },
  };
}

let current: ReturnType<typeof queue> | null = null;
const started = (settings: Parameters<typeof queue>[0]) => {
  current = queue(settings);
  current.loop.start();
  return current;
};

afterEach(async () => {
  await current?.finish();
  current = null;
});

describe("ClaimLoop", () => {
  it("claims a batch at a time while it has room, stops claiming at its capacity, and claims again as a batch finishes", async () => {
    const q = started({ due: 10, capacity: 5, batchSize: 2 });
    await expect.poll(() => q.held.size).toBe(5);
    await sleep(50);
    expect(q.limits).toEqual([2, 2, 1]);

    q.batches.shift()!();
    await expect.poll(() => q.held.size).toBe(5);
    expect(q.limits).toEqual([2, 2, 1, 2]);
  });

  it("sleeps for the poll interval when less than a batch was due, and notify() cuts the sleep short", async () => {
    const q = started({ due: 1, capacity: 10, batchSize: 5 });
    await expect.poll(() => q.limits.length).toBe(1);
    q.addDue(3);
    await sleep(100);
    expect(q.limits).toHaveLength(1);

    q.loop.notify();
    await expect.poll(() => q.held.size).toBe(4);
    expect(q.limits).toEqual([5, 5]);
  });

  it("renews the leases of what it holds every third of the lease, and renews nothing while it holds nothing", async () => {
    const q = started({ due: 0, capacity: 10, batchSize: 5, leaseMs: 150 });
    await sleep(250);
    expect(q.renewals).toEqual([]);

    q.addDue(2);
    q.loop.notify();
    await expect.poll(() => q.renewals.length).toBeGreaterThanOrEqual(3);
    expect(new Set(q.renewals.map((items) => items.join(",")))).toEqual(new Set(["0,1"]));
  });

  it("logs a failed claim and tries again after the poll interval", async () => {
    const q = queue({ due: 2, capacity: 10, batchSize: 5, pollMs: 20 });
    current = q;
    q.failNextClaim();
    q.loop.start();
    await expect.poll(() => q.held.size).toBe(2);
    expect(q.logged).toEqual(["claim failed"]);
  });

  it("stops claiming on stop() and resolves once the batches in hand are finished", async () => {
    const q = started({ due: 3, capacity: 10, batchSize: 5 });
    await expect.poll(() => q.held.size).toBe(3);
    let stopped = false;
    const stopping = q.loop.stop().then(() => (stopped = true));
    q.addDue(5);
    await sleep(50);
    expect(stopped).toBe(false);

    q.batches.shift()!();
    await stopping;
    expect(q.limits).toEqual([5]);
    expect(q.held.size).toBe(0);
  });
});
