import { describe, expect, it } from "vitest";
import type { InboundMessage, Message } from "mailroom";
import { contractExample, page, problemBody, problemOf, runCli, stubApi } from "./helpers.js";

/*
 * `mailroom messages replies`, `mailroom inbound get` and `mailroom inbound get-attachment`
 * against a stand-in for the API that answers with the contract's own example of a reply: what
 * each command asks for, and what it prints (or writes) in JSON, on a terminal and as bytes.
 */
const env = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };
const MESSAGE_ID = "msg_01jd3k8m2q5v7w9x1y3z5a7b9c";
const INBOUND_ID = "inb_01jd3k8m2q5v7w9x1y3z5a7b9c";
const reply = contractExample<InboundMessage>("Reply");

/** Bytes that are not UTF-8 (a PNG signature, then 0x00 0xFF): text handling would change them. */
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff]);

/** A stand-in answering every request with the attachment's bytes; records what it was asked. */
function attachmentApi(content: Buffer = PNG) {
  const seen: string[] = [];
  const fetch = async (request: Request) => {
    const url = new URL(request.url);
    seen.push(`${request.method} ${url.pathname}`);
    return new Response(new Uint8Array(content), { status: 200, headers: { "content-type": "image/png", "content-disposition": 'attachment; filename="screenshot.png"' } });
  };
  return { fetch, seen };
}

describe("mailroom messages replies", () => {
  it("lists the message's replies, as the API sent the page", async () => {
    const api = stubApi(200, page([reply]));

    const result = await runCli(["messages", "replies", MESSAGE_ID], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toEqual(page([reply]));
    expect(api.seen).toMatchObject([{ method: "GET", target: `/v1/messages/${MESSAGE_ID}/replies?limit=20`, idempotencyKey: null }]);
  });

  it("shows who replied, when, and whether DMARC passed, as a table on a terminal", async () => {
    const result = await runCli(["messages", "list-replies", MESSAGE_ID], { env, tty: true, fetch: stubApi(200, page([reply])).fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^ID\s+FROM\s+SUBJECT\s+DMARC\s+RECEIVED$/m);
    expect(result.stdout).toMatch(new RegExp(`^${INBOUND_ID}\\s+Ada Lovelace <ada@example.com>\\s+Re: Welcome to Acme\\s+pass\\s+2026-11-21T10:12:00.000Z$`, "m"));
  });

  it("fetches every page with --all", async () => {
    const api = stubApi((request) => ({ status: 200, body: new URL(request.url).searchParams.get("after") ? page([{ ...reply, id: "inb_2" }]) : page([reply], "cur_2") }));

    const result = await runCli(["messages", "replies", MESSAGE_ID, "--all"], { env, fetch: api.fetch });

    expect(result.json<{ data: InboundMessage[] }>().data.map((each) => each.id)).toEqual([INBOUND_ID, "inb_2"]);
    expect(api.seen.map((request) => request.target)).toEqual([`/v1/messages/${MESSAGE_ID}/replies?limit=20`, `/v1/messages/${MESSAGE_ID}/replies?limit=20&after=cur_2`]);
  });

  it("exits 1 with the problem for a message the environment does not have", async () => {
    const result = await runCli(["messages", "replies", MESSAGE_ID], { env, fetch: stubApi(404, problemBody(404, "not_found")).fetch });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("mailroom inbound get", () => {
  it("prints the reply as the API sent it", async () => {
    const api = stubApi(200, reply);

    const result = await runCli(["inbound", "get", INBOUND_ID], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toEqual(reply);
    expect(api.seen).toMatchObject([{ method: "GET", target: `/v1/inbound/${INBOUND_ID}` }]);
  });

  it("shows the new text, the quoted history set apart, the checks and the attachments on a terminal, and how to download one as a hint", async () => {
    const result = await runCli(["inbound", "get", INBOUND_ID], { env, tty: true, fetch: stubApi(200, reply).fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^from\s+Ada Lovelace <ada@example.com>$/m);
    expect(result.stdout).toMatch(/^authentication\s+spf pass, dkim pass, dmarc pass$/m);
    expect(result.stdout).toMatch(/^Thanks, that worked!$/m);
    expect(result.stdout).toMatch(/^Quoted history:\n {2}On Sat, 21 Nov 2026 at 10:00, Acme <hello@acme.example> wrote:\n {2}> Hello Ada$/m);
    expect(result.stdout).toMatch(/^0\s+screenshot\.png\s+image\/png\s+48213$/m);
    expect(result.stdout).not.toContain("get-attachment");
    expect(result.stderr).toBe(`Download an attachment with: mailroom inbound get-attachment ${INBOUND_ID} <index> --output <file>\n`);
  });

  it("keeps the download hint off stdout, and off stderr unless that is a terminal (--no-json | tail)", async () => {
    const piped = await runCli(["inbound", "get", INBOUND_ID, "--no-json"], { env, stderrTty: true, fetch: stubApi(200, reply).fetch });
    const logged = await runCli(["inbound", "get", INBOUND_ID, "--no-json"], { env, fetch: stubApi(200, reply).fetch });

    expect(piped.stdout).toMatch(/^0\s+screenshot\.png/m);
    expect(piped.stdout).not.toContain("get-attachment");
    expect(piped.stderr).toContain("mailroom inbound get-attachment");
    expect(logged.stdout).not.toContain("get-attachment");
    expect(logged.stderr).toBe("");
  });

  it("says the content was removed, and offers no download, once the content retention removed it", async () => {
    const removed = { ...reply, text: null, quoted_text: null, html: null, content_removed_at: "2026-12-01T10:00:00.000Z" };
    const result = await runCli(["inbound", "get", INBOUND_ID], { env, tty: true, fetch: stubApi(200, removed).fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^content_removed_at\s+2026-12-01T10:00:00.000Z$/m);
    expect(result.stdout).toContain("(content removed by the workspace's content retention)");
    expect(result.stdout).not.toContain("get-attachment");
    expect(result.stderr).toBe("");
  });
});

describe("mailroom inbound get-attachment", () => {
  it("writes the attachment's bytes, unchanged, to --output and says where", async () => {
    const api = attachmentApi();
    const written = new Map<string, Buffer>();

    const result = await runCli(["inbound", "get-attachment", INBOUND_ID, "0", "--output", "shot.png"], { env, fetch: api.fetch, written });

    expect(result.code, result.stderr).toBe(0);
    expect(written.get("shot.png")).toEqual(PNG);
    expect(result.json()).toEqual({ inbound_id: INBOUND_ID, index: 0, path: "shot.png", size: PNG.length });
    expect(api.seen).toEqual([`GET /v1/inbound/${INBOUND_ID}/attachments/0`]);
  });

  it("writes the bytes to stdout when it is not a terminal, and nothing else", async () => {
    const result = await runCli(["inbound", "get-attachment", INBOUND_ID, "1"], { env, fetch: attachmentApi().fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdoutBytes).toEqual(PNG);
    expect(result.stderr).toBe("");
  });

  it("refuses to write bytes to a terminal, before downloading anything", async () => {
    const api = attachmentApi();

    const result = await runCli(["inbound", "get-attachment", INBOUND_ID, "0"], { env, tty: true, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain("give --output <file>");
    expect(api.seen).toEqual([]);
  });

  it("refuses an index that is not a whole number, without a request", async () => {
    const api = attachmentApi();

    const result = await runCli(["inbound", "get-attachment", INBOUND_ID, "first", "--output", "x"], { env, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toMatchObject({ error: "usage", message: expect.stringContaining('got "first"') });
    expect(api.seen).toEqual([]);
  });

  it("exits 1 with the problem, and writes no file, for an attachment the reply does not have", async () => {
    const written = new Map<string, Buffer>();

    const result = await runCli(["inbound", "get-attachment", INBOUND_ID, "7", "--output", "x.bin"], { env, fetch: stubApi(404, problemBody(404, "not_found")).fetch, written });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ code: "not_found" });
    expect(written.size).toBe(0);
  });

  it("names --output and the reason when the file cannot be written", async () => {
    const result = await runCli(["inbound", "get-attachment", INBOUND_ID, "0", "--output", "/nonexistent-dir/x.png"], { env, fetch: attachmentApi().fetch });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--output: cannot write /nonexistent-dir/x.png (ENOENT)");
  });
});

describe("control characters in what others wrote, on a terminal", () => {
  // A reply is written by whoever sent it: an ESC or OSC sequence in it (OSC 52 sets the
  // clipboard, CSI moves the cursor and erases lines) must show as text, never reach the terminal.
  const OSC52 = "\u001b]52;c;cm0gLXJmIH4=\u0007";
  const hostile: InboundMessage = {
    ...reply,
    from: "Ada \u001b[2K<ada@example.com>",
    subject: `${OSC52}Re: Welcome\u009b31m`,
    text: "Thanks!\u001b[1A\u001b[2KAll fine\r\nsecond line\tindented",
    quoted_text: "> Hello\u001b[0m Ada",
    attachments: [{ ...(reply.attachments[0] as InboundMessage["attachments"][number]), filename: "shot\u001b[8m.png\ninjected" }],
  };
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  const controls = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

  it("shows each control character of a reply as a visible symbol, keeping its line breaks and tabs", async () => {
    const result = await runCli(["inbound", "get", INBOUND_ID], { env, tty: true, fetch: stubApi(200, hostile).fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toMatch(controls);
    expect(result.stdout).toMatch(/^from\s+Ada ␛\[2K<ada@example.com>$/m);
    expect(result.stdout).toMatch(/^subject\s+␛\]52;c;cm0gLXJmIH4=␇Re: Welcome\\u009b31m$/m);
    expect(result.stdout).toMatch(/^Thanks!␛\[1A␛\[2KAll fine␍\nsecond line\tindented$/m);
    expect(result.stdout).toContain("  > Hello␛[0m Ada");
    expect(result.stdout).toMatch(/^0\s+shot␛\[8m\.png␊injected\s+image\/png/m);
  });

  it("does the same in a list of replies", async () => {
    const result = await runCli(["messages", "replies", MESSAGE_ID], { env, tty: true, fetch: stubApi(200, page([hostile])).fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toMatch(controls);
    expect(result.stdout).toContain("␛]52;c;");
  });

  it("does the same in the detail a recipient's mail server answered", async () => {
    const message = contractExample<Message>("ScheduledMessage");
    const bounced = { ...message, recipients: message.recipients.map((recipient) => ({ ...recipient, status: "bounced", detail: `550 no such user${OSC52}\u001b[2J` })) };

    const result = await runCli(["messages", "get", message.id], { env, tty: true, fetch: stubApi(200, bounced).fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toMatch(controls);
    expect(result.stdout).toContain("550 no such user␛]52;c;cm0gLXJmIH4=␇␛[2J");
  });

  it("does the same in an API error's detail, printed in words", async () => {
    const result = await runCli(["inbound", "get", INBOUND_ID], { env, tty: true, fetch: stubApi(404, problemBody(404, "not_found", { detail: `gone${OSC52}` })).fetch });

    expect(result.code).toBe(1);
    expect(result.stderr).not.toMatch(controls);
    expect(result.stderr).toContain("gone␛]52;c;cm0gLXJmIH4=␇");
  });

  it("leaves JSON as the API sent it", async () => {
    const result = await runCli(["inbound", "get", INBOUND_ID], { env, fetch: stubApi(200, hostile).fetch });

    expect(result.json()).toEqual(hostile);
  });
});
