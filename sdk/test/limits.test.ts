import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { MESSAGE_BATCH_LIMIT, SUPPRESSION_BATCH_LIMIT } from "../src/index.js";

type Schema = { properties: Record<string, { maxItems?: number }> };
const schemas = (parse(readFileSync(new URL("../../openapi/v1.yaml", import.meta.url), "utf8")) as { components: { schemas: Record<string, Schema> } }).components.schemas;

describe("batch limits", () => {
  it("are the contract's maxItems of each batch operation's list", () => {
    expect(MESSAGE_BATCH_LIMIT).toBe(schemas.CreateMessageBatchRequest?.properties.messages?.maxItems);
    expect(SUPPRESSION_BATCH_LIMIT).toBe(schemas.CreateSuppressionBatchRequest?.properties.suppressions?.maxItems);
  });
});
