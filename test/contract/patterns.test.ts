import { describe, expect, it } from "vitest";
import { loadSpec } from "../../src/http/spec.js";

/** Every schema of the contract with a `pattern`, by its JSON Pointer. */
function patternedSchemas(node: unknown, pointer = ""): Array<{ pointer: string; schema: Record<string, unknown> }> {
  if (Array.isArray(node)) return node.flatMap((item, index) => patternedSchemas(item, `${pointer}/${index}`));
  if (node === null || typeof node !== "object") return [];
  const schema = node as Record<string, unknown>;
  const own = typeof schema.pattern === "string" ? [{ pointer, schema }] : [];
  return [...own, ...Object.entries(schema).flatMap(([key, child]) => patternedSchemas(child, `${pointer}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`))];
}

describe("the contract's patterns", () => {
  // A regular expression is no answer to a person who sent a wrong value (docs/errors.md): the
  // validation message says the rule in words, from x-mailroom-pattern-message.
  it.each(patternedSchemas(loadSpec()).map(({ pointer, schema }) => [pointer, schema]))("%s says its rule in words", (_pointer, schema) => {
    expect(schema["x-mailroom-pattern-message"]).toMatch(/^must /);
  });
});
