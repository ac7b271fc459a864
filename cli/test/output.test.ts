import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../test/helpers/http-server.js";
import { cell, fields, table } from "../src/output.js";
import { api, cliEnv, runCli } from "./helpers.js";

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
});
