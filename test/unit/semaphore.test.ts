import { describe, expect, it } from "vitest";
import { KeyedSemaphore } from "../../src/delivery/semaphore.js";

/** A task that runs until the test lets it finish, counting how many of its key run at once. */
function gate() {
  const releases: Array<() => void> = [];
  let running = 0;
  let most = 0;
  const task = () =>
    new Promise<void>((resolve) => {
      running++;
      most = Math.max(most, running);
      releases.push(() => {
        running--;
        resolve();
      });
    });
  return { task, releaseAll: () => releases.splice(0).forEach((release) => release()), get most() { return most; }, get running() { return running; } };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("KeyedSemaphore", () => {
  it("runs at most `limit` tasks of one key at once, and the other keys' beside them", async () => {
    const slots = new KeyedSemaphore(2);
    const [a, b] = [gate(), gate()];
    const all = [...Array.from({ length: 5 }, () => slots.run("a", a.task)), slots.run("b", b.task)];
    await turn();
    expect([a.running, b.running]).toEqual([2, 1]);
    while (a.running > 0 || b.running > 0) {
      a.releaseAll();
      b.releaseAll();
      await turn();
    }
    await Promise.all(all);
    expect(a.most).toBe(2);
  });

  it("keeps a key while a task of it runs or waits, and forgets it when the last one is done, also by failing", async () => {
    const slots = new KeyedSemaphore(1);
    const a = gate();
    const first = slots.run("a", a.task);
    const waiting = slots.run("a", a.task);
    const failing = slots.run("b", () => Promise.reject(new Error("no answer")));
    await expect(failing).rejects.toThrow("no answer");
    await turn();
    expect(slots.size).toBe(1);
    a.releaseAll();
    await first;
    await turn();
    expect(slots.size).toBe(1); // the waiting one runs now
    a.releaseAll();
    await waiting;
    expect(slots.size).toBe(0);
  });
});
