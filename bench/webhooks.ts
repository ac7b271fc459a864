/**
 * Webhook delivery (docs/performance.md, "Webhooks"): how many deliveries per second a worker
 * process sends to a local receiver, with one endpoint and with 50 endpoints one of which is slow,
 * and the latency from an event's creation to its receipt at a steady 500 events/s. Each figure
 * is printed beside a baseline taken in the same run: the same receiver driven by a plain
 * keep-alive node:http client posting the same signed payloads with the same concurrency, and
 * nothing else (no database, no queue). `make bench` runs it, or:
 *
 *   node_modules/.bin/tsx bench/webhooks.ts
 *
 * Processes: the receiver (bench/webhook-receiver.ts) and the worker (`bin/mailroom-server serve
 * --role worker`, as production runs it) each have their own. This process prepares the database through
 * the services (src/runtime.ts): a workspace, the endpoints (subscribed to message.scheduled) and
 * the backlog, accepted as scheduled sandbox messages a day ahead, so each message makes exactly
 * one event and the delivery worker has nothing to do while the dispatcher is measured.
 *
 * Environment:
 *   BENCH_WEBHOOK_EVENTS (10000)     events of the one-endpoint run
 *   BENCH_WEBHOOK_FANOUT_EVENTS (400) events of the 50-endpoint run (x 50 deliveries)
 *   BENCH_WEBHOOK_RATE (500)         events/s of the latency run
 *   BENCH_WEBHOOK_SECONDS (20)       length of the latency run
 *   BENCH_SLOW_MS (2000)             how long the slow endpoint takes to answer
 *   BENCH_QUIET_WAIT_S (8)           at most this long, before each timed part, wait for quiet
 *   BENCH_WORKER_NODE_ARGS           extra node flags for the worker, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"
 */
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config.js";
import type { Principal } from "../src/domain/environments.js";
import { createRuntime, type Runtime } from "../src/runtime.js";
import { webhookHeaders } from "../src/webhooks/signing.js";
import { CLK_TCK, intEnv, onCleanup, processTicks, runMain, sleep, startMailroom, startProcess, waitForQuiet, type Proc } from "./machine.js";

const EVENTS = intEnv("BENCH_WEBHOOK_EVENTS", 10_000);
const FANOUT_EVENTS = intEnv("BENCH_WEBHOOK_FANOUT_EVENTS", 400);
const RATE = intEnv("BENCH_WEBHOOK_RATE", 500);
const SECONDS = intEnv("BENCH_WEBHOOK_SECONDS", 20);
const SLOW_MS = intEnv("BENCH_SLOW_MS", 2000);
const QUIET_WAIT_S = intEnv("BENCH_QUIET_WAIT_S", 8);
const WORKER_NODE_ARGS = (process.env.BENCH_WORKER_NODE_ARGS ?? "").split(/\s+/).filter(Boolean);
const ENDPOINTS = 50;
const TARGET = { rate: 2000, p99Ms: 1000 };
/** The defaults of WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT and WEBHOOK_CONCURRENCY: the baseline gets the same. */
const PER_ENDPOINT = 10;
const TOTAL = 200;
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

interface Stats {
  fast: number;
  slow: number;
  duplicates: number;
  firstAt: number;
  lastAt: number;
  latencies: number[];
}

async function main(): Promise<void> {
  const receiver = startProcess(["--import", "tsx", "bench/webhook-receiver.ts"], { ...process.env, SLOW_MS: String(SLOW_MS) });
  const port = await firstLine(receiver);
  const base = `http://127.0.0.1:${port}`;
  const stats = async (): Promise<Stats> => (await fetch(`${base}/stats`)).json() as Promise<Stats>;
  const reset = async () => void (await fetch(`${base}/reset`, { method: "POST" }));
  const lines: string[] = [];
  const say = (line: string) => {
    console.log(line);
    lines.push(line);
  };

  // 1. One endpoint, a backlog.
  {
    const baseline = await baselineRate(base, ["/one"], EVENTS, PER_ENDPOINT, reset, stats);
    const run = await backlogRun(base, ["/one"], EVENTS, reset, stats);
    say(`one endpoint:      ${fmt(run.rate)} deliveries/s (baseline plain client ${fmt(baseline)} /s, ${pct(run.rate / baseline)}); target >= ${TARGET.rate}/s: ${run.rate >= TARGET.rate ? "met" : "NOT met"}`);
    say(`                   worker CPU ${Math.round(run.cpuUs)} µs per delivery (${fmt(1e6 / run.cpuUs)} deliveries/s per core); duplicates ${run.duplicates}`);
  }

  // 2. Fifty endpoints, one of which answers after SLOW_MS.
  {
    const paths = Array.from({ length: ENDPOINTS }, (_, i) => (i === 0 ? "/slow" : `/fast/${i}`));
    const fastPaths = paths.slice(1);
    const baseline = await baselineRate(base, fastPaths, FANOUT_EVENTS, TOTAL, reset, stats);
    const run = await backlogRun(base, paths, FANOUT_EVENTS, reset, stats);
    say(`50 endpoints, 1 slow (${SLOW_MS} ms): ${fmt(run.rate)} deliveries/s to the 49 others (baseline plain client ${fmt(baseline)} /s, ${pct(run.rate / baseline)}); target >= ${TARGET.rate}/s: ${run.rate >= TARGET.rate ? "met" : "NOT met"}`);
    say(`                   the slow one received ${run.slow} meanwhile (cap ${PER_ENDPOINT} in flight); worker CPU ${Math.round(run.cpuUs)} µs per delivery; duplicates ${run.duplicates}`);
  }

  // 3. Steady rate: latency from creation to receipt.
  {
    const baseline = await baselineLatency(base, reset, stats);
    const run = await steadyRun(base, reset, stats);
    say(`latency at ${RATE} events/s for ${SECONDS} s: p50 ${run.p50} ms, p99 ${run.p99} ms (baseline plain client p50 ${baseline.p50} ms, p99 ${baseline.p99} ms); target p99 < ${TARGET.p99Ms} ms: ${run.p99 < TARGET.p99Ms ? "met" : "NOT met"}`);
    say(`                   ${run.received}/${run.sent} received, duplicates ${run.duplicates}`);
  }
  console.log(`\nsummary:\n${lines.join("\n")}`);
}

// --- Mailroom runs ------------------------------------------------------------------------------

interface Prepared {
  env: NodeJS.ProcessEnv;
  principal: Principal;
  dir: string;
}

/** A fresh SQLite database with a workspace, one endpoint per path, and `backlog` events for each. */
async function prepare(base: string, paths: string[], backlog: number): Promise<Prepared> {
  const dir = mkdtempSync(join(tmpdir(), "mailroom-bench-webhooks-"));
  onCleanup(async () => rmSync(dir, { recursive: true, force: true }));
  const env = { ...process.env, DATABASE_URL: `sqlite:${join(dir, "mailroom.db")}`, DATA_DIR: dir, LOG_LEVEL: "warn", WEBHOOK_ALLOW_PRIVATE_TARGETS: "true", NODE_ENV: "production" };
  const runtime = await createRuntime(loadConfig(env));
  try {
    const { workspace_id } = await runtime.services.workspace.bootstrap("Bench");
    const principal: Principal = { workspaceId: workspace_id, environment: "sandbox", credential: { kind: "api_key", id: "bench", permission: "full_access" } };
    for (const path of paths) await runtime.services.webhooks.create(principal, { url: `${base}${path}`, event_types: ["message.scheduled"] });
    await accept(runtime, principal, backlog);
    return { env, principal, dir };
  } finally {
    await runtime.close();
  }
}

/** Accepts `count` sandbox messages scheduled a day ahead: one message.scheduled event each. */
async function accept(runtime: Runtime, principal: Principal, count: number): Promise<void> {
  const scheduled_at = new Date(Date.now() + 86_400_000).toISOString();
  for (let done = 0; done < count; done += 100) {
    const batch = Array.from({ length: Math.min(100, count - done) }, () => ({ from: "Bench <bench@acme.example>", to: "ada@example.com", subject: "Bench", text: "Bench", scheduled_at }));
    await runtime.services.messages.createBatch(principal, batch, null);
  }
}

async function backlogRun(base: string, paths: string[], events: number, reset: () => Promise<void>, stats: () => Promise<Stats>) {
  const prepared = await prepare(base, paths, events);
  const expected = events * paths.filter((p) => !p.startsWith("/slow")).length;
  await reset();
  console.error(`  quiet: ${await waitForQuiet(QUIET_WAIT_S)}`);
  const worker = startMailroom(["serve", "--role", "worker"], prepared.env, WORKER_NODE_ARGS);
  try {
    // CPU is counted from the first receipt on, so start-up (loading the code) is left out.
    const first = await waitFor(stats, (s) => s.fast > 0, 60_000, worker);
    const ticks = processTicks(worker.child.pid);
    const result = await waitFor(stats, (s) => s.fast >= expected, 300_000, worker);
    const cpuUs = (((processTicks(worker.child.pid) - ticks) / CLK_TCK) * 1e6) / Math.max(1, result.fast + result.slow - first.fast - first.slow);
    return { rate: ((result.fast - 1) / Math.max(1, result.lastAt - result.firstAt)) * 1000, ...percentiles(result.latencies), slow: result.slow, duplicates: result.duplicates, cpuUs };
  } finally {
    await stop(worker);
  }
}

async function steadyRun(base: string, reset: () => Promise<void>, stats: () => Promise<Stats>) {
  const prepared = await prepare(base, ["/steady"], 0);
  const worker = startMailroom(["serve", "--role", "worker"], prepared.env, WORKER_NODE_ARGS);
  // The generator plays the API's part: its own runtime on the same database, accepting in batches.
  const runtime = await createRuntime(loadConfig(prepared.env));
  try {
    await reset();
    await accept(runtime, prepared.principal, 10); // warm-up: the worker is up once these arrive
    await waitFor(stats, (s) => s.fast >= 10, 60_000, worker);
    await reset();
    console.error(`  quiet: ${await waitForQuiet(QUIET_WAIT_S)}`);
    const tickMs = 100;
    const perTick = Math.max(1, Math.round((RATE * tickMs) / 1000));
    const ticks = Math.round((SECONDS * 1000) / tickMs);
    const start = Date.now();
    for (let i = 0; i < ticks; i++) {
      void accept(runtime, prepared.principal, perTick);
      const next = start + (i + 1) * tickMs;
      await sleep(Math.max(0, next - Date.now()));
    }
    const sent = perTick * ticks;
    const result = await waitFor(stats, (s) => s.fast >= sent, 60_000, worker);
    return { ...percentiles(result.latencies), sent, received: result.fast, duplicates: result.duplicates };
  } finally {
    await runtime.close();
    await stop(worker);
  }
}

// --- the baseline: a plain keep-alive client, the same payloads, the same concurrency -----------------

function signed(path: string, i: number): { path: string; headers: Record<string, string>; body: string } {
  const id = `evt_bench${String(i).padStart(20, "0")}`;
  const body = JSON.stringify({ id, object: "event", type: "message.scheduled", created_at: new Date().toISOString(), environment: "sandbox", message_id: "msg_bench", recipient: null, sequence: 1, from_status: null, to_status: "scheduled", tags: [], metadata: {}, idempotency_key: null, data: { scheduled_at: new Date().toISOString() } });
  return { path, headers: webhookHeaders([SECRET], id, Math.floor(Date.now() / 1000), body), body };
}

const agent = new Agent({ keepAlive: true });

function post(base: string, { path, headers, body }: ReturnType<typeof signed>): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method: "POST", agent, headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } }, (res) => {
      res.resume();
      res.on("end", () => resolve());
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function baselineRate(base: string, paths: string[], events: number, concurrency: number, reset: () => Promise<void>, stats: () => Promise<Stats>): Promise<number> {
  await reset();
  console.error(`  quiet: ${await waitForQuiet(QUIET_WAIT_S)}`);
  const total = events * paths.length;
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        await post(base, signed(paths[i % paths.length]!, i));
      }
    }),
  );
  const result = await stats();
  return ((result.fast - 1) / Math.max(1, result.lastAt - result.firstAt)) * 1000;
}

async function baselineLatency(base: string, reset: () => Promise<void>, stats: () => Promise<Stats>): Promise<{ p50: number; p99: number }> {
  await reset();
  const tickMs = 100;
  const perTick = Math.max(1, Math.round((RATE * tickMs) / 1000));
  const ticks = Math.round((Math.min(SECONDS, 10) * 1000) / tickMs);
  const start = Date.now();
  const pending: Array<Promise<void>> = [];
  for (let i = 0; i < ticks; i++) {
    for (let j = 0; j < perTick; j++) pending.push(post(base, signed("/baseline", i * perTick + j)));
    await sleep(Math.max(0, start + (i + 1) * tickMs - Date.now()));
  }
  await Promise.all(pending);
  return percentiles((await stats()).latencies);
}

// --- helpers ------------------------------------------------------------------------------------

async function waitFor(stats: () => Promise<Stats>, done: (s: Stats) => boolean, timeoutMs: number, worker: Proc): Promise<Stats> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await stats();
    if (done(s)) return s;
    if (worker.child.exitCode !== null) throw new Error(`worker exited (${worker.child.exitCode}):\n${worker.output()}`);
    if (Date.now() > deadline) throw new Error(`timed out with ${s.fast} deliveries received:\n${worker.output()}`);
    await sleep(100);
  }
}

function percentiles(values: number[]): { p50: number; p99: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99) };
}

async function firstLine(proc: Proc): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = Number(proc.output().trim().split("\n")[0]);
    if (port > 0) return port;
    await sleep(50);
  }
  throw new Error(`receiver did not start:\n${proc.output()}`);
}

async function stop(proc: Proc): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.child.once("exit", () => resolve()));
  proc.child.kill("SIGTERM");
  await Promise.race([exited, sleep(15_000).then(() => proc.child.kill("SIGKILL"))]);
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
const pct = (ratio: number) => `${Math.round(ratio * 100)}% of it`;

runMain(main);
