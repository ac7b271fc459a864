import { describe, expect, it } from "vitest";
import { bearerAuthSecurityHandler } from "../../src/http/auth-hooks.js";
import { checkBindings, operationsOf, type OpenApiDocument } from "../../src/http/bindings.js";
import { createHandlers } from "../../src/http/handlers.js";
import { loadSpec } from "../../src/http/spec.js";
import type { Services } from "../../src/runtime.js";

/** A two-operation contract: one public, one secured by the document's default. */
const contract = (): OpenApiDocument => ({
  security: [{ bearerAuth: ["full_access"] }],
  components: { securitySchemes: { bearerAuth: { type: "http", scheme: "bearer" } } },
  paths: {
    "/health": { get: { operationId: "getHealth", security: [] } },
    "/v1/things/{thing_id}": {
      parameters: [{ name: "thing_id", in: "path" }],
      get: { operationId: "getThing", "x-mailroom-role": "viewer" },
      post: { operationId: "updateThing", "x-mailroom-role": "developer", security: [{ bearerAuth: ["sending_access"] }], requestBody: { required: true } },
    },
  },
});

const handler = async () => ({});
const handlers = () => ({ getHealth: handler, getThing: handler, updateThing: handler });
const security = () => ({ bearerAuth: async () => undefined });


/** Batch item checks the handlers are built with; never called here. */
const NO_BATCH_CHECKS = { messages: () => null, suppressions: () => null };

describe("operationsOf", () => {
  it("lists every operation with the security in force and whether it takes a body", () => {
    expect(operationsOf(contract())).toEqual([
      { operationId: "getHealth", method: "get", path: "/health", security: [], body: "none", minRole: null },
      { operationId: "getThing", method: "get", path: "/v1/things/{thing_id}", security: [{ bearerAuth: ["full_access"] }], body: "none", minRole: "viewer" },
      { operationId: "updateThing", method: "post", path: "/v1/things/{thing_id}", security: [{ bearerAuth: ["sending_access"] }], body: "required", minRole: "developer" },
    ]);
  });

  it("refuses an operation without an operationId", () => {
    const spec = contract();
    spec.paths["/v1/anonymous"] = { get: {} };
    expect(() => operationsOf(spec)).toThrow("GET /v1/anonymous has no operationId");
  });
});

describe("checkBindings", () => {
  it("passes when every operation has a handler and every scheme a security handler", () => {
    expect(() => checkBindings(contract(), handlers(), security())).not.toThrow();
  });

  it("refuses to start when an operation has no handler", () => {
    const { getThing: _, ...missing } = handlers();
    expect(() => checkBindings(contract(), missing, security())).toThrow("operation getThing has no handler");
  });

  it("refuses to start when a handler is not a function", () => {
    expect(() => checkBindings(contract(), { ...handlers(), getThing: "nope" }, security())).toThrow("operation getThing has no handler");
  });

  it("refuses to start when a handler matches no operation", () => {
    expect(() => checkBindings(contract(), { ...handlers(), deleteThing: handler }, security())).toThrow("handler deleteThing matches no operation in the contract");
  });

  it("refuses to start when a security scheme has no security handler", () => {
    expect(() => checkBindings(contract(), handlers(), {})).toThrow("security scheme bearerAuth has no security handler");
  });

  it("refuses a scheme that an operation names even if components do not declare it", () => {
    const spec = contract();
    delete spec.components;
    (spec.paths["/v1/things/{thing_id}"] as Record<string, unknown>).delete = { operationId: "deleteThing", security: [{ apiKeyHeader: [] }] };
    expect(() => checkBindings(spec, { ...handlers(), deleteThing: handler }, security())).toThrow("security scheme apiKeyHeader has no security handler");
  });

  it("refuses to start when a secured operation names no valid role", () => {
    const spec = contract();
    (spec.paths["/v1/things/{thing_id}"] as Record<string, Record<string, unknown>>).get!["x-mailroom-role"] = "superuser";
    expect(() => checkBindings(spec, handlers(), security())).toThrow("operation getThing declares no valid x-mailroom-role");
  });

  it("reports every disagreement at once, in one line", () => {
    const { getThing: _, ...rest } = handlers();
    try {
      checkBindings(contract(), { ...rest, stray: handler }, {});
      expect.unreachable();
    } catch (error) {
      const message = (error as Error).message;
      expect(message).not.toContain("\n");
      expect(message).toContain("operation getThing has no handler");
      expect(message).toContain("handler stray matches no operation");
      expect(message).toContain("security scheme bearerAuth has no security handler");
    }
  });

  it("passes for the real contract with the real handlers", () => {
    // Handlers only close over their services; building them touches nothing.
    const real = createHandlers({} as Services, { ready: true }, async () => undefined, { publicUrl: null }, NO_BATCH_CHECKS);
    expect(() => checkBindings(loadSpec(), real, { bearerAuth: bearerAuthSecurityHandler(new Map()) })).not.toThrow();
  });

  it("fails for the real contract when one real handler goes missing", () => {
    const { rotateApiKey: _, ...real } = createHandlers({} as Services, { ready: true }, async () => undefined, { publicUrl: null }, NO_BATCH_CHECKS);
    expect(() => checkBindings(loadSpec(), real, { bearerAuth: bearerAuthSecurityHandler(new Map()) })).toThrow("operation rotateApiKey has no handler");
  });
});
