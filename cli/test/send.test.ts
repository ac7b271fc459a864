import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import type { Message } from "mailroom";
import { Mailroom } from "../../sdk/src/index.js";
import type { TestServer } from "../../test/helpers/http-server.js";
import { type FileServer, FROM, cliEnv, problemOf, runCli, stubApi, useTestServer } from "./helpers.js";

let server: TestServer;
let env: Record<string, string>;
let mailroom: FileServer["mailroom"];
useTestServer((started) => ({ server, env, mailroom } = started));

/** The message as the API stores it, read without the CLI. */
const getMessage = (id: string) => mailroom.get<Message>(`/v1/messages/${id}`);

/** How many messages the test workspace's sandbox holds. */
const storedMessageCount = async () => (await mailroom.get<{ data: unknown[] }>("/v1/messages?limit=100")).data.length;

const send = (...flags: string[]) => runCli(["send", "--from", FROM, ...flags], { env });

describe("mailroom send", () => {
  it("sends a message with only --to, --subject and --html, and prints the accepted message as the API answered it", async () => {
    const result = await runCli(["send", "--from", FROM, "--to", "ada@example.com", "--subject", "Welcome", "--html", "<p>Hi Ada</p>"], { env });

    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    const message = result.json<Message>();
    expect(message).toMatchObject({ object: "message", status: "queued", to: ["ada@example.com"], subject: "Welcome", html: "<p>Hi Ada</p>" });
    expect(message.id).toMatch(/^msg_/);
    expect(message).toEqual(await getMessage(message.id));
  });

  it("maps every content and addressing flag to its API field", async () => {
    const result = await send(
      "--to", "ada@example.com",
      "--cc", "grace@example.com",
      "--bcc", "alan@example.com",
      "--reply-to", "support@acme.example",
      "--subject", "Receipt",
      "--html", "<p>Thanks</p>",
      "--text", "Thanks",
      "--tag", "receipt", "--tag", "eu",
      "--header", "X-Campaign: spring",
      "--metadata", "order_id=1234", "--metadata", "region=eu",
    );

    expect(result.code, result.stderr).toBe(0);
    const stored = await getMessage(result.json<Message>().id);
    expect(stored).toMatchObject({
      from: FROM,
      to: ["ada@example.com"],
      cc: ["grace@example.com"],
      bcc: ["alan@example.com"],
      reply_to: ["support@acme.example"],
      subject: "Receipt",
      html: "<p>Thanks</p>",
      text: "Thanks",
      tags: ["receipt", "eu"],
      headers: { "X-Campaign": "spring" },
      metadata: { order_id: "1234", region: "eu" },
    });
  });

  it("reads the bodies from --html-file and --text-file", async () => {
    const files = { "welcome.html": "<h1>Welcome</h1>", "welcome.txt": "Welcome, in plain text." };
    const result = await runCli(["send", "--from", FROM, "--to", "ada@example.com", "--subject", "Files", "--html-file", "welcome.html", "--text-file", "welcome.txt"], { env, files });

    expect(result.code, result.stderr).toBe(0);
    expect(await getMessage(result.json<Message>().id)).toMatchObject({ html: "<h1>Welcome</h1>", text: "Welcome, in plain text." });
  });

  it("attaches each --attach file under its base name", async () => {
    const files = { "reports/q3.pdf": Buffer.from("%PDF-1.7 fake report"), "notes.txt": "seven b" };
    const result = await runCli(
      ["send", "--from", FROM, "--to", "ada@example.com", "--subject", "Report", "--text", "Attached", "--attach", "reports/q3.pdf", "--attach", "notes.txt"],
      { env, files },
    );

    expect(result.code, result.stderr).toBe(0);
    const { attachments } = await getMessage(result.json<Message>().id);
    expect(attachments.map(({ filename, size }) => ({ filename, size }))).toEqual([
      { filename: "q3.pdf", size: 20 },
      { filename: "notes.txt", size: 7 },
    ]);
  });

  it("attaches each --attach-url file, fetched by the server, after the --attach files", async () => {
    const files = createServer((_req, res) => res.writeHead(200, { "content-type": "text/csv" }).end("id,total\n1042,12.50\n"));
    await new Promise<void>((resolve) => files.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(files.address() as AddressInfo).port}/exports/orders.csv`;
      const result = await runCli(["send", "--from", FROM, "--to", "ada@example.com", "--subject", "Export", "--text", "Attached", "--attach", "notes.txt", "--attach-url", url], { env, files: { "notes.txt": "seven b" } });
      expect(result.code, result.stderr).toBe(0);
      const { attachments } = await getMessage(result.json<Message>().id);
      expect(attachments.map(({ filename, content_type, size }) => ({ filename, content_type, size }))).toEqual([
        { filename: "notes.txt", content_type: "text/plain", size: 7 },
        { filename: "orders.csv", content_type: "text/csv", size: 20 },
      ]);
    } finally {
      await new Promise((resolve) => files.close(resolve));
    }
  });

  it("splits a comma-separated --to into recipients, keeping a quoted display name with a comma whole", async () => {
    const result = await send("--to", 'ada@example.com, "Hopper, Grace" <grace@example.com>', "--to", "alan@example.com", "--subject", "Hi", "--text", "Hi");

    expect(result.code, result.stderr).toBe(0);
    const { recipients } = await getMessage(result.json<Message>().id);
    expect(recipients.map(({ email, name, type }) => ({ email, name, type }))).toEqual([
      { email: "ada@example.com", name: null, type: "to" },
      { email: "grace@example.com", name: "Hopper, Grace", type: "to" },
      { email: "alan@example.com", name: null, type: "to" },
    ]);
  });

  it("splits a comma-separated --tag into tags", async () => {
    const result = await send("--to", "ada@example.com", "--subject", "Hi", "--text", "Hi", "--tag", "receipt,eu", "--tag", "vip");

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Message>().tags).toEqual(["receipt", "eu", "vip"]);
  });

  it("holds a message sent with --schedule 10m until ten minutes from now", async () => {
    const before = Date.now();
    const result = await send("--to", "ada@example.com", "--subject", "Later", "--text", "Later", "--schedule", "10m");

    expect(result.code, result.stderr).toBe(0);
    const message = result.json<Message>();
    expect(message.status).toBe("scheduled");
    const delay = Date.parse(message.scheduled_at as string) - before;
    expect(delay).toBeGreaterThanOrEqual(10 * 60_000);
    expect(delay).toBeLessThan(10 * 60_000 + 30_000);
  });

  it("answers the first message again when the same --idempotency-key is sent twice, storing one", async () => {
    const flags = ["--to", "ada@example.com", "--subject", "Order 77", "--text", "Shipped", "--idempotency-key", "order-77-shipped"];
    const before = await storedMessageCount();

    const first = await send(...flags);
    const second = await send(...flags);

    expect([first.code, second.code]).toEqual([0, 0]);
    expect(second.json<Message>().id).toBe(first.json<Message>().id);
    expect(first.json<Message>().idempotency_key).toBe("order-77-shipped");
    expect(await storedMessageCount()).toBe(before + 1);
  });

  // A relative time is read anew on each run: the rerun would ask for another time under the same
  // key, and the server would refuse it (422 idempotency_key_reused) although the first run worked.
  it.each([
    ["send --schedule 10m", ["send", "--from", FROM, "--to", "ada@example.com", "--subject", "Hi", "--text", "Hi", "--schedule", "10m"], "--schedule 10m"],
    ["send --expires-at in 1h", ["send", "--from", FROM, "--to", "ada@example.com", "--subject", "Hi", "--text", "Hi", "--expires-at", "in 1h"], "--expires-at in 1h"],
    ["messages reschedule --at 2h", ["messages", "reschedule", "msg_01jc3v6q9k2m8r4t7w0y5z1b3d", "--at", "2h"], "--at 2h"],
    ["api-keys create --expires-at 30d", ["api-keys", "create", "--name", "CI", "--expires-at", "30d"], "--expires-at 30d"],
    ["webhooks replay --since 1d", ["webhooks", "replay", "whk_01jd3k8m2q5v7w9x1y3z5a7b9c", "--since", "1d"], "--since 1d"],
  ])("refuses %s with --idempotency-key, naming an absolute time instead, and sends nothing", async (_case, argv, given) => {
    const stub = stubApi(500, {});

    const result = await runCli([...argv, "--idempotency-key", "run-1"], { env: { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" }, fetch: stub.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toEqual({ error: "usage", message: expect.stringContaining(given) });
    expect(problemOf(result).message).toContain("RFC 3339");
    expect(stub.seen).toEqual([]);
  });

  it("answers the first message again for the same --idempotency-key with an absolute --schedule", async () => {
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const flags = ["--to", "ada@example.com", "--subject", "Later", "--text", "Later", "--schedule", at, "--idempotency-key", "order-78-later"];

    const [first, second] = [await send(...flags), await send(...flags)];

    expect([first.code, second.code], second.stderr).toEqual([0, 0]);
    expect(second.json<Message>().id).toBe(first.json<Message>().id);
  });

  it("reads --html-file - and --text-file - from stdin", async () => {
    const html = await runCli(["send", "--from", FROM, "--to", "ada@example.com", "--subject", "Piped", "--html-file", "-"], { env, stdin: "<p>From stdin</p>" });
    const text = await runCli(["send", "--from", FROM, "--to", "ada@example.com", "--subject", "Piped", "--text-file", "-", "--html", "<p>Hi</p>"], { env, stdin: "From stdin" });

    expect([html.code, text.code], html.stderr + text.stderr).toEqual([0, 0]);
    expect(await getMessage(html.json<Message>().id)).toMatchObject({ html: "<p>From stdin</p>" });
    expect(await getMessage(text.json<Message>().id)).toMatchObject({ html: "<p>Hi</p>", text: "From stdin" });
  });

  it("says on a terminal that the message was accepted and how to follow it", async () => {
    const result = await runCli(["send", "--from", FROM, "--to", "ada@example.com", "--subject", "Hi", "--text", "Hi"], { env, tty: true });

    expect(result.code, result.stderr).toBe(0);
    const id = /^id\s+(msg_\w+)$/m.exec(result.stdout)?.[1];
    expect(id).toBeDefined();
    expect(result.stdout).toContain("RECIPIENT");
    expect(result.stderr).toBe(`Accepted. Follow it with: mailroom messages get ${id}\n`);
    expect(result.stdout).not.toContain("Follow it with");
  });

  it("keeps hints off stdout, and off stderr unless that is a terminal, in human mode too (--no-json | tail)", async () => {
    const flags = ["send", "--from", FROM, "--to", "ada@example.com", "--subject", "Hi", "--text", "Hi", "--no-json"];
    const piped = await runCli(flags, { env, stderrTty: true });
    const logged = await runCli(flags, { env });
    const dryRun = await runCli([...flags, "--dry-run"], { env, stderrTty: true });

    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toMatch(/^id\s+msg_/m);
    expect(piped.stdout).not.toContain("Follow it with");
    expect(piped.stderr).toMatch(/^Accepted\. Follow it with: mailroom messages get msg_\w+\n$/);
    expect(logged.stdout).not.toContain("Follow it with");
    expect(logged.stderr).toBe("");
    expect(dryRun.stdout).not.toContain("Nothing was sent");
    expect(dryRun.stderr).toBe("Nothing was sent. Send it with: mailroom send (the same flags, without --dry-run)\n");
  });

  describe("when the API refuses the message", () => {
    it("exits 1 with the validation problem on stderr, and nothing is stored", async () => {
      const before = await storedMessageCount();

      const result = await send("--to", "not-an-address", "--subject", "Hi", "--text", "Hi");

      expect(result.code).toBe(1);
      expect(result.stdout).toBe("");
      const problem = problemOf(result);
      expect(problem).toMatchObject({ status: 422, code: "validation_failed" });
      expect(problem.errors).toEqual([expect.objectContaining({ pointer: "/to/0", message: expect.stringContaining("not-an-address") })]);
      expect(await storedMessageCount()).toBe(before);
    });

    it("names the failing field in words on a terminal", async () => {
      const result = await runCli(["send", "--from", FROM, "--to", "not-an-address", "--subject", "Hi", "--text", "Hi"], { env, tty: true });

      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^Error: 422 validation_failed: /);
      expect(result.stderr).toMatch(/^ {2}\/to\/0: "not-an-address" is not a valid email address$/m);
      expect(result.stderr).toMatch(/^Request id: \S+/m);
    });

    it("lists the failing fields under the title on a terminal, without a detail that only counts them", async () => {
      const result = await runCli(["send", "--from", FROM, "--to", "not-an-address", "--to", "nor-this", "--subject", "Hi", "--text", "Hi"], { env, tty: true });

      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^Error: 422 validation_failed: Validation failed\n {2}\/to\/0: .+\n {2}\/to\/1: .+\nRequest id: \S+\n$/);
    });

    it("says how to fix a live send from an unverified domain, and the field, on a terminal", async () => {
      const live = cliEnv(server, server.testApp.workspace.liveKey);

      const result = await runCli(["send", "--from", FROM, "--to", "ada@example.com", "--subject", "Hi", "--text", "Hi"], { env: live, tty: true });

      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /^Error: 422 sender_domain_not_verified: Live mail from acme\.example needs acme\.example to be a verified domain of this workspace: add it as a domain of the workspace, publish the DNS records it is given, then verify it\. Sandbox keys may send from any domain\.\n {2}\/from: acme\.example is not a verified domain of this workspace\nRequest id: \S+\n$/,
      );
    });
  });

  describe("usage errors (exit 2, nothing sent)", () => {
    it.each([
      ["no body", ["--to", "ada@example.com", "--subject", "Hi"], /--html, --html-file, --text or --text-file/],
      ["no --to", ["--subject", "Hi", "--html", "<p>Hi</p>"], /--to/],
      ["--html with --html-file", ["--to", "ada@example.com", "--subject", "Hi", "--html", "<p>Hi</p>", "--html-file", "hi.html"], /mutually exclusive|conflict/i],
      ["a --header without a colon", ["--to", "ada@example.com", "--subject", "Hi", "--text", "Hi", "--header", "X-Campaign spring"], /--header takes "Name: value"; got "X-Campaign spring"/],
      ["a --metadata without =", ["--to", "ada@example.com", "--subject", "Hi", "--text", "Hi", "--metadata", "order_id"], /--metadata takes key=value; got "order_id"/],
      ["an unreadable --schedule", ["--to", "ada@example.com", "--subject", "Hi", "--text", "Hi", "--schedule", "tomorrow"], /--schedule takes an RFC 3339 time/],
      ["--subject given twice", ["--to", "ada@example.com", "--subject", "A", "--subject", "B", "--text", "Hi"], /^--subject takes one value; it was given 2 times\.$/],
      ["--schedule given twice", ["--to", "ada@example.com", "--subject", "Hi", "--text", "Hi", "--schedule", "1h", "--schedule", "2h"], /^--schedule takes one value; it was given 2 times\.$/],
      ["--html-file - and --text-file - at once", ["--to", "ada@example.com", "--subject", "Hi", "--html-file", "-", "--text-file", "-"], /stdin/],
      // yargs runs the handler after a failed check unless told otherwise: this one would send.
      ["an unknown flag on an otherwise complete send", ["--to", "ada@example.com", "--subject", "Hi", "--text", "Hi", "--priority", "high"], /Unknown argument: priority/],
    ])("refuses %s", async (_case, flags, message) => {
      const before = await storedMessageCount();

      const result = await send(...flags);

      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expect(problemOf(result)).toEqual({ error: "usage", message: expect.stringMatching(message) });
      expect(await storedMessageCount()).toBe(before);
    });

    it("names the --html-file it cannot read", async () => {
      const result = await send("--to", "ada@example.com", "--subject", "Hi", "--html-file", "/nonexistent/welcome.html");

      expect(result.code).toBe(2);
      expect(result.stderr).toContain("--html-file: cannot read /nonexistent/welcome.html (ENOENT)");
    });

    it("names the --attach file it cannot read", async () => {
      const result = await send("--to", "ada@example.com", "--subject", "Hi", "--text", "Hi", "--attach", "/nonexistent/report.pdf");

      expect(result.code).toBe(2);
      expect(result.stderr).toContain("--attach: cannot read /nonexistent/report.pdf (ENOENT)");
    });
  });
});

describe("mailroom messages create", () => {
  it("is the same command as send", async () => {
    const result = await runCli(["messages", "create", "--from", FROM, "--to", "ada@example.com", "--subject", "Created", "--text", "Hi", "--tag", "via-create"], { env });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Message>()).toMatchObject({ status: "queued", subject: "Created", tags: ["via-create"] });
  });
});

describe("the same message three ways", () => {
  it("stores the same message whether sent over raw HTTP, with the SDK or with the CLI", async () => {
    const body = {
      from: FROM,
      to: ["ada@example.com", "grace@example.com"],
      cc: ["alan@example.com"],
      reply_to: ["support@acme.example"],
      subject: "Three doors",
      html: "<p>One message</p>",
      text: "One message",
      headers: { "X-Campaign": "doors" },
      attachments: [{ filename: "note.txt", content: Buffer.from("a note").toString("base64") }],
      tags: ["doors"],
      metadata: { door: "any" },
    };

    const http = await fetch(`${server.baseUrl}/v1/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.sandboxKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(http.status).toBe(202);
    const viaHttp = (await http.json()) as Message;
    const viaSdk = await new Mailroom({ apiKey: server.sandboxKey, baseUrl: server.baseUrl }).messages.create(body);
    const cli = await runCli(
      [
        "send", "--from", FROM, "--to", "ada@example.com,grace@example.com", "--cc", "alan@example.com", "--reply-to", "support@acme.example",
        "--subject", "Three doors", "--html", "<p>One message</p>", "--text", "One message", "--header", "X-Campaign: doors",
        "--attach", "note.txt", "--tag", "doors", "--metadata", "door=any",
      ],
      { env, files: { "note.txt": "a note" } },
    );
    expect(cli.code, cli.stderr).toBe(0);

    // What legitimately differs per message: its identity, its timestamps and the generated key.
    const shape = ({ id: _id, created_at: _c, updated_at: _u, idempotency_key: _k, message_id_header: _h, recipients, ...rest }: Message) => ({
      ...rest,
      recipients: recipients.map(({ updated_at: _at, ...recipient }) => recipient),
    });
    const [storedHttp, storedSdk, storedCli] = await Promise.all([viaHttp.id, viaSdk.id, cli.json<Message>().id].map(getMessage));
    expect(shape(storedSdk as Message)).toEqual(shape(storedHttp as Message));
    expect(shape(storedCli as Message)).toEqual(shape(storedHttp as Message));
    expect(storedCli?.attachments).toEqual([expect.objectContaining({ filename: "note.txt", size: 6 })]);
  });
});

describe("mailroom send --template", () => {
  const templates = () => new Mailroom({ apiKey: server.sandboxKey, baseUrl: server.baseUrl }).templates;

  it("sends the published version rendered with --var and --var-json, and the message records which", async () => {
    const template = await templates().create({
      slug: "cli-welcome",
      name: "Welcome",
      subject: "Welcome, {{ first_name }}",
      html: "<p>Order {{ order.id }}: {{ order.items | size }} items</p>",
      variables: [
        { name: "first_name", type: "string", required: true },
        { name: "order", type: "object", required: true },
      ],
      publish: true,
    });

    const result = await send("--to", "ada@example.com", "--template", "cli-welcome", "--var", "first_name=Ada", "--var-json", '{"order": {"id": 7, "items": [1, 2]}}');

    expect(result.code, result.stderr).toBe(0);
    expect(await getMessage(result.json<Message>().id)).toMatchObject({
      subject: "Welcome, Ada",
      html: "<p>Order 7: 2 items</p>",
      template: { id: template.id, slug: "cli-welcome", version: 1 },
    });
  });

  it("exits 1 naming each bad variable, and stores nothing", async () => {
    await templates().create({ slug: "cli-strict", name: "Strict", subject: "Hi {{ n }}", html: "<p>{{ n }}</p>", variables: [{ name: "n", type: "number", required: true }], publish: true });
    const before = await storedMessageCount();

    const result = await send("--to", "ada@example.com", "--template", "cli-strict", "--var", "n=3");

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 422, errors: [expect.objectContaining({ pointer: "/template/variables/n" })] });
    expect(await storedMessageCount()).toBe(before);
  });
});
