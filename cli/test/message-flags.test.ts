import { describe, expect, it } from "vitest";
import { splitAddressList } from "../src/commands/message-flags.js";
import { problemOf, runCli, stubApi } from "./helpers.js";

describe("splitAddressList (--to, --cc, --bcc, --reply-to)", () => {
  it("splits a comma-separated list and trims each address", () => {
    expect(splitAddressList("ada@example.com, grace@example.com ,alan@example.com")).toEqual(["ada@example.com", "grace@example.com", "alan@example.com"]);
  });

  it("keeps a quoted display name that contains a comma whole", () => {
    expect(splitAddressList('"Lovelace, Ada" <ada@example.com>, grace@example.com')).toEqual(['"Lovelace, Ada" <ada@example.com>', "grace@example.com"]);
  });

  it("does not split inside angle brackets", () => {
    expect(splitAddressList("Ada <ada@example.com>, Grace <grace@example.com>")).toEqual(["Ada <ada@example.com>", "Grace <grace@example.com>"]);
  });

  it("answers a single address as it is", () => {
    expect(splitAddressList("Ada Lovelace <ada@example.com>")).toEqual(["Ada Lovelace <ada@example.com>"]);
  });

  it("leaves empty parts for the caller to drop", () => {
    expect(splitAddressList("ada@example.com,,")).toEqual(["ada@example.com", "", ""]);
  });
});

describe("--expires-at (send, messages create)", () => {
  const env = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };
  const accepted = { id: "msg_1", object: "message", status: "queued", to: ["ada@example.com"], cc: [], recipients: [], tags: [] };

  it("sends expires_at as an RFC 3339 time, a delay counting from now", async () => {
    const api = stubApi(202, accepted);
    const before = Date.now();

    const result = await runCli(["send", "--to", "ada@example.com", "--subject", "Your code", "--text", "481516", "--expires-at", "10m"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    const { expires_at } = api.seen[0]?.body as { expires_at: string };
    expect(Date.parse(expires_at) - before).toBeGreaterThanOrEqual(10 * 60_000);
    expect(Date.parse(expires_at) - before).toBeLessThan(10 * 60_000 + 30_000);
  });

  it("passes an RFC 3339 time through in UTC, on messages create as on send", async () => {
    const api = stubApi(202, accepted);

    await runCli(["messages", "create", "--to", "ada@example.com", "--subject", "Hi", "--text", "Hi", "--expires-at", "2026-12-01T10:00:00+01:00"], { env, fetch: api.fetch });

    expect(api.seen[0]?.body).toMatchObject({ expires_at: "2026-12-01T09:00:00.000Z" });
  });

  it("refuses a time it cannot read, sending nothing", async () => {
    const api = stubApi(202, accepted);

    const result = await runCli(["send", "--to", "ada@example.com", "--subject", "Hi", "--text", "Hi", "--expires-at", "soon"], { env, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result).message).toMatch(/^--expires-at takes an RFC 3339 time/);
    expect(api.seen).toEqual([]);
  });
});
