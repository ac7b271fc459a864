import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/connection.js";
import { parseRelayUrl } from "../../src/delivery/transports/relay.js";

/** What `run` threw (null: nothing). */
function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return null;
}

describe("parseRelayUrl", () => {
  it("refuses a malformed relay URL with an error that never carries its password", () => {
    for (const url of ["smtp://mailer:hunter2#x@relay.example:587", "smtp://mailer:2024#hunter2@relay.example", "smtp://mailer:hunter2%@relay.example"]) {
      const error = thrown(() => parseRelayUrl(url));
      expect(error, url).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(/^relay URL .*percent-encoded/);
      expect(inspect(error)).not.toContain("hunter2");
    }
  });
});

describe("openDatabase", () => {
  it("refuses a malformed MySQL URL with an error that never carries its password", () => {
    const error = thrown(() => openDatabase("mysql://app:hunter2#x@db.internal/mailroom"));
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/^the database URL is not a valid URL/);
    expect(inspect(error)).not.toContain("hunter2");
  });
});
