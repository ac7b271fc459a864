import { execFile } from "node:child_process";
import { createPrivateKey, randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { secretKeys } from "../../src/domain/secret-keys.js";
import { createRuntime } from "../../src/runtime.js";
import { IdempotencyService } from "../../src/services/idempotency.js";
import { SealedBox } from "../../src/services/sealed-box.js";
import { databases } from "../helpers/databases.js";
import { LAUNCHER, ROOT } from "../helpers/server-process.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

/*
 * Rotating SECRET_KEY (docs/deployment.md#rotating-the-secret-key): with the old key in
 * SECRET_KEY_PREVIOUS everything sealed or signed under it still opens, `reseal` moves the stored
 * values under the new key, and after that the old key is needed only by mail already sent.
 */
const OLD = "0a".repeat(32);
const NEW = "1b".repeat(32);
const OTHER = "2c".repeat(32);

describe.each(databases)("Rotating the secret key ($name)", (database) => {
  let t: TestApp;
  let domainId: string;
  let webhookId: string;
  let webhookSecret: string;
  const idempotent = { method: "POST" as const, url: "/v1/messages", payload: aMessage(), headers: { "idempotency-key": "order-42" } };
  let firstAnswer: string;

  beforeEach(async () => {
    t = await createTestApp(database, { SECRET_KEY: OLD });
    await t.verifiedDomain("acme.example");
    domainId = (await t.call({ method: "GET", url: "/v1/domains" })).json().data[0].id;
    const webhook = await t.call({ method: "POST", url: "/v1/webhooks", payload: { url: "http://127.0.0.1:9/hooks" } });
    expect(webhook.statusCode, webhook.body).toBe(201);
    ({ id: webhookId, secret: webhookSecret } = webhook.json());
    const sent = await t.call(idempotent);
    expect(sent.statusCode).toBe(202);
    firstAnswer = sent.body;
  });
  afterEach(() => t.close());

  /** Whether everything stored under the old key opens with the keys the server now has. */
  const expectStoredSecretsOpen = async () => {
    const identity = await t.runtime.services.domains.sendingIdentity(t.workspace.id, "acme.example");
    expect(identity!.signers).toHaveLength(2);
    for (const signer of identity!.signers) expect(() => createPrivateKey(signer.privateKeyPem)).not.toThrow();
    const secret = await t.call({ method: "GET", url: `/v1/webhooks/${webhookId}/secret` });
    expect(secret.statusCode, secret.body).toBe(200);
    expect(secret.json().secret).toBe(webhookSecret);
    const replay = await t.call(idempotent);
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.body).toBe(firstAnswer);
  };
  const reseal = () => t.runtime.services.reseal.run();

  it("opens what the old key sealed while it is listed in SECRET_KEY_PREVIOUS, and seals new values under the new key", async () => {
    await t.restart({ SECRET_KEY: NEW, SECRET_KEY_PREVIOUS: OLD });
    await expectStoredSecretsOpen();

    // A new endpoint's secret is sealed under the new key: reseal has nothing to do for it.
    const added = await t.call({ method: "POST", url: "/v1/webhooks", payload: { url: "http://127.0.0.1:9/other" } });
    expect(added.statusCode).toBe(201);
    const counts = await reseal();
    expect(counts.find((count) => count.name === "webhook_secrets")).toMatchObject({ rows: 2, resealed: 1 });
  });

  it("reseals every stored secret under the new key, once; after that the old key is not needed to open them", async () => {
    await t.restart({ SECRET_KEY: NEW, SECRET_KEY_PREVIOUS: OLD });
    const progress: string[] = [];
    expect(await t.runtime.services.reseal.run((count) => progress.push(`${count.name} ${count.rows}`))).toEqual([
      { name: "dkim_keys", rows: 1, resealed: 1, changed: 0, unreadable: 0 },
      { name: "webhook_secrets", rows: 1, resealed: 1, changed: 0, unreadable: 0 },
      { name: "idempotent_responses", rows: 1, resealed: 1, changed: 0, unreadable: 0 },
    ]);
    expect(progress).toEqual(["dkim_keys 1", "webhook_secrets 1", "idempotent_responses 1"]);
    expect((await reseal()).map((count) => count.resealed)).toEqual([0, 0, 0]);

    await t.restart({ SECRET_KEY: NEW, SECRET_KEY_PREVIOUS: "" });
    await expectStoredSecretsOpen();
  });

  it("reports values no listed key opens, and leaves them as they are", async () => {
    await t.restart({ SECRET_KEY: NEW, SECRET_KEY_PREVIOUS: OTHER });
    const stored = await t.runtime.db.knex("webhook_endpoints").where({ id: webhookId }).first("secret");
    expect((await reseal()).map((count) => count.unreadable)).toEqual([1, 1, 1]);
    expect(await t.runtime.db.knex("webhook_endpoints").where({ id: webhookId }).first("secret")).toEqual(stored);

    await t.restart({ SECRET_KEY: NEW, SECRET_KEY_PREVIOUS: `${OTHER},${OLD}` });
    expect((await reseal()).map((count) => count.resealed)).toEqual([1, 1, 1]);
  });

  it("pages through every workspace's and environment's stored responses, past keys that sort alike", async () => {
    for (const [key, idempotencyKey] of [[t.workspace.liveKey, "order-42"], [t.other.sandboxKey, "order-42"], [undefined, "order-42a"], [undefined, "Order-42"]] as const) {
      const res = await t.call({ ...idempotent, ...(key ? { key } : {}), headers: { "idempotency-key": idempotencyKey }, payload: aMessage(key === t.workspace.liveKey ? { from: "hello@acme.example" } : {}) });
      expect(res.statusCode, res.body).toBe(202);
    }
    const store = t.runtime.repositories.idempotency;
    const seen: string[] = [];
    for (let after: string | null = null; ; ) {
      const page = await store.sealedPage(after, 2);
      seen.push(...page.map((row) => row.key));
      if (page.length < 2) break;
      after = page[page.length - 1]!.key;
    }
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);
    expect([...seen].sort()).toEqual(seen);
  });

  it("leaves a row that changed after it was read: a secret rotated meanwhile wins", async () => {
    await t.restart({ SECRET_KEY: NEW, SECRET_KEY_PREVIOUS: OLD });
    const store = t.runtime.repositories.webhookEndpoints;
    const [row] = await store.sealedPage(null, 10);
    const rotated = await t.call({ method: "POST", url: `/v1/webhooks/${webhookId}/rotate-secret`, payload: {} });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(await store.replaceSealed(row!, ["stale", null])).toBe(false);
    expect((await t.call({ method: "GET", url: `/v1/webhooks/${webhookId}/secret` })).json().secret).toBe(rotated.json().secret);

    const [domain] = await t.runtime.repositories.domains.sealedPage(null, 10);
    await t.call({ method: "DELETE", url: `/v1/domains/${domainId}` });
    expect(await t.runtime.repositories.domains.replaceSealed(domain!, ["stale", "stale"])).toBe(false);
  });
});

describe.each(databases)("mailroom-server reseal ($name)", (database) => {
  it("reseals what the old key sealed, printing the counts as JSON, and exits 1 when a value opens under no key given", async () => {
    const db = await database.create();
    try {
      const env = { ...process.env, DATABASE_URL: db.url, DATA_DIR: db.dataDir, LOG_LEVEL: "silent" };
      const runtime = await createRuntime(loadConfig({ ...env, SECRET_KEY: OLD } as Record<string, string>));
      const { workspace_id } = await runtime.services.workspace.bootstrap("Acme");
      await runtime.services.domains.create({ workspaceId: workspace_id, environment: "live", credential: { kind: "api_key", id: "test", permission: "full_access" } }, { name: "acme.example" });
      await runtime.close();

      const run = (keys: Record<string, string>, args: string[]) => promisify(execFile)(LAUNCHER, ["reseal", ...args], { cwd: ROOT, env: { ...env, ...keys }, timeout: 60_000 });
      const resealed = await run({ SECRET_KEY: NEW, SECRET_KEY_PREVIOUS: OLD }, ["--json"]);
      expect(JSON.parse(resealed.stdout)).toEqual({
        counts: [
          { name: "dkim_keys", rows: 1, resealed: 1, changed: 0, unreadable: 0 },
          { name: "webhook_secrets", rows: 0, resealed: 0, changed: 0, unreadable: 0 },
          { name: "idempotent_responses", rows: 0, resealed: 0, changed: 0, unreadable: 0 },
        ],
        unreadable: 0,
      });

      // Piped, without --json, it prints JSON too (as the CLI does).
      const lost = await run({ SECRET_KEY: OTHER }, []).then(
        () => null,
        (error: { code: number; stdout: string }) => error,
      );
      expect(lost?.code).toBe(1);
      expect(JSON.parse(lost!.stdout)).toMatchObject({ counts: [{ name: "dkim_keys", rows: 1, resealed: 0, unreadable: 1 }, {}, {}], unreadable: 1 });
    } finally {
      await db.drop();
    }
  });

  it("reseals large answers stored before answers were deflated, a few at a time, each statement carrying its answer once", async () => {
    const db = await database.create();
    try {
      const env = { ...process.env, DATABASE_URL: db.url, DATA_DIR: db.dataDir, LOG_LEVEL: "silent" };
      let runtime = await createRuntime(loadConfig({ ...env, SECRET_KEY: OLD } as Record<string, string>));
      const { workspace_id } = await runtime.services.workspace.bootstrap("Acme");
      const scope = { workspaceId: workspace_id, environment: "live" as const };
      const fingerprint = IdempotencyService.fingerprint("createMessage", "/v1/messages", {});
      const caller = { type: "api_key" as const, id: "key_script" };
      // Three answers of 12 MiB sealed, as earlier versions sealed them (not deflated): an update
      // carrying one twice (to compare, then to write) is past max_allowed_packet (16 MiB).
      const legacy = new SealedBox(secretKeys(OLD), "idempotent-responses");
      const answers = ["big-1", "big-2", "big-3"].map((key) => ({ key, body: JSON.stringify({ html: randomBytes(6.75 * 1024 * 1024).toString("base64") }) }));
      for (const { key, body } of answers) {
        expect((await runtime.services.idempotency.claim(scope, key, fingerprint, caller)).kind).toBe("proceed");
        const response = legacy.seal(JSON.stringify({ status: 202, headers: { "content-type": "application/json; charset=utf-8" }, body }));
        expect(response.length).toBeGreaterThan(12 * 1024 * 1024);
        await runtime.db.knex("idempotency_keys").where({ workspace_id, environment: "live", idempotency_key: key }).update({ state: "done", response_status: 202, response });
      }
      // No more than 32 MiB of answers in hand at once.
      expect(await runtime.repositories.idempotency.sealedPage(null, 200)).toHaveLength(2);
      await runtime.close();

      const resealed = await promisify(execFile)(LAUNCHER, ["reseal", "--json"], { cwd: ROOT, env: { ...env, SECRET_KEY: NEW, SECRET_KEY_PREVIOUS: OLD }, timeout: 120_000, maxBuffer: 1024 * 1024 });
      expect(JSON.parse(resealed.stdout).counts[2]).toEqual({ name: "idempotent_responses", rows: 3, resealed: 3, changed: 0, unreadable: 0 });

      runtime = await createRuntime(loadConfig({ ...env, SECRET_KEY: NEW } as Record<string, string>));
      try {
        for (const { key, body } of answers) {
          const replay = await runtime.services.idempotency.claim(scope, key, fingerprint, caller);
          expect(replay.kind === "replay" && replay.response.body === body).toBe(true);
        }
      } finally {
        await runtime.close();
      }
    } finally {
      await db.drop();
    }
  }, 120_000);
});
