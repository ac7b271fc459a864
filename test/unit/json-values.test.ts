import { describe, expect, it } from "vitest";
import { unreadableValue } from "../../src/http/json-values.js";

const deepAt = (pointer: string, maxDepth: number) => ({ pointer, message: `is nested more than ${maxDepth} levels deep` });

describe("unreadableValue", () => {
  it("passes values nested up to the limit, counting the top level as 1", () => {
    expect(unreadableValue({ a: [{ b: 1 }] }, 3)).toBeNull();
    expect(unreadableValue("text", 1)).toBeNull();
    expect(unreadableValue(null, 1)).toBeNull();
  });

  it("names the first value past the limit by its JSON Pointer, escaping its keys", () => {
    expect(unreadableValue({ "a/b": [{ "c~": { d: 1 } }] }, 3)).toEqual(deepAt("/a~1b/0/c~0", 3));
    expect(unreadableValue([[[]]], 2)).toEqual(deepAt("/0/0", 2));
  });

  it("walks 100,000 levels without running out of stack", () => {
    const deep = JSON.parse(`${"[".repeat(100_000)}${"]".repeat(100_000)}`) as unknown;
    expect(unreadableValue(deep, 32)).toEqual(deepAt("/0".repeat(32), 32));
  });

  it("names a number JSON.parse could not keep: past the largest double, or an integer past 2^53 - 1", () => {
    expect(unreadableValue(JSON.parse('{"a": [1, 1e400]}'), 32)).toEqual({ pointer: "/a/1", message: expect.stringContaining("too large") });
    expect(unreadableValue(JSON.parse("-1e999"), 32)).toEqual({ pointer: "", message: expect.stringContaining("too large") });
    expect(unreadableValue(JSON.parse('{"n": 9007199254740993}'), 32)).toEqual({ pointer: "/n", message: expect.stringContaining("2^53 - 1") });
  });

  it("passes the numbers a double keeps: safe integers, fractions, small exponents", () => {
    // The largest double is an integer past 2^53 - 1: whether its digits were kept cannot be told, so it is refused too.
    expect(unreadableValue(JSON.parse('[9007199254740991, -9007199254740991, 0.1, 1.7976931348623157e308, 5e-324, 1e-400]'), 32)).toEqual(expect.objectContaining({ pointer: "/3" }));
    expect(unreadableValue(JSON.parse('[9007199254740991, -9007199254740991, 0.1, 5e-324, 1e-400, 2.5e3]'), 32)).toBeNull();
  });
});
