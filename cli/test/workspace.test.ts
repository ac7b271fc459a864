import { describe, expect, it } from "vitest";
import type { Message, Workspace } from "mailroom";
import type { TestServer } from "../../test/helpers/http-server.js";
import { api, cliEnv, problemOf, runCli, useTestServer } from "./helpers.js";

// A server of its own: these tests change the workspace's default sender, which every send uses.
let server: TestServer;
let env: Record<string, string>;
useTestServer((started) => ({ server, env } = started));

describe("mailroom workspace get", () => {
  it("prints the workspace and environment of the key in use", async () => {
    const result = await runCli(["workspace", "get"], { env });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Workspace>()).toMatchObject({ id: server.testApp.workspace.id, object: "workspace", name: "Acme", environment: "sandbox" });
  });

  it("says which environment a live key is for", async () => {
    const result = await runCli(["workspace", "get"], { env: cliEnv(server, server.testApp.workspace.liveKey) });

    expect(result.json<Workspace>()).toMatchObject({ id: server.testApp.workspace.id, environment: "live" });
  });

  it("shows the settings as fields on a terminal, (none) for an unset sender", async () => {
    await runCli(["workspace", "update", "--no-default-from"], { env });

    const result = await runCli(["workspace", "get"], { env, tty: true });

    expect(result.stdout).toMatch(new RegExp(`^id\\s+${server.testApp.workspace.id}$`, "m"));
    expect(result.stdout).toMatch(/^environment\s+sandbox$/m);
    expect(result.stdout).toMatch(/^default_from\s+\(none\)$/m);
  });
});

describe("mailroom workspace update", () => {
  it("sets the default sender, which a send without --from then uses", async () => {
    const result = await runCli(["workspace", "update", "--default-from", "Acme <hello@acme.example>"], { env });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Workspace>().default_from).toBe("Acme <hello@acme.example>");
    const sent = await runCli(["send", "--to", "ada@example.com", "--subject", "Hi", "--text", "Hi"], { env });
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.json<Message>().from).toBe("Acme <hello@acme.example>");
  });

  it("clears the default sender with --no-default-from, after which a send needs --from", async () => {
    await runCli(["workspace", "update", "--default-from", "Acme <hello@acme.example>"], { env });

    const result = await runCli(["workspace", "update", "--no-default-from"], { env });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Workspace>().default_from).toBeNull();
    const sent = await runCli(["send", "--to", "ada@example.com", "--subject", "Hi", "--text", "Hi"], { env });
    expect(sent.code).toBe(1);
    expect(problemOf(sent)).toMatchObject({ code: "validation_failed" });
  });

  it("renames the workspace with --name", async () => {
    const result = await runCli(["workspace", "update", "--name", "Acme Inc"], { env });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Workspace>().name).toBe("Acme Inc");
    expect(await api(server).get("/v1/workspace")).toMatchObject({ name: "Acme Inc" });
  });

  it("refuses --no-name, which yargs would give as false, leaving the name as it was", async () => {
    const before = await api(server).get("/v1/workspace");

    const result = await runCli(["workspace", "update", "--no-name"], { env });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toEqual({ error: "usage", message: "--no-name: --name has no --no- form; give --name a value, or leave it out." });
    expect(await api(server).get("/v1/workspace")).toEqual(before);
  });

  it("exits 2 without a flag, changing nothing", async () => {
    const before = await api(server).get("/v1/workspace");

    const result = await runCli(["workspace", "update"], { env });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toEqual({ error: "usage", message: "Nothing to update: give --name, --default-from (or --no-default-from), --monthly-quota (or --no-monthly-quota), --content-retention-days (or --no-content-retention-days), or a tracking default (--track-opens, --track-clicks, --track-replies, --unsubscribe, or their --no- forms)." });
    expect(await api(server).get("/v1/workspace")).toEqual(before);
  });

  it("exits 1 with the API's validation problem for a sender that is not an address", async () => {
    const result = await runCli(["workspace", "update", "--default-from", "not an address"], { env });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 422, code: "validation_failed" });
  });
});
