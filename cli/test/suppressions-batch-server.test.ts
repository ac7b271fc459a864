import { describe, expect, it } from "vitest";
import type { Suppression } from "mailroom";
import type { SuppressionImport } from "../src/commands/suppression-import.js";
import { problemOf, runCli, useTestServer } from "./helpers.js";

/*
 * `mailroom suppressions create-batch` against the real server (SQLite), in process: a file of
 * more than one request's worth, what is stored, and what a rerun under the same key answers.
 */
let env: Record<string, string>;
let mailroom: { get: <T>(path: string) => Promise<T> };
useTestServer((started) => ({ env, mailroom } = started));

// 1,200 addresses (two requests), one that is not an address, and one given twice.
const CSV = [
  "email,reason,detail",
  ...Array.from({ length: 1_200 }, (_, index) => `reader${index}@example.org,unsubscribe,`),
  'not-an-address,,"From the old provider, row 1,202"',
  "ada@example.com,complaint,Reported as spam",
  "ADA@example.com,,",
].join("\n");
const files = { "export.csv": CSV };

describe("mailroom suppressions create-batch against the server", () => {
  it("stores every valid address in requests of 1,000, and names the refused one by its line", async () => {
    const result = await runCli(["suppressions", "create-batch", "--file", "export.csv", "--idempotency-key", "import-1"], { env, files });

    expect(result.code).toBe(1);
    const output = result.json<SuppressionImport>();
    expect(output.counts).toEqual({ total: 1_203, added: 1_201, already_suppressed: 1, refused: 1 });
    expect(output.refused).toEqual([{ index: 1_200, line: 1_202, email: "not-an-address", error: expect.objectContaining({ code: "validation_failed", errors: [expect.objectContaining({ pointer: "/email" })] }) }]);
    expect(problemOf(result)).toEqual({ error: "refused", message: "1 of 1,203 addresses refused (line 1202).", refused: [1_200], lines: [1_202] });
    // The second spelling of Ada's address, in the second request, found the first one.
    expect(output.data.at(-1)).toMatchObject({ line: 1_204, status: 200, suppression: { email: "ada@example.com", reason: "complaint" } });

    const stored = await mailroom.get<{ data: Suppression[] }>("/v1/suppressions?email=reader1100%40example.org");
    expect(stored.data).toMatchObject([{ email: "reader1100@example.org", reason: "unsubscribe", detail: null }]);
  });

  it("answers a rerun under the same key from the first run's answers, adding nothing", async () => {
    const again = await runCli(["suppressions", "import", "--file", "export.csv", "--idempotency-key", "import-1"], { env, files });

    expect(again.json<SuppressionImport>().counts).toEqual({ total: 1_203, added: 1_201, already_suppressed: 1, refused: 1 });
  });

  it("finds every address already suppressed when run under another key", async () => {
    const other = await runCli(["suppressions", "import", "--file", "export.csv", "--idempotency-key", "import-2"], { env, files, tty: true });

    expect(other.code).toBe(1);
    expect(other.stdout).toMatch(/^1,203 addresses: 0 added, 1,202 already suppressed, 1 refused\.$/m);
    expect(other.stdout).toMatch(/^1202\s+not-an-address\s+validation_failed: \/email /m);
  });
});
