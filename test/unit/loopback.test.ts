import { describe, expect, it } from "vitest";
import { isLoopback } from "../../src/domain/loopback.js";

describe("isLoopback", () => {
  it("is true for this machine: 127.0.0.0/8, ::1, 127.x mapped into IPv6, and localhost", () => {
    for (const host of ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1", "::FFFF:127.0.0.2", "localhost"]) expect(isLoopback(host), host).toBe(true);
  });

  it("is false for any other address or name", () => {
    for (const host of ["192.0.2.2", "::ffff:192.0.2.2", "10.0.0.1", "::", "0.0.0.0", "::2", "localhost.example.com", "127.0.0.1.example.com"]) expect(isLoopback(host), host).toBe(false);
  });
});
