import { describe, expect, it } from "vitest";
import { batchLoader } from "../../src/db/batch-loader.js";

describe("batchLoader", () => {
  it("loads the keys asked for in one turn with one call, each caller getting its own value", async () => {
    const calls: string[][] = [];
    const load = batchLoader(async (keys: string[]) => {
      calls.push(keys);
      return new Map(keys.map((k) => [k, k.toUpperCase()]));
    });
    // Asked in a chain of microtasks, as callers whose turn comes one after another are.
    const values = await Promise.all(["a", "b", "c"].map(async (key, i) => {
      for (let n = 0; n < i; n++) await Promise.resolve();
      return load(key);
    }));
    expect(values).toEqual(["A", "B", "C"]);
    expect(calls).toEqual([["a", "b", "c"]]);
  });

  it("asks for a key once however many callers want it", async () => {
    const calls: string[][] = [];
    const load = batchLoader(async (keys: string[]) => {
      calls.push(keys);
      return new Map(keys.map((k) => [k, k.length]));
    });
    expect(await Promise.all([load("ab"), load("ab"), load("c")])).toEqual([2, 2, 1]);
    expect(calls).toEqual([["ab", "c"]]);
  });

  it("makes a new call for keys asked in a later turn", async () => {
    const calls: string[][] = [];
    const load = batchLoader(async (keys: string[]) => {
      calls.push(keys);
      return new Map(keys.map((k) => [k, k]));
    });
    await load("a");
    await load("b");
    expect(calls).toEqual([["a"], ["b"]]);
  });

  it("resolves undefined for a key the load does not return", async () => {
    const load = batchLoader(async (keys: string[]) => new Map(keys.filter((k) => k !== "gone").map((k) => [k, 1])));
    expect(await Promise.all([load("here"), load("gone")])).toEqual([1, undefined]);
  });

  it("rejects every caller of a batch whose load fails", async () => {
    const load = batchLoader(async () => {
      throw new Error("the database went away");
    });
    const results = await Promise.allSettled([load("a"), load("b")]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  });
});
