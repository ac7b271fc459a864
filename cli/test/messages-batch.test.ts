import { describe, expect, it } from "vitest";
import type { Message, MessageBatch } from "mailroom";
import { contractExample, problemBody, problemOf, runCli, stubApi } from "./helpers.js";

/*
 * `mailroom messages create-batch` against a stand-in for the API: how the batch is read (a file
 * or stdin, wrapped or a bare array), what is sent, and what is printed and answered when some
 * messages are refused.
 */
const env = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };
const mixed = contractExample<MessageBatch>("MessageBatch");
const [acceptedItem] = mixed.data;
const accepted = acceptedItem?.message as Message;
const messages = [
  { to: "ada@example.com", subject: "Your receipt", html: "<p>Thanks, Ada</p>" },
  { to: "grace@example.com", subject: "Your receipt", html: "<p>Thanks, Grace</p>", expires_at: "2026-12-01T09:00:00Z" },
];
const allAccepted: MessageBatch = {
  object: "batch",
  data: messages.map((_message, index) => ({ index, status: 202, message: { ...accepted, id: `msg_${index}` }, error: null })),
};
const files = { "batch.json": JSON.stringify({ messages }), "array.json": JSON.stringify(messages) };

describe("mailroom messages create-batch", () => {
  it("sends the batch in --file, with an Idempotency-Key, and prints the API's answer", async () => {
    const api = stubApi(200, allAccepted);

    const result = await runCli(["messages", "create-batch", "--file", "batch.json"], { env, files, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<MessageBatch>()).toEqual(allAccepted);
    expect(result.stderr).toBe("");
    expect(api.seen).toEqual([{ method: "POST", target: "/v1/messages/batch", authorization: "Bearer svc_test_stub", idempotencyKey: expect.any(String), body: { messages } }]);
  });

  it("asks for an all-or-nothing batch with --strict, and exits 1 with the API's problem when it is rejected", async () => {
    const accepting = stubApi(200, allAccepted);
    await runCli(["messages", "create-batch", "--file", "batch.json", "--strict"], { env, files, fetch: accepting.fetch });
    expect(accepting.seen[0]?.body).toEqual({ messages, validation: "strict" });

    const rejected = { type: "https://mailroom.dev/problems/batch_rejected", title: "Batch rejected", status: 422, detail: "The batch is strict and message 1 would be refused, so none was accepted.", code: "batch_rejected", request_id: "req_1", errors: [{ pointer: "/messages/1/to", message: "bad" }] };
    const result = await runCli(["messages", "create-batch", "--file", "batch.json", "--strict"], { env, files, fetch: stubApi(422, rejected).fetch });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("batch_rejected");
    expect(result.stderr).toContain("/messages/1/to");
  });

  it("takes a bare array of messages as the batch", async () => {
    const api = stubApi(200, allAccepted);

    await runCli(["messages", "create-batch", "--file", "array.json"], { env, files, fetch: api.fetch });

    expect(api.seen[0]?.body).toEqual({ messages });
  });

  it("reads the batch from stdin with --file -", async () => {
    const api = stubApi(200, allAccepted);

    const result = await runCli(["messages", "batch", "--file", "-"], { env, stdin: JSON.stringify(messages), fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen[0]?.body).toEqual({ messages });
  });

  it("sends the --idempotency-key given, so that running it again sends nothing twice", async () => {
    const api = stubApi(200, allAccepted);

    await runCli(["messages", "create-batch", "--file", "batch.json", "--idempotency-key", "receipts-2026-11-21"], { env, files, fetch: api.fetch });

    expect(api.seen[0]?.idempotencyKey).toBe("receipts-2026-11-21");
  });

  it("prints each message's index, status and id on a terminal, and the count of each", async () => {
    const result = await runCli(["messages", "create-batch", "--file", "batch.json"], { env, files, tty: true, fetch: stubApi(200, allAccepted).fetch });

    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^INDEX\s+STATUS\s+ID\s+ERROR$/);
    expect(lines.slice(1, 3).map((line) => line.split(/\s+/))).toEqual([
      ["0", "202", "msg_0"],
      ["1", "202", "msg_1"],
    ]);
    expect(result.stdout).toMatch(/\n\n2 accepted, 0 refused\.\n$/);
  });

  describe("when the API refuses some of the messages", () => {
    it("prints the whole answer and exits 1, naming the refused messages on stderr", async () => {
      const result = await runCli(["messages", "create-batch", "--file", "batch.json"], { env, files, fetch: stubApi(200, mixed).fetch });

      expect(result.code).toBe(1);
      expect(result.json<MessageBatch>()).toEqual(mixed);
      expect(problemOf(result)).toEqual({ error: "refused", message: "1 of 2 messages refused (index 1).", refused: [1] });
    });

    it("shows why each was refused on a terminal, field by field", async () => {
      const result = await runCli(["messages", "create-batch", "--file", "batch.json"], { env, files, tty: true, fetch: stubApi(200, mixed).fetch });

      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(new RegExp(`^0\\s+202\\s+${accepted.id}$`, "m"));
      expect(result.stdout).toMatch(/^1\s+422\s+validation_failed: \/to "grace@" is not a valid email address$/m);
      expect(result.stdout).toContain("\n\n1 accepted, 1 refused.\n");
      expect(result.stderr).toBe("1 of 2 messages refused (index 1).\n");
    });
  });

  describe("a batch that cannot be sent", () => {
    it.each([
      ["not JSON", "{ messages: ", /^--file: bad\.json is not JSON \(/],
      ["an object without messages", JSON.stringify({ to: "ada@example.com" }), /^--file: bad\.json holds neither \{ "messages": \[\.\.\.\] \} nor an array of messages\.$/],
      ["empty", "", /^--file: bad\.json is not JSON \(/],
      ["an empty batch", "[]", /^--file: a batch holds 1 to 100 messages; bad\.json has 0\.$/],
      ["more than 100 messages", JSON.stringify(Array.from({ length: 101 }, () => messages[0])), /^--file: a batch holds 1 to 100 messages; bad\.json has 101\.$/],
    ])("exits 2 for a file that is %s, sending nothing", async (_what, content, message) => {
      const api = stubApi(200, allAccepted);

      const result = await runCli(["messages", "create-batch", "--file", "bad.json"], { env, files: { "bad.json": content }, fetch: api.fetch });

      expect(result.code).toBe(2);
      expect(problemOf(result)).toMatchObject({ error: "usage", message: expect.stringMatching(message) });
      expect(api.seen).toEqual([]);
    });

    it("exits 2 for a file that cannot be read, naming it", async () => {
      const api = stubApi(200, allAccepted);

      const result = await runCli(["messages", "create-batch", "--file", "/nonexistent/batch.json"], { env, fetch: api.fetch });

      expect(result.code).toBe(2);
      expect(problemOf(result).message).toBe("--file: cannot read /nonexistent/batch.json (ENOENT).");
      expect(api.seen).toEqual([]);
    });

    it("exits 2 without --file", async () => {
      const result = await runCli(["messages", "create-batch"], { env, fetch: stubApi(200, allAccepted).fetch });

      expect(result.code).toBe(2);
      expect(problemOf(result).message).toContain("Give the batch with --file <path>, or --file - for stdin.");
    });

    it("exits 1 with the API's problem when it refuses the batch as a whole", async () => {
      const result = await runCli(["messages", "create-batch", "--file", "batch.json"], { env, files, fetch: stubApi(400, problemBody(400, "invalid_json")).fetch });

      expect(result.code).toBe(1);
      expect(result.stdout).toBe("");
      expect(problemOf(result)).toMatchObject({ status: 400, code: "invalid_json" });
    });
  });

  it("shows its flags and examples on --help", async () => {
    const result = await runCli(["messages", "create-batch", "--help"], { env: {} });

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ +--file +The batch: /m);
    expect(result.stdout).toContain("Examples:\n  mailroom messages create-batch --file batch.json");
  });
});
