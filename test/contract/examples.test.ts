import { describe, expect, it } from "vitest";
import { loadSpec } from "../../src/http/spec.js";
import { ContractChecker, jsonPointer } from "../helpers/contract.js";

/**
 * The contract's response examples are what the reference shows and what the Prism mock answers
 * (`make mock`): each must be a valid instance of the schema it illustrates.
 */
type Json = Record<string, unknown>;
const spec = loadSpec() as unknown as Json;
/** Follows `$ref`s within the contract. */
const resolve = (node: Json): Json => (typeof node.$ref === "string" ? resolve(jsonPointer(spec, node.$ref.slice(1)) as Json) : node);

const cases: Array<{ name: string; method: string; path: string; status: number; mediaType: string; value: unknown }> = [];
for (const [path, item] of Object.entries(spec.paths as Json)) {
  for (const [method, operation] of Object.entries(item as Json)) {
    const responses = (operation as Json).responses as Json | undefined;
    for (const [status, response] of Object.entries(responses ?? {})) {
      for (const [mediaType, media] of Object.entries((resolve(response as Json).content as Json | undefined) ?? {})) {
        const { example, examples } = media as { example?: unknown; examples?: Record<string, Json> };
        const name = `${(operation as Json).operationId as string} ${status}`;
        if (example !== undefined) cases.push({ name, method, path, status: Number(status), mediaType, value: example });
        for (const [label, entry] of Object.entries(examples ?? {})) cases.push({ name: `${name} (${label})`, method, path, status: Number(status), mediaType, value: resolve(entry).value });
      }
    }
  }
}

describe("the contract's response examples", () => {
  const checker = new ContractChecker();

  it("exist for every successful JSON response", () => {
    const successes = new Set(cases.filter((example) => example.status < 300).map((example) => `${example.method} ${example.path}`));
    // Operations whose success is JSON: a download's bytes (getInboundAttachment) have no example to show.
    const answersJson = (operation: Json) =>
      Object.entries((operation.responses as Json | undefined) ?? {}).some(([status, response]) => Number(status) < 300 && Object.keys((resolve(response as Json).content as Json | undefined) ?? {}).some((type) => type.includes("json")));
    const operations = Object.entries(spec.paths as Json).flatMap(([path, item]) =>
      Object.entries(item as Json)
        .filter(([key, operation]) => key !== "parameters" && answersJson(operation as Json))
        .map(([method]) => `${method} ${path}`),
    );
    expect(operations.filter((operation) => !successes.has(operation))).toEqual([]);
  });

  it.each(cases)("$name matches its schema", ({ method, path, status, mediaType, value }) => {
    expect(checker.check(method, path, status, mediaType, JSON.stringify(value))).toEqual([]);
  });
});
