/**
 * Durable accept rate of the SMTP submission server (docs/smtp.md) against a bare SMTP server,
 * in one run on one machine (docs/performance.md#smtp-submission). `make bench`, or:
 *
 *   node_modules/.bin/tsx bench/submission.ts
 *
 * Both servers run in child processes; nodemailer's pooled SMTP transport, as an application
 * would use it, drives them from this process with the same messages (each its own Message-ID).
 *
 * 1. Baseline: bench/smtp-sink.ts, smtp-server reading every message to its end and answering
 *    250 (no AUTH, no parsing, no storage).
 * 2. Mailroom: `mailroom-server serve --role submission` on a fresh SQLite database with a
 *    sandbox key: AUTH, MIME parsing, the createMessage checks, and a durable commit before each
 *    250. Killed with SIGKILL after the run, then the stored messages are counted: every 250
 *    must be there.
 *
 * Environment:
 *   BENCH_SUBMISSION_CONNECTIONS (10)  pooled connections (nodemailer's maxConnections)
 *   BENCH_SUBMISSION_MESSAGES (10000)  messages per measured run, after 500 to warm up
 *   BENCH_QUIET_WAIT_S (8)             before each run, wait up to this long for a quiet machine
 *   BENCH_SERVER_NODE_ARGS             extra node flags for Mailroom, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"
 *                                      (it is then stopped with SIGTERM, so that the profile is written)
 *
 * Exit status 0 whatever the figures (this is a report).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import knexFactory from "knex";
import { createTransport } from "nodemailer";
import MailComposer from "nodemailer/lib/mail-composer/index.js";
import { CLK_TCK, freePort, intEnv, machineBusy, onCleanup, processTicks, runMain, SERVER_ENV, SERVER_NODE_ARGS, sleep, startMailroom, startProcess, bootstrapSandboxKey, waitForQuiet, type Proc } from "./machine.js";

const CONNECTIONS = intEnv("BENCH_SUBMISSION_CONNECTIONS", 10);
const MESSAGES = intEnv("BENCH_SUBMISSION_MESSAGES", 10_000);
const WARMUP = 500;
const QUIET_WAIT_S = intEnv("BENCH_QUIET_WAIT_S", 8);
/** Sends outstanding at once: enough to keep every connection busy. */
const IN_FLIGHT = CONNECTIONS * 20;

interface Run {
  name: string;
  accepted: number;
  refused: number;
  seconds: number;
  p50: number;
  p99: number;
  serverCpuUs: number;
  othersCores: number;
  quiet: string;
}

/** A shipping notice of ~2 KB of HTML and its text, composed once; each send gets its own Message-ID. */
async function template(): Promise<Buffer> {
  const rows = ["Espresso beans, 1 kg", "Ceramic pour-over dripper", "Paper filters (100)", "Burr grinder"].map((item) => `<tr><td>${item}</td><td>12.50 EUR</td></tr>`).join("");
  let html = `<h1>Your order #A-10482 has shipped</h1><p>Hello Ada, your parcel left our warehouse this morning.</p><table>${rows}</table>`;
  while (html.length < 2000) html += "<p>Questions? Reply to this email or write to support@shop.example.com.</p>";
  const composer = new MailComposer({ from: "Shop <orders@shop.example.com>", to: "ada@example.net", subject: "Your order has shipped", html, messageId: "<bench-0000000000@app.example>", headers: { "X-Mailroom-Tags": "shipping" } });
  return new Promise((resolve, reject) => composer.compile().build((error, raw) => (error ? reject(error) : resolve(raw))));
}

function withMessageId(raw: Buffer, n: number): Buffer {
  return Buffer.from(raw.toString("latin1").replace("<bench-0000000000@", `<bench-${String(n).padStart(10, "0")}@`), "latin1");
}

/** Sends `count` messages through a pool to `port`, IN_FLIGHT at a time; latencies in ms. */
async function drive(port: number, auth: { user: string; pass: string } | null, raw: Buffer, first: number, count: number): Promise<{ accepted: number; refused: number; seconds: number; latencies: number[]; lastError: string | null }> {
  const transport = createTransport({ pool: true, host: "127.0.0.1", port, maxConnections: CONNECTIONS, maxMessages: Infinity, ignoreTLS: true, ...(auth ? { auth } : {}) });
  const latencies: number[] = [];
  let accepted = 0;
  let refused = 0;
  let lastError: string | null = null;
  let next = first;
  const started = performance.now();
  const worker = async () => {
    while (next < first + count) {
      const n = next++;
      const at = performance.now();
      try {
        await transport.sendMail({ envelope: { from: "orders@shop.example.com", to: ["ada@example.net"] }, raw: withMessageId(raw, n) });
        latencies.push(performance.now() - at);
        accepted++;
      } catch (error) {
        refused++;
        lastError = String((error as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const seconds = (performance.now() - started) / 1000;
  transport.close();
  return { accepted, refused, seconds, latencies, lastError };
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function measure(name: string, server: Proc, port: number, auth: { user: string; pass: string } | null, raw: Buffer, offset: number): Promise<Run> {
  await drive(port, auth, raw, offset, WARMUP);
  const quiet = await waitForQuiet(QUIET_WAIT_S);
  const busyBefore = machineBusy();
  const serverBefore = processTicks(server.child.pid);
  const selfBefore = process.cpuUsage();
  const result = await drive(port, auth, raw, offset + WARMUP, MESSAGES);
  const serverTicks = processTicks(server.child.pid) - serverBefore;
  const self = process.cpuUsage(selfBefore);
  const othersCores = Math.max(0, (machineBusy() - busyBefore - serverTicks) / CLK_TCK - (self.user + self.system) / 1e6) / result.seconds;
  if (result.refused > 0) console.error(`${name}: ${result.refused} refused, the last: ${result.lastError}`);
  const sorted = result.latencies.sort((a, b) => a - b);
  return { name, accepted: result.accepted, refused: result.refused, seconds: result.seconds, p50: percentile(sorted, 50), p99: percentile(sorted, 99), serverCpuUs: ((serverTicks / CLK_TCK) * 1e6) / Math.max(1, result.accepted), othersCores, quiet };
}

async function waitForSmtp(server: Proc, port: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null) throw new Error(`server exited (${server.child.exitCode}):\n${server.output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.destroy();
        resolve(true);
      }).on("error", () => resolve(false));
    });
    if (open) return;
    await sleep(100);
  }
  throw new Error(`nothing listens on ${port}:\n${server.output()}`);
}

async function main(): Promise<void> {
  const raw = await template();
  console.log(`SMTP submission: ${MESSAGES} messages of ${raw.length} bytes per run, ${CONNECTIONS} pooled connections, ${IN_FLIGHT} sends in flight, node ${process.version}\n`);

  const sink = startProcess(["--import", "tsx", "bench/smtp-sink.ts"], { ...process.env, NODE_ENV: "production" }, true);
  const sinkPort = await new Promise<number>((resolve) => sink.child.on("message", (m: { type: string; port: number }) => m.type === "listening" && resolve(m.port)));
  const baseline = await measure("bare smtp-server (reads, answers 250)", sink, sinkPort, null, raw, 0);
  sink.child.kill("SIGKILL");

  const dataDir = mkdtempSync(join(tmpdir(), "mailroom-bench-submission-"));
  onCleanup(async () => rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const env = { ...process.env, ...SERVER_ENV, DATA_DIR: dataDir, DATABASE_URL: `sqlite:${join(dataDir, "mailroom.db")}`, SUBMISSION_SMTP_PORT: String(port) };
  const key = await bootstrapSandboxKey(env);
  const server = startMailroom(["serve", "--role", "submission"], env, SERVER_NODE_ARGS);
  await waitForSmtp(server, port);
  const mailroom = await measure("Mailroom submission, SQLite (AUTH, parse, check, durable commit)", server, port, { user: "mailroom", pass: key }, raw, 1_000_000);
  // A crash, not a shutdown: what was answered 250 must already be on disk (unless profiling).
  server.child.kill(SERVER_NODE_ARGS.length > 0 ? "SIGTERM" : "SIGKILL");
  await new Promise((resolve) => server.child.once("exit", resolve));
  // better-sqlite3, read-only, on the file the killed server left behind (WAL included).
  const db = knexFactory({ client: "better-sqlite3", connection: { filename: join(dataDir, "mailroom.db"), options: { readonly: true } }, useNullAsDefault: true });
  const stored = Number((await db("messages").count({ n: "*" }).first())?.n ?? 0);
  await db.destroy();

  const rows = [baseline, mailroom].map((run) => [
    run.name,
    Math.round(run.accepted / run.seconds).toLocaleString("en"),
    run.p50.toFixed(2),
    run.p99.toFixed(2),
    String(run.refused),
    (run.accepted / run.seconds / (baseline.accepted / baseline.seconds)).toFixed(2),
    Math.round(run.serverCpuUs).toLocaleString("en"),
    `${run.othersCores.toFixed(2)}${run.othersCores > 0.3 ? " (contaminated)" : ""}; ${run.quiet}`,
  ]);
  console.log("| name | msgs/s | p50 ms | p99 ms | refused | ratio to bare | server CPU µs/msg | other processes, cores |");
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
  for (const row of rows) console.log(`| ${row.join(" | ")} |`);
  const answered = WARMUP + mailroom.accepted;
  console.log(`\ndurability: ${stored} messages stored after SIGKILL for ${answered} answered 250 (warm-up included): ${stored >= answered ? "every one" : `${answered - stored} LOST`}`);
}

runMain(main);
