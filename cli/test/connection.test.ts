import { isSendableApiKey } from "mailroom";
import { describe, expect, it } from "vitest";
import { keyProblem } from "../src/connection.js";

describe("keyProblem()", () => {
  // The SDK's constructor judges keys with isSendableApiKey; the CLI refuses exactly the same ones.
  it.each(["svc_test_fine", "mru_live_fine", "none!~", "", "svc_test_a\nb", "svc_test_a\tb", "svc_test_two words", "svc_test_\u007f", "svc_test_clé"])(
    "refuses %j exactly when the SDK's isSendableApiKey does",
    (apiKey) => {
      expect(keyProblem(apiKey, "MAILROOM_API_KEY") === undefined).toBe(isSendableApiKey(apiKey));
    },
  );

  it("names where the key came from without repeating it", () => {
    const problem = keyProblem("svc_test_secret\nvalue", "--api-key");
    expect(problem).toContain("--api-key");
    expect(problem).not.toContain("secret");
  });
});
