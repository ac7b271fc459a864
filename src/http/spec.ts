import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import type { OpenApiDocument } from "./bindings.js";

export const SPEC_PATH = fileURLToPath(new URL("../../openapi/v1.yaml", import.meta.url));

let cached: OpenApiDocument | null = null;

/** The contract, parsed once per process. Callers that mutate must clone. */
export function loadSpec(): OpenApiDocument {
  cached ??= parse(readFileSync(SPEC_PATH, "utf8")) as OpenApiDocument;
  return cached;
}
