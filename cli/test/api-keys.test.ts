import { describe, expect, it } from "vitest";
import type { ApiKey, ApiKeyWithSecret } from "mailroom";
import type { TestServer } from "../../test/helpers/http-server.js";
import { cliEnv, contractExample, problemOf, runCli, stubApi, useTestServer } from "./helpers.js";

let server: TestServer;
let env: Record<string, string>;
useTestServer((started) => ({ server, env } = started));

/** Creates a key through the CLI; answers it with its secret. */
async function createKey(name: string, ...flags: string[]): Promise<ApiKeyWithSecret> {
  const result = await runCli(["api-keys", "create", "--name", name, ...flags], { env });
  expect(result.code, result.stderr).toBe(0);
  return result.json<ApiKeyWithSecret>();
}

/** A stand-in API answering the contract's restricted key, to see exactly what a command sends. */
const restrictedKey = contractExample<ApiKey>("RestrictedApiKey");
const stubEnv = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };

/** Whether a secret still gets through: `workspace get` with it exits 0. */
async function works(secret: string): Promise<boolean> {
  const result = await runCli(["workspace", "get"], { env: cliEnv(server, secret) });
  if (result.code !== 0) expect(problemOf(result)).toMatchObject({ status: 401, code: "invalid_api_key" });
  return result.code === 0;
}

describe("mailroom api-keys create", () => {
  it("prints the new key with its secret, which works at once", async () => {
    const key = await createKey("Billing service");

    expect(key).toMatchObject({ object: "api_key", name: "Billing service", environment: "sandbox", permission: "full_access", revoked_at: null });
    expect(key.id).toMatch(/^key_/);
    expect(key.secret).toMatch(/^svc_test_/);
    expect(await works(key.secret)).toBe(true);
  });

  it("creates a key that can only send with --permission sending_access", async () => {
    const key = await createKey("Sender", "--permission", "sending_access");

    expect(key.permission).toBe("sending_access");
    const listing = await runCli(["api-keys", "list"], { env: cliEnv(server, key.secret) });
    expect(listing.code).toBe(1);
    expect(problemOf(listing)).toMatchObject({ status: 403 });
  });

  it("sets expires_at from --expires-at 30d", async () => {
    const before = Date.now();
    const key = await createKey("CI", "--expires-at", "30d");

    const ahead = Date.parse(key.expires_at as string) - before;
    expect(ahead).toBeGreaterThanOrEqual(30 * 86_400_000);
    expect(ahead).toBeLessThan(30 * 86_400_000 + 60_000);
  });

  it("shows the secret on a terminal and says it is shown only now", async () => {
    const result = await runCli(["api-keys", "create", "--name", "Laptop"], { env, tty: true });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^secret {2}svc_test_\S+$/m);
    expect(result.stdout).not.toContain("shown only now");
    expect(result.stderr).toBe("The secret is shown only now: store it somewhere safe.\n");
    // Made with the environment's key: that key is its creator.
    expect(result.stdout).toMatch(/^created_by +api_key key_[0-9a-z]{26}$/m);
  });

  it("limits the key with --allowed-ips, --sender-domains and --recipient-domains, each a comma-separated list", async () => {
    const key = await createKey(
      "Web app",
      "--permission",
      "sending_access",
      "--allowed-ips",
      "203.0.113.0/24,127.0.0.1",
      "--sender-domains",
      "acme.example, mail.acme.example",
      "--recipient-domains",
      "team.acme.example",
    );

    expect(key.restrictions).toEqual({ allowed_ips: ["203.0.113.0/24", "127.0.0.1"], sender_domains: ["acme.example", "mail.acme.example"], recipient_domains: ["team.acme.example"] });
  });

  it("tells a person whose key is refused from this address how to change the key's allowed IPs", async () => {
    const key = await createKey("Office only", "--allowed-ips", "203.0.113.0/24");

    const result = await runCli(["workspace", "get"], { env: cliEnv(server, key.secret), tty: true });

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^Error: 403 ip_not_allowed: /);
    expect(result.stderr).toContain(
      "This key only accepts requests from its allowed IP addresses: send from one of them, or change them with another key or in the dashboard: mailroom api-keys update <api_key_id> --allowed-ips <list|none>",
    );
  });

  it("sends restrictions only for the flags given, and none without any", async () => {
    const api = stubApi(201, restrictedKey);

    await runCli(["api-keys", "create", "--name", "Office", "--allowed-ips", "203.0.113.0/24"], { env: stubEnv, fetch: api.fetch });
    await runCli(["api-keys", "create", "--name", "Anywhere"], { env: stubEnv, fetch: api.fetch });

    expect(api.seen.map((request) => request.body)).toEqual([{ name: "Office", restrictions: { allowed_ips: ["203.0.113.0/24"] } }, { name: "Anywhere" }]);
  });

  it("exits 1 with 422 when a full_access key is given domain limits", async () => {
    const result = await runCli(["api-keys", "create", "--name", "Too wide", "--sender-domains", "acme.example"], { env });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 422, errors: [expect.objectContaining({ pointer: "/restrictions/sender_domains" })] });
  });

  it("exits 2 without --name", async () => {
    const result = await runCli(["api-keys", "create"], { env });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toMatchObject({ error: "usage", message: expect.stringContaining("Give the key a --name.") });
  });
});

describe("mailroom api-keys list", () => {
  it("lists the environment's keys without their secrets", async () => {
    const key = await createKey("Listed");

    const result = await runCli(["api-keys", "list", "--limit", "100"], { env });

    expect(result.code, result.stderr).toBe(0);
    const { data } = result.json<{ data: ApiKey[] }>();
    const listed = data.find((item) => item.id === key.id);
    expect(listed).toMatchObject({ name: "Listed", redacted_key: expect.stringMatching(new RegExp(`${key.secret.slice(-4)}$`)) });
    expect(listed).not.toHaveProperty("secret");
    expect(result.stdout).not.toContain(key.secret);
  });

  it("prints a table with each key's state on a terminal", async () => {
    const key = await createKey("Tabled");

    const result = await runCli(["api-keys", "list", "--limit", "100"], { env, tty: true });

    expect(result.stdout.split("\n")[0]).toMatch(/^ID\s+NAME\s+PERMISSION\s+TOKEN\s+LAST USED\s+STATUS\s+RESTRICTIONS$/);
    expect(result.stdout).toMatch(new RegExp(`^${key.id}\\s+Tabled\\s+full_access\\s+\\S+\\s+never\\s+active$`, "m"));
  });

  it("shows a restricted key's limits in the table", async () => {
    const key = await createKey("Office only", "--allowed-ips", "203.0.113.0/24");

    const result = await runCli(["api-keys", "list", "--limit", "100"], { env, tty: true });

    expect(result.stdout).toMatch(new RegExp(`^${key.id}\\s+Office only\\s+.*\\sactive\\s+ips 203\\.0\\.113\\.0/24 · from anywhere · to anywhere$`, "m"));
  });
});

describe("mailroom api-keys get", () => {
  it("prints one key, without its secret", async () => {
    const key = await createKey("Fetched");

    const result = await runCli(["api-keys", "get", key.id], { env });

    expect(result.code, result.stderr).toBe(0);
    const shown = result.json<ApiKey>();
    expect(shown).toMatchObject({ id: key.id, object: "api_key", name: "Fetched", redacted_key: key.redacted_key, created_at: key.created_at });
    expect(shown).not.toHaveProperty("secret");
  });

  it("shows a key's restrictions on one line on a terminal, and no such line for a key without any", async () => {
    const restricted = await createKey("Restricted", "--permission", "sending_access", "--allowed-ips", "203.0.113.0/24", "--sender-domains", "acme.example");
    const open = await createKey("Open");

    const shown = await runCli(["api-keys", "get", restricted.id], { env, tty: true });
    const plain = await runCli(["api-keys", "get", open.id], { env, tty: true });

    expect(shown.stdout).toMatch(/^restrictions +ips 203\.0\.113\.0\/24 · from acme\.example · to anywhere$/m);
    expect(plain.stdout).not.toContain("restrictions");
  });

  it("exits 1 with 404 not_found for a key that does not exist", async () => {
    const result = await runCli(["api-keys", "get", "key_01jc3v6q9k2m8r4t7w0y5z1b3d"], { env });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("mailroom api-keys rotate", () => {
  it("prints a new secret; with --overlap-seconds 0 the old one stops working at once", async () => {
    const key = await createKey("Rotated now");

    const result = await runCli(["api-keys", "rotate", key.id, "--overlap-seconds", "0"], { env });

    expect(result.code, result.stderr).toBe(0);
    const rotated = result.json<ApiKeyWithSecret>();
    expect(rotated.id).toBe(key.id);
    expect(rotated.secret).not.toBe(key.secret);
    expect(await works(rotated.secret)).toBe(true);
    expect(await works(key.secret)).toBe(false);
  });

  it("says on a terminal until when the previous secret keeps working", async () => {
    const key = await createKey("Rotated, told when");

    const result = await runCli(["api-keys", "rotate", key.id, "--overlap-seconds", "3600"], { env, tty: true });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^previous_secret_expires_at +\d{4}-\d{2}-\d{2}T/m);
  });

  it("keeps the old secret working for the default overlap", async () => {
    const key = await createKey("Rotated gently");

    const result = await runCli(["api-keys", "rotate", key.id], { env });

    expect(result.code, result.stderr).toBe(0);
    expect(await works(result.json<ApiKeyWithSecret>().secret)).toBe(true);
    expect(await works(key.secret)).toBe(true);
  });

  it("exits 1 with 409 api_key_revoked for a revoked key", async () => {
    const key = await createKey("Gone");
    await runCli(["api-keys", "revoke", key.id, "--yes"], { env });

    const result = await runCli(["api-keys", "rotate", key.id], { env });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 409, code: "api_key_revoked" });
  });
});

describe("mailroom api-keys update", () => {
  it("replaces the restrictions given, lifts those given as none and keeps the rest", async () => {
    const key = await createKey("Tightened", "--permission", "sending_access", "--allowed-ips", "203.0.113.0/24", "--sender-domains", "acme.example");

    const result = await runCli(["api-keys", "update", key.id, "--allowed-ips", "none", "--recipient-domains", "team.acme.example,ops.acme.example"], { env });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<ApiKey>()).toMatchObject({
      id: key.id,
      name: "Tightened",
      restrictions: { allowed_ips: null, sender_domains: ["acme.example"], recipient_domains: ["team.acme.example", "ops.acme.example"] },
    });
  });

  it("sends --name and each list flag as given, none as null", async () => {
    const api = stubApi(200, restrictedKey);

    const result = await runCli(
      ["api-keys", "update", restrictedKey.id, "--name", "Renamed", "--allowed-ips", "none", "--sender-domains", "acme.example,mail.acme.example", "--recipient-domains", "NONE"],
      { env: stubEnv, fetch: api.fetch },
    );

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen).toEqual([
      expect.objectContaining({
        method: "PATCH",
        target: `/v1/api-keys/${restrictedKey.id}`,
        body: { name: "Renamed", restrictions: { allowed_ips: null, sender_domains: ["acme.example", "mail.acme.example"], recipient_domains: null } },
      }),
    ]);
  });

  it("shows the updated key with its restrictions on a terminal", async () => {
    const result = await runCli(["api-keys", "update", restrictedKey.id, "--sender-domains", "acme.example"], { env: stubEnv, tty: true, fetch: stubApi(200, restrictedKey).fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^restrictions +ips 203\.0\.113\.0\/24 · from acme\.example · to anywhere$/m);
  });

  it.each([
    ["no flags", []],
    ["an empty list", ["--sender-domains", ","]],
    ["none among domains", ["--sender-domains", "none,acme.example"]],
  ])("exits 2 with nothing sent for %s", async (_, flags) => {
    const api = stubApi(200, restrictedKey);

    const result = await runCli(["api-keys", "update", restrictedKey.id, ...flags], { env: stubEnv, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toMatchObject({ error: "usage" });
    expect(api.seen).toEqual([]);
  });
});

describe("mailroom api-keys revoke", () => {
  it("revokes the key, which stops working at once", async () => {
    const key = await createKey("Leaked");

    const result = await runCli(["api-keys", "revoke", key.id, "--yes"], { env });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<ApiKey>()).toMatchObject({ id: key.id, revoked_at: expect.any(String) });
    expect(await works(key.secret)).toBe(false);
  });

  it("says Revoked. and shows the key as revoked on a terminal", async () => {
    const key = await createKey("Leaked too");

    const result = await runCli(["api-keys", "revoke", key.id, "--yes"], { env, tty: true });

    expect(result.stdout).toMatch(/^status\s+revoked$/m);
    expect(result.stdout).toMatch(/\n\nRevoked\.\n$/);
  });
});
