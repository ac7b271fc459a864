import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { databases } from "../helpers/databases.js";
import { headersOf, RECIPIENT_DOMAIN, startLiveHarness, type LiveHarness } from "../helpers/live-delivery.js";
import type { ReceivedMail } from "../helpers/smtp-sink.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const MESSAGES = 1000;
const LEASE_SECONDS = 5;
const BATCH_SIZE = 50;
/** What a worker holds at once: max(WORKER_BATCH_SIZE, DELIVERY_CONCURRENCY). */
const IN_FLIGHT = 50;

/**
 * Worker processes (`serve --role worker`) against one database, as production runs them: the
 * queue is the database, so a worker killed mid-send loses nothing (its leased jobs are taken
 * over when the lease ends) and two workers never send the same message (SKIP LOCKED claims).
 * Plain `node --import tsx`, one process per worker, so that SIGKILL hits the worker itself.
 */
describe.each(databases)("worker processes ($name)", (database) => {
  let h: LiveHarness;
  const workers: ChildProcess[] = [];
  afterEach(async () => {
    for (const worker of workers.splice(0)) if (worker.exitCode === null && worker.signalCode === null) worker.kill("SIGKILL");
    await h?.close();
  });

  const startWorker = (): ChildProcess => {
    const { config } = h.t.runtime;
    const env = {
      ...process.env,
      DATABASE_URL: config.databaseUrl,
      DATA_DIR: config.dataDir,
      SECRET_KEY: config.secretKey ?? "",
      DNS_SERVERS: config.delivery.dnsServers.join(","),
      SMTP_MX_PORT: String(config.delivery.mxPort),
      SENDING_HOSTNAME: config.delivery.hostname,
      JOB_LEASE_SECONDS: String(LEASE_SECONDS),
      WORKER_BATCH_SIZE: String(BATCH_SIZE),
      DELIVERY_CONCURRENCY: String(IN_FLIGHT),
      WORKER_POLL_MS: "50",
      LOG_LEVEL: "warn",
    };
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", "serve", "--role", "worker"], { cwd: ROOT, env, stdio: ["ignore", "ignore", "inherit"] });
    workers.push(child);
    return child;
  };

  /** Accepts `count` live messages through the batch operation; returns their Message-IDs. */
  const acceptMessages = async (count: number): Promise<string[]> => {
    const ids: string[] = [];
    for (let start = 0; start < count; start += 100) {
      const messages = Array.from({ length: Math.min(100, count - start) }, (_, i) => ({ from: "Acme <hello@acme.example>", to: `user${start + i}@${RECIPIENT_DOMAIN}`, subject: `Message ${start + i}`, text: "Hello" }));
      const res = await h.t.call({ method: "POST", url: "/v1/messages/batch", key: h.t.workspace.liveKey, payload: { messages } });
      expect(res.statusCode, res.body).toBe(200);
      for (const item of res.json().data) {
        expect(item.status).toBe(202);
        ids.push(item.message.message_id_header);
      }
    }
    return ids;
  };

  const messageIdOf = (mail: ReceivedMail) => headersOf(mail.raw).find(([name]) => name.toLowerCase() === "message-id")![1];
  const counts = (mails: ReceivedMail[]) => {
    const byId = new Map<string, number>();
    for (const mail of mails) byId.set(messageIdOf(mail), (byId.get(messageIdOf(mail)) ?? 0) + 1);
    return byId;
  };
  const waitUntil = async (condition: () => boolean, timeoutMs: number, what: string) => {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it(
    "loses nothing when a worker is killed (-9) mid-send: every message arrives, duplicates only for what the dead worker had in flight",
    async () => {
      h = await startLiveHarness(database);
      const accepted = await acceptMessages(MESSAGES);

      const first = startWorker();
      await waitUntil(() => h.sink.accepted.length >= 200, 60_000, "the first worker to deliver 200 messages");
      first.kill("SIGKILL");
      await new Promise((resolve) => first.once("exit", resolve));
      const beforeRestart = h.sink.messages.length;

      startWorker();
      await waitUntil(() => new Set(h.sink.accepted.map(messageIdOf)).size >= MESSAGES, 120_000, "every message to arrive after the restart");

      const received = counts(h.sink.messages);
      for (const id of accepted) expect(received.get(id), id).toBeGreaterThanOrEqual(1);
      const duplicates = [...received.values()].filter((n) => n > 1).length;
      // Only a message whose hand-off had happened when the worker died but whose outcome was
      // not committed yet can arrive twice: at most what the dead worker held.
      expect(duplicates).toBeLessThanOrEqual(IN_FLIGHT);
      expect(beforeRestart).toBeGreaterThanOrEqual(200);

      // And the database agrees: every message delivered once its outcome is committed.
      const undelivered = async () => Number(((await h.t.runtime.db.knex("messages").whereNot({ status: "delivered" }).count({ n: "*" }).first()) as { n: number | string }).n);
      const deadline = Date.now() + 30_000;
      while ((await undelivered()) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await undelivered()).toBe(0);
    },
    240_000,
  );

  it.runIf(database.name === "mysql")(
    "never lets two workers on one MariaDB send the same message (SKIP LOCKED)",
    async () => {
      h = await startLiveHarness(database);
      const accepted = await acceptMessages(MESSAGES);
      startWorker();
      startWorker();
      await waitUntil(() => h.sink.accepted.length >= MESSAGES, 120_000, "every message to arrive");
      await new Promise((resolve) => setTimeout(resolve, 1000)); // anything sent twice would arrive by now
      const received = counts(h.sink.messages);
      expect(received.size).toBe(MESSAGES);
      for (const id of accepted) expect(received.get(id), id).toBe(1);
    },
    240_000,
  );
});
