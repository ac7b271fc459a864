import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../test/helpers/http-server.js";
import { Output, cell, fields, printable, problemLines, table } from "../src/output.js";
import { api, cliEnv, problemOf, runCli, stubApi } from "./helpers.js";

describe("output mode", () => {
  let server: TestServer;
  let env: Record<string, string>;

  beforeAll(async () => {
    server = await startTestServer();
    env = cliEnv(server);
  });
  afterAll(async () => server?.close());

  const isHuman = (stdout: string) => /^id\s+ws_\w+$/m.test(stdout);

  it("prints JSON when stdout is not a terminal, so that `mailroom … | jq` needs no flag", async () => {
    const result = await runCli(["workspace", "get"], { env, tty: false });

    expect(result.json()).toEqual(await api(server).get("/v1/workspace"));
  });

  it("prints the API's object pretty-printed and unchanged", async () => {
    const result = await runCli(["workspace", "get"], { env });

    expect(result.stdout).toBe(`${JSON.stringify(await api(server).get("/v1/workspace"), null, 2)}\n`);
  });

  it("prints for a person when stdout is a terminal", async () => {
    const result = await runCli(["workspace", "get"], { env, tty: true });

    expect(isHuman(result.stdout)).toBe(true);
    expect(() => JSON.parse(result.stdout)).toThrow();
  });

  it("prints JSON on a terminal when given --json", async () => {
    const result = await runCli(["workspace", "get", "--json"], { env, tty: true });

    expect(result.json()).toMatchObject({ object: "workspace", id: server.testApp.workspace.id });
  });

  it("prints for a person into a pipe when given --no-json", async () => {
    const result = await runCli(["workspace", "get", "--no-json"], { env, tty: false });

    expect(isHuman(result.stdout)).toBe(true);
  });

  it("prints errors as a JSON document in JSON mode and in words otherwise, always on stderr", async () => {
    const missing = ["messages", "get", "msg_01jc3v6q9k2m8r4t7w0y5z1b3d"];

    const [asJson, inWords] = await Promise.all([runCli(missing, { env }), runCli(missing, { env, tty: true })]);

    expect([asJson.stdout, inWords.stdout]).toEqual(["", ""]);
    expect(JSON.parse(asJson.stderr)).toMatchObject({ type: expect.stringContaining("not_found"), status: 404, code: "not_found", request_id: expect.any(String) });
    expect(inWords.stderr).toMatch(/^Error: 404 not_found: .+\nRequest id: \S+\n$/);
  });
});

describe("progress and hints", () => {
  /** An Output over buffers: stdout a pipe or a terminal as `json` asks, stderr a terminal or not. */
  function output({ json, stderrTty }: { json: boolean; stderrTty: boolean }) {
    const written = { stdout: "", stderr: "" };
    const io = {
      stdout: { write: (chunk: string | Uint8Array) => (written.stdout += String(chunk)), isTTY: !json },
      stderr: { write: (chunk: string) => (written.stderr += chunk), isTTY: stderrTty },
      env: {},
      readFile: () => Promise.reject(new Error("no files")),
      writeFile: () => Promise.reject(new Error("no files")),
      interrupted: new Promise<void>(() => undefined),
    };
    return { output: new Output(io, undefined), written };
  }

  it.each([
    { json: false, stderrTty: true, progress: true, hints: true },
    { json: true, stderrTty: true, progress: true, hints: false },
    { json: false, stderrTty: false, progress: false, hints: false },
    { json: true, stderrTty: false, progress: false, hints: false },
  ])("go to stderr only when it is a terminal, and hints in human mode only (JSON mode $json, stderr a terminal $stderrTty)", ({ json, stderrTty, progress, hints }) => {
    const { output: out, written } = output({ json, stderrTty });

    out.progress("fetched 100…");
    out.result({ id: "msg_2" }, () => "id  msg_2", () => "Follow it with: mailroom messages get msg_2");

    expect(written.stderr).toBe([...(progress ? ["fetched 100…"] : []), ...(hints ? ["Follow it with: mailroom messages get msg_2"] : [])].map((line) => `${line}\n`).join(""));
    expect(written.stdout).not.toContain("Follow it with");
  });

  it("works a hint out only when it will be shown", () => {
    const { output: out } = output({ json: true, stderrTty: true });

    out.result({}, () => "", () => {
      throw new Error("a hint of JSON mode was worked out");
    });
  });
});

describe("table()", () => {
  it("pads each column to its widest cell, two spaces apart, under a header row", () => {
    expect(table(["ID", "STATUS", "TO"], [["msg_1", "queued", "ada@example.com"], ["msg_22", "delivered", "grace@example.com"]])).toBe(
      ["ID      STATUS     TO", "msg_1   queued     ada@example.com", "msg_22  delivered  grace@example.com"].join("\n"),
    );
  });

  it("leaves no trailing spaces when the last cell is empty or short", () => {
    const rendered = table(["RECIPIENT", "DETAIL"], [["ada@example.com", ""], ["a@b.c", "mailbox full"]]);

    expect(rendered.split("\n").map((line) => line.endsWith(" "))).toEqual([false, false, false]);
  });

  it("says (none) when there are no rows", () => {
    expect(table(["ID"], [])).toBe("(none)");
  });

  it("lines columns up by the terminal columns a cell takes: two for CJK and emoji, none for a combining mark", () => {
    const rendered = table(["SUBJECT", "ID"], [["注文", "msg_1"], ["👋 hi", "msg_2"], ["cafe\u0301", "msg_3"], ["plain", "msg_4"]]);

    expect(rendered).toBe(["SUBJECT  ID", "注文     msg_1", "👋 hi    msg_2", "cafe\u0301     msg_3", "plain    msg_4"].join("\n"));
  });
});

describe("fields()", () => {
  it("aligns labels and leaves out empty values", () => {
    expect(fields([["id", "ws_1"], ["environment", "sandbox"], ["cc", ""], ["scheduled_at", null], ["expires_at", undefined]])).toBe("id           ws_1\nenvironment  sandbox");
  });
});

describe("cell()", () => {
  it("joins a list with commas", () => {
    expect(cell(["ada@example.com", "grace@example.com"])).toBe("ada@example.com, grace@example.com");
  });

  it("shortens past the maximum with an ellipsis", () => {
    expect(cell("abcdefghij", 5)).toBe("abcd…");
    expect(cell("abcde", 5)).toBe("abcde");
  });

  it("shortens on a whole character, never half an emoji, counting terminal columns", () => {
    expect(cell("ab👋cd", 4)).toBe("ab…");
    expect(cell("👨‍👩‍👧👨‍👩‍👧", 3)).toBe("👨‍👩‍👧…");
    expect(cell("注文注文注文", 5)).toBe("注文…");
    expect(cell("注文", 4)).toBe("注文");
    expect(cell("cafe\u0301s", 5)).toBe("cafe\u0301s");
  });
});

describe("printable()", () => {
  it("shows C0 and C1 control characters and DEL as visible symbols, keeping tabs, and line breaks only in lines mode", () => {
    expect(printable("a\u001b[2Kb\u0007\u007f\u009b\tc\nd\r")).toBe("a␛[2Kb␇␡\\u009b\tc␊d␍");
    expect(printable("a\u001bb\nc\r\n", { lines: true })).toBe("a␛b\nc␍\n");
  });

  it("leaves other text alone, accents and emoji included", () => {
    expect(printable("Grüße — 👋 “ok”")).toBe("Grüße — 👋 “ok”");
  });
});

describe("a malformed API key", () => {
  const key = "svc_test_secret\nvalue";
  const stubEnv = { MAILROOM_BASE_URL: "http://mailroom.test" };

  it.each([
    ["in MAILROOM_API_KEY", [] as string[], { ...stubEnv, MAILROOM_API_KEY: key }, "MAILROOM_API_KEY"],
    ["given with --api-key", ["--api-key", key], stubEnv, "--api-key"],
  ])("is a usage error %s that names where it came from without repeating it, and nothing is sent", async (_case, flags, env, source) => {
    const stub = stubApi(200, {});

    const result = await runCli(["workspace", "get", ...flags], { env, fetch: stub.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toEqual({ error: "usage", message: expect.stringContaining(source) });
    expect(result.stderr).not.toContain("secret");
    expect(stub.seen).toEqual([]);
  });

  it("is read from MAILROOM_API_KEY and MAILROOM_BASE_URL without the spaces and line break around them, as the SDK reads them", async () => {
    const stub = stubApi(200, { id: "ws_1" });

    const result = await runCli(["workspace", "get"], { env: { MAILROOM_API_KEY: " svc_test_stub\n", MAILROOM_BASE_URL: "http://mailroom.test \n" }, fetch: stub.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(stub.seen).toMatchObject([{ target: "/v1/workspace", authorization: "Bearer svc_test_stub" }]);
  });

  it("is none when MAILROOM_API_KEY holds only spaces, as for the SDK; and --api-key, given outright, is taken as it is", async () => {
    const blank = await runCli(["workspace", "get"], { env: { ...stubEnv, MAILROOM_API_KEY: " \n" }, fetch: stubApi(200, {}).fetch });
    const flag = await runCli(["workspace", "get", "--api-key", "svc_test_stub\n"], { env: stubEnv, fetch: stubApi(200, {}).fetch });

    expect(blank.code).toBe(2);
    expect(problemOf(blank)).toEqual({ error: "usage", message: expect.stringMatching(/^No API key\. /) });
    expect(flag.code).toBe(2);
    expect(problemOf(flag)).toEqual({ error: "usage", message: expect.stringContaining("--api-key") });
  });

  it.each(["svc_test_two words", "svc_test_clé", "svc_test_nul\u0000"])("refuses %j too: only printable ASCII, no spaces", async (bad) => {
    const result = await runCli(["workspace", "get"], { env: { ...stubEnv, MAILROOM_API_KEY: bad }, fetch: stubApi(200, {}).fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result).error).toBe("usage");
  });
});

describe("an error the CLI does not expect", () => {
  const env = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };

  it("is reported in words as an internal error, exit 1, without a stack trace or the error's text", async () => {
    // An answer that is not the object the contract promises: rendering it fails.
    const result = await runCli(["messages", "get", "msg_01jc3v6q9k2m8r4t7w0y5z1b3d"], { env, tty: true, fetch: stubApi(200, {}).fetch });

    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^Internal error \(TypeError\): /);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.stderr).not.toContain("Cannot read");
  });

  it("is a JSON document on stderr in JSON mode", async () => {
    const result = await runCli(["messages", "create-batch", "--file", "-"], { env, stdin: JSON.stringify([{ to: ["ada@example.com"] }]), fetch: stubApi(200, {}).fetch });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toEqual({ error: "internal", message: expect.stringContaining("TypeError") });
  });
});

describe("problemLines()", () => {
  const lead = "Error: 422 code";
  const field = (pointer: string, message: string) => ({ location: "body", pointer, message });

  it("says the detail after the lead when there are no field errors", () => {
    expect(problemLines(lead, { title: "Not found", detail: "No message msg_1 in this environment." })).toEqual(["Error: 422 code: No message msg_1 in this environment."]);
  });

  it("says the detail, then the fields, when the detail tells more than they do", () => {
    const problem = { title: "Sender domain not verified", detail: "Live mail from acme.example needs it verified: add it, publish its DNS records, then verify it.", errors: [field("/from", "acme.example is not verified")] };

    expect(problemLines(lead, problem)).toEqual([`${lead}: ${problem.detail}`, "  /from: acme.example is not verified"]);
  });

  it.each([
    ["counts the fields listed", "2 fields are invalid.", [field("/to/0", "bad"), field("/to/1", "bad")]],
    ["counts the fields that failed to render", "2 fields failed to render.", [field("/subject", "bad"), field("/html", "bad")]],
    ["restates its one field", "/to/0: must be an email address", [field("/to/0", "must be an email address")]],
    ["restates its one field, the body as a whole", "The request: must hold a body", [field("", "must hold a body")]],
  ])("gives the title instead of a detail that only %s", (_case, detail, errors) => {
    expect(problemLines(lead, { title: "Validation failed", detail, errors })[0]).toBe(`${lead}: Validation failed`);
  });

  it("keeps a count of more fields than are listed, as a request log that kept only the first has them", () => {
    expect(problemLines(lead, { title: "Validation failed", detail: "3 fields are invalid.", errors: [field("/to/0", "bad")] })[0]).toBe(`${lead}: 3 fields are invalid.`);
  });
});
