import { describe, expect, it } from "vitest";
import type { Message, MessagePreview } from "mailroom";
import { type FileServer, FROM, problemOf, runCli, useTestServer } from "./helpers.js";

let env: Record<string, string>;
let mailroom: FileServer["mailroom"];
useTestServer((started) => ({ env, mailroom } = started));

/** How many messages the test workspace's sandbox holds. */
const storedMessageCount = async () => (await mailroom.get<{ data: unknown[] }>("/v1/messages?limit=100")).data.length;

const CONTENT = ["--from", FROM, "--to", "ada@example.com", "--to", "bounced@simulator.test", "--subject", "Welcome", "--html", "<p>Hi Ada</p>"];

describe("mailroom messages preview", () => {
  it("prints the preview as the API answered it, and sends and stores nothing", async () => {
    const result = await runCli(["messages", "preview", ...CONTENT], { env });
    expect(result.code, result.stderr).toBe(0);
    const preview = result.json<MessagePreview>();
    expect(preview).toMatchObject({ object: "message_preview", subject: "Welcome", text: "Hi Ada", to: ["ada@example.com", "bounced@simulator.test"] });
    expect(preview.recipients.map((r) => r.simulated_outcome)).toEqual(["delivered", "bounced"]);
    expect(await storedMessageCount()).toBe(0);
  });

  it("is what send --dry-run does", async () => {
    const dryRun = await runCli(["send", "--dry-run", ...CONTENT], { env });
    expect(dryRun.code, dryRun.stderr).toBe(0);
    expect(dryRun.json<MessagePreview>().object).toBe("message_preview");
    expect(await storedMessageCount()).toBe(0);
  });

  it("shows a person who would get it, and its text, on a terminal", async () => {
    const result = await runCli(["send", "--dry-run", ...CONTENT], { env, tty: true });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^subject +Welcome$/m);
    expect(result.stdout).toMatch(/^ada@example\.com +to +be simulated: delivered$/m);
    expect(result.stdout).toMatch(/^bounced@simulator\.test +to +be simulated: bounced$/m);
    expect(result.stdout).toContain("Hi Ada");
    expect(result.stderr).toContain("Nothing was sent.");
  });

  it("prints only the RFC 5322 source with --mime", async () => {
    const result = await runCli(["messages", "preview", ...CONTENT, "--mime"], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^From: .*hello@acme\.example/m);
    expect(result.stdout).toMatch(/^Subject: Welcome\r$/m);
    expect(result.stdout).toContain("Content-Type: multipart/alternative");
  });

  it("prints only the RFC 5322 source with send --dry-run --mime, as cli/README.md shows", async () => {
    const result = await runCli(["send", "--dry-run", ...CONTENT, "--mime"], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Subject: Welcome\r$/m);
    expect(await storedMessageCount()).toBe(0);
  });

  it("refuses --mime with --json, exit 2, naming both, rather than print a source where JSON was asked for", async () => {
    for (const command of [["messages", "preview"], ["send", "--dry-run"]]) {
      const result = await runCli([...command, ...CONTENT, "--mime", "--json"], { env, tty: true });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stdout).toBe("");
      expect(problemOf(result)).toEqual({ error: "usage", message: expect.stringMatching(/--mime.*--json|--json.*--mime/) });
    }
  });

  it("refuses --mime on a send that is not a dry run, with exit 2, and sends nothing", async () => {
    for (const command of [["send"], ["messages", "create"]]) {
      const result = await runCli([...command, ...CONTENT, "--mime"], { env });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain("--mime shows what a dry run would send: add --dry-run");
    }
    expect(await storedMessageCount()).toBe(0);
  });

  it("exits 1 with the API's problem for a body a send would refuse", async () => {
    const result = await runCli(["messages", "preview", "--from", FROM, "--to", "not-an-address", "--subject", "x", "--text", "x"], { env });
    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 422, code: "validation_failed" });
    expect(await storedMessageCount()).toBe(0);
  });
});

// Last in the file: these send a message, and the tests above count the stored ones.
describe("mailroom send --dry-run --idempotency-key", () => {
  it("does not spend the key on the preview, so the send it suggests, with the same flags, goes through", async () => {
    const flags = [...CONTENT, "--idempotency-key", "dry-run-then-send"];

    const dryRun = await runCli(["send", "--dry-run", ...flags], { env });
    const send = await runCli(["send", ...flags], { env });

    expect(dryRun.code, dryRun.stderr).toBe(0);
    expect(send.code, send.stderr).toBe(0);
    expect(send.json<Message>()).toMatchObject({ object: "message", subject: "Welcome" });
  });

  it("previews the flags given each time, never an earlier preview's answer for the same key", async () => {
    const first = await runCli(["send", "--dry-run", ...CONTENT, "--idempotency-key", "two-dry-runs"], { env });
    const second = await runCli(["send", "--dry-run", ...CONTENT.map((flag) => (flag === "Welcome" ? "Changed" : flag)), "--idempotency-key", "two-dry-runs"], { env });

    expect(first.code, first.stderr).toBe(0);
    expect(second.code, second.stderr).toBe(0);
    expect(second.json<MessagePreview>().subject).toBe("Changed");
  });
});
