import { describe, expect, it } from "vitest";
import { canonicalJson, IdempotencyService } from "../../src/services/idempotency.js";

describe("request fingerprints", () => {
  it("ignore object key order", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}');
    expect(IdempotencyService.fingerprint("createMessage", "/v1/messages", { to: "a", subject: "s" })).toBe(
      IdempotencyService.fingerprint("createMessage", "/v1/messages", { subject: "s", to: "a" }),
    );
  });

  it("differ by operation, path and body", () => {
    const base = IdempotencyService.fingerprint("createMessage", "/v1/messages", { to: "a" });
    expect(IdempotencyService.fingerprint("createApiKey", "/v1/messages", { to: "a" })).not.toBe(base);
    expect(IdempotencyService.fingerprint("createMessage", "/v1/other", { to: "a" })).not.toBe(base);
    expect(IdempotencyService.fingerprint("createMessage", "/v1/messages", { to: "b" })).not.toBe(base);
  });
});
