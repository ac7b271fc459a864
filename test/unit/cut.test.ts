import { describe, expect, it } from "vitest";
import { cut } from "../../src/domain/cut.js";
import { keptResponse, MAX_KEPT_RESPONSE_CHARS } from "../../src/delivery/smtp-reply.js";

describe("cut", () => {
  it("keeps a value that fits, and the start of one that does not", () => {
    expect(cut("short", 10)).toBe("short");
    expect(cut("abcdef", 3)).toBe("abc");
  });

  it("stops before a surrogate pair it would split, so what is kept is valid UTF-16", () => {
    expect(cut("ab😀cd", 3)).toBe("ab");
    expect(cut("ab😀cd", 4)).toBe("ab😀");
  });
});

describe("keptResponse", () => {
  it("keeps a remote answer whole up to the limit, and past it its start and how much more there was", () => {
    const fits = "5".repeat(MAX_KEPT_RESPONSE_CHARS);
    expect(keptResponse(fits)).toBe(fits);
    expect(keptResponse(`${fits}12345`)).toBe(`${fits}… (5 more characters not kept)`);
  });
});
