import { describe, expect, it } from "vitest";
import { digestSecret, digestsEqual, generateSecret, parseSecret, redactSecret } from "../../src/domain/api-key-secret.js";

describe("API key secrets", () => {
  it("carry the environment in their prefix", () => {
    expect(generateSecret("live")).toMatch(/^svc_live_[0-9A-Za-z]{38}$/);
    expect(generateSecret("sandbox")).toMatch(/^svc_test_[0-9A-Za-z]{38}$/);
    expect(parseSecret(generateSecret("live"))).toEqual({ kind: "api_key", environment: "live" });
    expect(parseSecret(generateSecret("sandbox"))).toEqual({ kind: "api_key", environment: "sandbox" });
  });

  it("makes user access tokens with their own prefix, told apart from keys", () => {
    expect(generateSecret("live", "user_token")).toMatch(/^mru_live_[0-9A-Za-z]{38}$/);
    expect(parseSecret(generateSecret("sandbox", "user_token"))).toEqual({ kind: "user_token", environment: "sandbox" });
  });

  it("reject a typo through the checksum, before any lookup", () => {
    const secret = generateSecret("sandbox");
    const position = 12;
    const typo = secret.slice(0, position) + (secret[position] === "a" ? "b" : "a") + secret.slice(position + 1);
    expect(parseSecret(typo)).toBeNull();
  });

  it("reject anything that is not shaped like a key", () => {
    for (const bad of ["", "svc_test_", "sk_test_abc", `svc_prod_${"a".repeat(38)}`, `${generateSecret("live")}x`]) expect(parseSecret(bad)).toBeNull();
  });

  it("are never the same twice", () => {
    const secrets = new Set(Array.from({ length: 200 }, () => generateSecret("live")));
    expect(secrets.size).toBe(200);
  });

  it("are stored as SHA-256 digests and compared in constant time", () => {
    const secret = generateSecret("live");
    expect(digestSecret(secret)).toMatch(/^[0-9a-f]{64}$/);
    expect(digestsEqual(digestSecret(secret), digestSecret(secret))).toBe(true);
    expect(digestsEqual(digestSecret(secret), digestSecret(generateSecret("live")))).toBe(false);
  });

  it("show only their prefix and last four characters when redacted", () => {
    const secret = generateSecret("sandbox");
    expect(redactSecret(secret)).toBe(`svc_test_…${secret.slice(-4)}`);
  });
});
