import { describe, expect, it } from "vitest";
import { ByteBudget } from "../../src/delivery/byte-budget.js";

/** Whether a promise has settled, once the microtasks queued so far have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe("ByteBudget", () => {
  it("grants at once what fits beside what is held", async () => {
    const budget = new ByteBudget(100);
    await budget.take(40);
    await budget.take(60);
    expect(budget.inHand).toBe(100);
  });

  it("gives more to a holder at once when it fits and nobody waits, and never makes it wait", async () => {
    const budget = new ByteBudget(100);
    await budget.take(60);
    const more = budget.tryTake(30);
    expect(more).not.toBeNull();
    expect(budget.tryTake(20)).toBeNull();
    more!();
    more!();
    expect(budget.inHand).toBe(60);
    // A waiter keeps its turn: nothing is lent past it.
    const waiting = budget.take(50);
    expect(budget.tryTake(10)).toBeNull();
    expect(await settled(waiting)).toBe(false);
  });

  it("makes a taker wait until enough is handed back", async () => {
    const budget = new ByteBudget(100);
    const giveBack = await budget.take(70);
    const waiting = budget.take(50);
    expect(await settled(waiting)).toBe(false);
    giveBack();
    expect(await settled(waiting)).toBe(true);
    expect(budget.inHand).toBe(50);
  });

  it("serves waiters in order, so a large one is not overtaken by small ones", async () => {
    const budget = new ByteBudget(100);
    const giveBack = await budget.take(60);
    const large = budget.take(80);
    const small = budget.take(10); // would fit now, but the large one asked first
    expect(await settled(small)).toBe(false);
    giveBack();
    expect(await settled(large)).toBe(true);
    expect(await settled(small)).toBe(true);
    expect(budget.inHand).toBe(90);
  });

  it("lets a message larger than the whole budget go alone, once nothing else is held", async () => {
    const budget = new ByteBudget(100);
    const giveBackSmall = await budget.take(10);
    const huge = budget.take(500);
    expect(await settled(huge)).toBe(false);
    giveBackSmall();
    expect(await settled(huge)).toBe(true);
    expect(budget.inHand).toBe(500);
    // ...and nothing joins it while it is held.
    const next = budget.take(1);
    expect(await settled(next)).toBe(false);
    (await huge)();
    expect(await settled(next)).toBe(true);
  });

  it("takes back a hand-back given twice only once", async () => {
    const budget = new ByteBudget(100);
    await budget.take(30);
    const giveBack = await budget.take(50);
    giveBack();
    giveBack();
    expect(budget.inHand).toBe(30);
  });

  it("refuses a budget that is not positive", () => {
    expect(() => new ByteBudget(0)).toThrow(RangeError);
  });
});
