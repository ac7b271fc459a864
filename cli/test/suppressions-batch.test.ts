import { describe, expect, it } from "vitest";
import type { CreateSuppressionParams, Suppression, SuppressionBatch, SuppressionBatchItem } from "mailroom";
import type { SuppressionImport } from "../src/commands/suppression-import.js";
import { contractExample, problemBody, problemOf, runCli, stubApi, type Seen } from "./helpers.js";

/*
 * `mailroom suppressions create-batch` (alias `import`) against a stand-in for the API that
 * answers createSuppressionBatch as the contract says: how the file is read (CSV, one address per
 * line, JSON; a file or stdin), how the addresses are split into requests and keyed, and what is
 * printed and answered when some are refused.
 */
const env = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };
const [, { suppression: existing }] = contractExample<SuppressionBatch>("SuppressionBatch").data as [SuppressionBatchItem, SuppressionBatchItem];
const KEY = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}#\d+$/;

/**
 * The API's answer for one request: 422 for an address without an @ or a reason it lacks, 200 for
 * one suppressed before (`already`, or earlier in this or an earlier request), 201 otherwise.
 */
function suppressionApi(already: string[] = []) {
  const suppressed = new Set(already);
  const answer = (body: { suppressions: CreateSuppressionParams[] }): SuppressionBatch => ({
    object: "batch",
    data: body.suppressions.map((item, index) => {
      const pointer = !/^[^@\s]+@[^@\s]+$/.test(item.email) ? "/email" : item.reason && !["manual", "unsubscribe", "complaint"].includes(item.reason) ? "/reason" : null;
      if (pointer) {
        const message = pointer === "/email" ? `"${item.email}" is not a valid email address` : "must be one of manual, unsubscribe, complaint";
        return { index, status: 422, suppression: null, error: problemBody(422, "validation_failed", { errors: [{ location: "body", pointer, message }] }) };
      }
      const status = suppressed.has(item.email) ? 200 : 201;
      suppressed.add(item.email);
      const suppression: Suppression = { ...(existing as Suppression), id: `sup_${item.email}`, email: item.email, reason: item.reason ?? "manual", detail: item.detail ?? null, message_id: null };
      return { index, status, suppression, error: null };
    }),
  });
  // The stand-in records each request before it answers, so the last one seen is the one to answer.
  const api: ReturnType<typeof stubApi> = stubApi(() => ({ status: 200, body: answer(api.seen.at(-1)?.body as { suppressions: CreateSuppressionParams[] }) }));
  return api;
}

const sent = (seen: Seen[]) => seen.flatMap((request) => (request.body as { suppressions: CreateSuppressionParams[] }).suppressions);
const manyAddresses = (count: number) => Array.from({ length: count }, (_, index) => `reader${index}@example.org`).join("\n");

const CSV = [
  "Email,Reason,Detail,Created",
  'ada@example.com,unsubscribe,"Lovelace, Ada: ""stop writing""",2026-01-02',
  "grace@example.com,,,2026-01-03",
  'linus@example.com,Complaint,"Reported twice',
  'by the same person",2026-01-04',
].join("\r\n");

describe("mailroom suppressions create-batch", () => {
  it("imports a CSV by its header's email, reason and detail columns in one request, with a key of its own, and prints the counts and every answer", async () => {
    const api = suppressionApi();

    const result = await runCli(["suppressions", "create-batch", "--file", "export.csv"], { env, files: { "export.csv": CSV }, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen).toEqual([{ method: "POST", target: "/v1/suppressions/batch", authorization: "Bearer svc_test_stub", idempotencyKey: expect.stringMatching(KEY), body: expect.any(Object) }]);
    expect(api.seen[0]?.idempotencyKey).toMatch(/#1$/);
    expect(sent(api.seen)).toEqual([
      { email: "ada@example.com", reason: "unsubscribe", detail: 'Lovelace, Ada: "stop writing"' },
      { email: "grace@example.com" },
      { email: "linus@example.com", reason: "complaint", detail: "Reported twice\nby the same person" },
    ]);
    const output = result.json<SuppressionImport>();
    expect(output.idempotency_key).toBe(api.seen[0]?.idempotencyKey?.replace(/#1$/, ""));
    expect(output.counts).toEqual({ total: 3, added: 3, already_suppressed: 0, refused: 0 });
    expect(output.refused).toEqual([]);
    expect(output.data.map((item) => [item.index, item.line, item.email, item.status, item.suppression?.email])).toEqual([
      [0, 2, "ada@example.com", 201, "ada@example.com"],
      [1, 3, "grace@example.com", 201, "grace@example.com"],
      [2, 4, "linus@example.com", 201, "linus@example.com"],
    ]);
    expect(result.stderr).toBe("");
  });

  it("reads one address per line, leaving out blank lines and # comments, and gives each the --reason", async () => {
    const api = suppressionApi();
    const text = "# unsubscribed in the old tool\nada@example.com\n\n  grace@example.com  \n# end\n";

    const result = await runCli(["suppressions", "import", "--file", "unsubscribed.txt", "--reason", "unsubscribe"], { env, files: { "unsubscribed.txt": text }, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(sent(api.seen)).toEqual([
      { email: "ada@example.com", reason: "unsubscribe" },
      { email: "grace@example.com", reason: "unsubscribe" },
    ]);
    expect(result.json<SuppressionImport>().data.map((item) => item.line)).toEqual([2, 4]);
  });

  it("gives --reason only to CSV rows and JSON items that name none", async () => {
    const api = suppressionApi();
    const json = JSON.stringify({ suppressions: [{ email: "ada@example.com", reason: "unsubscribe" }, { email: "grace@example.com", detail: "Asked by phone" }] });

    await runCli(["suppressions", "create-batch", "--file", "export.csv", "--reason", "complaint"], { env, files: { "export.csv": CSV }, fetch: api.fetch });
    await runCli(["suppressions", "create-batch", "--file", "batch.json", "--reason", "complaint"], { env, files: { "batch.json": json }, fetch: api.fetch });

    expect(sent(api.seen).map((item) => [item.email, item.reason])).toEqual([
      ["ada@example.com", "unsubscribe"],
      ["grace@example.com", "complaint"],
      ["linus@example.com", "complaint"],
      ["ada@example.com", "unsubscribe"],
      ["grace@example.com", "complaint"],
    ]);
    expect(sent(api.seen)[4]).toEqual({ email: "grace@example.com", detail: "Asked by phone", reason: "complaint" });
  });

  it("takes createSuppressionBatch's own JSON, or a bare array of its items, and places them by index", async () => {
    const api = suppressionApi();
    const items = [{ email: "ada@example.com" }, { email: "grace@example.com", reason: "unsubscribe" }];

    const wrapped = await runCli(["suppressions", "create-batch", "--file", "batch.json"], { env, files: { "batch.json": JSON.stringify({ suppressions: items }) }, fetch: api.fetch });
    const bare = await runCli(["suppressions", "create-batch", "--file", "-"], { env, stdin: JSON.stringify(items), fetch: api.fetch });

    expect([wrapped.code, bare.code]).toEqual([0, 0]);
    expect(api.seen.map((request) => request.body)).toEqual([{ suppressions: items }, { suppressions: items }]);
    expect(wrapped.json<SuppressionImport>().data.map((item) => [item.index, item.line])).toEqual([
      [0, null],
      [1, null],
    ]);
  });

  it("tells the format of stdin by its content: CSV by its header, else one address per line", async () => {
    const api = suppressionApi();

    await runCli(["suppressions", "import", "--file", "-"], { env, stdin: "email,reason\nada@example.com,unsubscribe\n", fetch: api.fetch });
    await runCli(["suppressions", "import", "--file", "-"], { env, stdin: "EMAIL\ngrace@example.com\n", fetch: api.fetch });
    await runCli(["suppressions", "import", "--file", "-"], { env, stdin: "linus@example.com\nmargaret@example.com\n", fetch: api.fetch });
    // A comment, even with a comma in it, exists only in a list of addresses.
    await runCli(["suppressions", "import", "--file", "-"], { env, stdin: "# exported 2026-11-22, by hand\nbarbara@example.com\n", fetch: api.fetch });

    expect(sent(api.seen)).toEqual([
      { email: "ada@example.com", reason: "unsubscribe" },
      { email: "grace@example.com" },
      { email: "linus@example.com" },
      { email: "margaret@example.com" },
      { email: "barbara@example.com" },
    ]);
  });

  it("leaves out the empty rows a spreadsheet exports (,, or a blank line), and points at the others' lines", async () => {
    const api = suppressionApi();
    const text = ["email,reason", "ada@example.com,unsubscribe", ",", "grace@example.com,", ",,", ",,", ""].join("\r\n");

    const result = await runCli(["suppressions", "import", "--file", "export.csv"], { env, files: { "export.csv": text }, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(sent(api.seen)).toEqual([{ email: "ada@example.com", reason: "unsubscribe" }, { email: "grace@example.com" }]);
    expect(result.json<SuppressionImport>().data.map((item) => item.line)).toEqual([2, 4]);
  });

  it("reads a CSV saved with a byte order mark", async () => {
    const api = suppressionApi();

    const result = await runCli(["suppressions", "import", "--file", "excel.csv"], { env, files: { "excel.csv": "\uFEFFemail\r\nada@example.com\r\n" }, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(sent(api.seen)).toEqual([{ email: "ada@example.com" }]);
  });

  describe("a file of more than 1,000 addresses", () => {
    const files = { "readers.txt": manyAddresses(2_500) };

    it("is sent in requests of 1,000, in order, each under <key>#<request number>", async () => {
      const api = suppressionApi();

      const result = await runCli(["suppressions", "import", "--file", "readers.txt", "--idempotency-key", "import-2026-11-22"], { env, files, fetch: api.fetch });

      expect(result.code, result.stderr).toBe(0);
      expect(api.seen.map((request) => [request.idempotencyKey, (request.body as { suppressions: unknown[] }).suppressions.length])).toEqual([
        ["import-2026-11-22#1", 1000],
        ["import-2026-11-22#2", 1000],
        ["import-2026-11-22#3", 500],
      ]);
      const output = result.json<SuppressionImport>();
      expect(output.counts).toEqual({ total: 2500, added: 2500, already_suppressed: 0, refused: 0 });
      // Placed in the file, not in their request: the 1,501st address is on line 1,501.
      expect(output.data[1500]).toMatchObject({ index: 1500, line: 1501, email: "reader1500@example.org", status: 201 });
      expect(result.stderr).toBe("");
    });

    it("shows progress on stderr when it is a terminal, with the key to resume with when none was given", async () => {
      const api = suppressionApi();

      const result = await runCli(["suppressions", "import", "--file", "readers.txt"], { env, files, tty: true, fetch: api.fetch });

      expect(result.code, result.stderr).toBe(0);
      const key = api.seen[0]?.idempotencyKey?.replace(/#1$/, "");
      expect(result.stderr.split("\n")).toEqual([
        `2,500 addresses, in 3 requests of up to 1,000; if it stops, run the same command on the same file with --idempotency-key ${key} to finish.`,
        "1,000 / 2,500 addresses",
        "2,000 / 2,500 addresses",
        "2,500 / 2,500 addresses",
        "",
      ]);
      expect(result.stdout).toBe("2,500 addresses: 2,500 added, 0 already suppressed, 0 refused.\n");
    });

    it("says how to finish when a request fails part way, and exits 1 with the API's problem", async () => {
      const failing = stubApi((request) => (request.headers.get("idempotency-key")?.endsWith("#2") ? { status: 400, body: problemBody(400, "invalid_request") } : { status: 200, body: { object: "batch", data: [] } }));

      const result = await runCli(["suppressions", "import", "--file", "readers.txt", "--idempotency-key", "import-1"], { env, files, tty: true, fetch: failing.fetch });

      expect(result.code).toBe(1);
      expect(failing.seen).toHaveLength(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain("Stopped at 1,000 / 2,500 addresses: run the same command on the same file to finish; the requests already answered are not sent again.\n");
      expect(result.stderr).toContain("Error: 400 invalid_request: Detail of invalid_request.");
    });

    it("sends each request under the same key when run again with the same key, for the server to replay", async () => {
      const api = suppressionApi();

      await runCli(["suppressions", "import", "--file", "readers.txt", "--idempotency-key", "k"], { env, files, fetch: api.fetch });
      await runCli(["suppressions", "import", "--file", "readers.txt", "--idempotency-key", "k"], { env, files, fetch: api.fetch });

      expect(api.seen.map((request) => request.idempotencyKey)).toEqual(["k#1", "k#2", "k#3", "k#1", "k#2", "k#3"]);
      expect(api.seen[3]?.body).toEqual(api.seen[0]?.body);
    });
  });

  describe("when the API refuses some of the addresses", () => {
    const files = { "export.csv": "email,reason\nada@example.com\nnot-an-address\ngrace@example.com,hard_bounce\nada@example.com\n" };

    it("prints the counts, the refused addresses with their line and every answer, and exits 1 naming their lines on stderr", async () => {
      const result = await runCli(["suppressions", "create-batch", "--file", "export.csv"], { env, files, fetch: suppressionApi().fetch });

      expect(result.code).toBe(1);
      const output = result.json<SuppressionImport>();
      expect(output.counts).toEqual({ total: 4, added: 1, already_suppressed: 1, refused: 2 });
      expect(output.refused).toEqual([
        { index: 1, line: 3, email: "not-an-address", error: expect.objectContaining({ code: "validation_failed", errors: [expect.objectContaining({ pointer: "/email" })] }) },
        { index: 2, line: 4, email: "grace@example.com", error: expect.objectContaining({ errors: [expect.objectContaining({ pointer: "/reason" })] }) },
      ]);
      expect(output.data.map((item) => item.status)).toEqual([201, 422, 422, 200]);
      expect(problemOf(result)).toEqual({ error: "refused", message: "2 of 4 addresses refused (lines 3, 4).", refused: [1, 2], lines: [3, 4] });
    });

    it("shows each refused address's line, the address and the problem on a terminal", async () => {
      const result = await runCli(["suppressions", "create-batch", "--file", "export.csv"], { env, files, tty: true, fetch: suppressionApi().fetch });

      expect(result.code).toBe(1);
      const lines = result.stdout.trimEnd().split("\n");
      expect(lines[0]).toBe("4 addresses: 1 added, 1 already suppressed, 2 refused.");
      expect(lines[2]).toMatch(/^LINE\s+EMAIL\s+PROBLEM$/);
      expect(lines[3]).toMatch(/^3\s+not-an-address\s+validation_failed: \/email "not-an-address" is not a valid email address$/);
      expect(lines[4]).toMatch(/^4\s+grace@example\.com\s+validation_failed: \/reason must be one of manual, unsubscribe, complaint$/);
      expect(result.stderr).toBe("2 of 4 addresses refused (lines 3, 4).\n");
    });

    it("names the first ten refused lines on stderr, and counts the rest", async () => {
      const text = Array.from({ length: 12 }, (_, index) => `bad-${index}`).join("\n");

      const result = await runCli(["suppressions", "create-batch", "--file", "bad.txt"], { env, files: { "bad.txt": text }, tty: true, fetch: suppressionApi().fetch });

      expect(result.stderr).toBe("12 of 12 addresses refused (lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 2 more).\n");
    });

    it("names a JSON file's refused items by index", async () => {
      const json = JSON.stringify([{ email: "ada@example.com" }, { email: "ada@" }]);

      const result = await runCli(["suppressions", "create-batch", "--file", "batch.json"], { env, files: { "batch.json": json }, tty: true, fetch: suppressionApi().fetch });

      expect(result.stdout).toMatch(/^INDEX\s+EMAIL\s+PROBLEM\n1\s+ada@\s+/m);
      expect(result.stderr).toBe("1 of 2 addresses refused (index 1).\n");
    });
  });

  describe("a file that cannot be sent", () => {
    it.each([
      ["a CSV without an email column", "export.csv", "address,reason\nada@example.com,manual\n", /^--file: export\.csv: no column is named "email" \(the header row: address, reason\); a CSV list starts with a header row/],
      ["a CSV with only its header", "export.csv", "email,reason\n", /^--file: export\.csv holds no addresses\.$/],
      ["an empty CSV", "export.csv", "\n\n", /^--file: export\.csv holds no addresses\.$/],
      ["a CSV whose quote is not closed", "export.csv", 'email,detail\nada@example.com,"open\n', /^--file: export\.csv: line 2: a quoted field is not closed\.$/],
      ["only comments and blank lines", "list.txt", "# nothing yet\n\n", /^--file: list\.txt holds no addresses\.$/],
      ["empty", "list", "", /^--file: list holds no addresses\.$/],
      ["JSON that is not JSON", "batch.json", "{ suppressions: ", /^--file: batch\.json is not JSON \(/],
      ["JSON without suppressions", "batch.json", JSON.stringify({ messages: [] }), /^--file: batch\.json holds neither \{ "suppressions": \[\.\.\.\] \} nor an array of suppressions\.$/],
      ["an empty JSON array", "batch.json", "[]", /^--file: batch\.json holds no addresses\.$/],
      ["JSON with an item that is not an object", "batch.json", JSON.stringify([{ email: "ada@example.com" }, "grace@example.com"]), /^--file: batch\.json: item 1 is not an object such as \{ "email": "ada@example\.com" \}\.$/],
    ])("exits 2 for %s, sending nothing", async (_what, name, content, message) => {
      const api = suppressionApi();

      const result = await runCli(["suppressions", "create-batch", "--file", name], { env, files: { [name]: content }, fetch: api.fetch });

      expect(result.code).toBe(2);
      expect(problemOf(result)).toMatchObject({ error: "usage", message: expect.stringMatching(message) });
      expect(api.seen).toEqual([]);
    });

    it("exits 2 for a file that cannot be read, naming it", async () => {
      const api = suppressionApi();

      const result = await runCli(["suppressions", "create-batch", "--file", "/nonexistent/suppressed.csv"], { env, fetch: api.fetch });

      expect(result.code).toBe(2);
      expect(problemOf(result).message).toBe("--file: cannot read /nonexistent/suppressed.csv (ENOENT).");
      expect(api.seen).toEqual([]);
    });

    it("exits 2 without --file, or with a --reason only Mailroom records", async () => {
      const api = suppressionApi();

      const missing = await runCli(["suppressions", "create-batch"], { env, fetch: api.fetch });
      const hardBounce = await runCli(["suppressions", "create-batch", "--file", "list.txt", "--reason", "hard_bounce"], { env, files: { "list.txt": "ada@example.com" }, fetch: api.fetch });

      expect([missing.code, hardBounce.code]).toEqual([2, 2]);
      expect(problemOf(missing).message).toContain("Give the addresses with --file <path>, or --file - for stdin.");
      expect(api.seen).toEqual([]);
    });

    it("exits 2 for an --idempotency-key too long to number its requests", async () => {
      const api = suppressionApi();

      const result = await runCli(["suppressions", "create-batch", "--file", "list.txt", "--idempotency-key", "k".repeat(254)], { env, files: { "list.txt": "ada@example.com" }, fetch: api.fetch });

      expect(result.code).toBe(2);
      expect(problemOf(result).message).toBe('--idempotency-key: at most 253 characters for this file, since "#1" is added to it.');
      expect(api.seen).toEqual([]);
    });

    it("exits 1 with the API's problem when it refuses the batch as a whole", async () => {
      const result = await runCli(["suppressions", "create-batch", "--file", "list.txt"], { env, files: { "list.txt": "ada@example.com" }, fetch: stubApi(403, problemBody(403, "insufficient_permission")).fetch });

      expect(result.code).toBe(1);
      expect(result.stdout).toBe("");
      expect(problemOf(result)).toMatchObject({ status: 403, code: "insufficient_permission" });
    });
  });

  it("shows its flags and examples on --help", async () => {
    const result = await runCli(["suppressions", "create-batch", "--help"], { env: {} });

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ +--file +The addresses: CSV with a header row naming an email column/m);
    expect(result.stdout.replace(/\s+/g, " ")).toContain('--reason The reason for addresses the file gives none (default manual) [string] [choices: "manual", "unsubscribe", "complaint"]');
    // yargs wraps a long example within its column, so only where each starts is checked.
    const examples = result.stdout.slice(result.stdout.indexOf("Examples:"));
    expect(examples).toMatch(/^ {2}mailroom suppressions create-batch --file +A CSV export with an email column$/m);
    expect(examples).toMatch(/^ {2}mailroom suppressions import --file +One address per line/m);
  });
});
