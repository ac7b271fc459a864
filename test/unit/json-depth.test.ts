import { describe, expect, it } from "vitest";
import { tooDeepPointer } from "../../src/http/json-depth.js";

describe("tooDeepPointer", () => {
  it("passes values nested up to the limit, counting the top level as 1", () => {
    expect(tooDeepPointer({ a: [{ b: 1 }] }, 3)).toBeNull();
    expect(tooDeepPointer("text", 1)).toBeNull();
    expect(tooDeepPointer(null, 1)).toBeNull();
  });

  it("names the first value past the limit by its JSON Pointer, escaping its keys", () => {
    expect(tooDeepPointer({ "a/b": [{ "c~": { d: 1 } }] }, 3)).toBe("/a~1b/0/c~0");
    expect(tooDeepPointer([[[]]], 2)).toBe("/0/0");
  });

  it("walks 100,000 levels without running out of stack", () => {
    const deep = JSON.parse(`${"[".repeat(100_000)}${"]".repeat(100_000)}`) as unknown;
    expect(tooDeepPointer(deep, 32)).toBe("/0".repeat(32));
  });
});
