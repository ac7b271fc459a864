/**
 * Durable accept rate of `POST /v1/messages` against a bare Fastify route, in one run on one
 * machine (docs/performance.md). `make bench`, or:
 *
 *   node_modules/.bin/tsx bench/accept.ts
 *
 * Every server under test runs in its own child process (`node --import tsx ...`); autocannon
 * drives it from this process, which does nothing else while a run is measured. Per variant:
 * start the server, warm up, measure at a fixed number of connections, kill the server with
 * SIGKILL (a crash, not a clean shutdown) and count the stored messages: every 202 must be there.
 *
 * Environment:
 *   BENCH_CONNECTIONS (50)  BENCH_WARMUP_S (3)  BENCH_DURATION_S (10)
 *   BENCH_MYSQL_URL         also run on a fresh MariaDB/MySQL database (created and dropped)
 *   BENCH_ONLY              comma list of variants to run (bare is always run): sqlite-api,
 *                           sqlite-all, mysql-api, mysql-all
 *   BENCH_SERVER_NODE_ARGS  extra node flags for the real server, e.g. "--cpu-prof
 *                           --cpu-prof-dir=/tmp/prof" (the server is then stopped with SIGTERM
 *                           so that the profile is written)
 *   BENCH_QUIET_WAIT_S (8)  at most this long, before each variant, wait for the machine to be
 *                           quiet (other jobs' CPU skews a 2-core machine badly)
 *
 * Exit status 0 whether or not the targets are met (this is a report); 1 if the baseline
 * itself could not be measured.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon, { type Result } from "autocannon";
import knexFactory from "knex";
import mysql from "mysql2/promise";
import { CLK_TCK, intEnv, startProcess, onCleanup, runMain, machineBusy, processTicks, databasePids, waitForQuiet, freePort, waitForHttp, stop, bootstrapSandboxKey, startServer, SERVER_ENV, SERVER_NODE_ARGS, type Server } from "./machine.js";

const CONNECTIONS = intEnv("BENCH_CONNECTIONS", 50);
const WARMUP_S = intEnv("BENCH_WARMUP_S", 3);
const DURATION_S = intEnv("BENCH_DURATION_S", 10);
const QUIET_WAIT_S = intEnv("BENCH_QUIET_WAIT_S", 8);
const MYSQL_URL = process.env.BENCH_MYSQL_URL || null;
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(",").map((s) => s.trim())) : null;
const STOP_SIGNAL: NodeJS.Signals = SERVER_NODE_ARGS.some((a) => a.startsWith("--cpu-prof") || a.startsWith("--heap-prof")) ? "SIGTERM" : "SIGKILL";
/** The whole run must stay under 3 minutes; a variant that would not fit is skipped. */
const BUDGET_MS = 170_000;
const TARGET = { ratio: 0.5, p99Ms: 30 };
const started = Date.now();


// --- the request --------------------------------------------------------------------------------

/** A realistic transactional message: ~1 KB of HTML, tags and metadata (about 1.5 KB of JSON). */
function messageBody(): string {
  const items = ["Espresso beans, 1 kg", "Ceramic pour-over dripper", "Paper filters (100)", "Burr grinder"]
    .map((item, i) => `<tr><td style="padding:4px 8px">${item}</td><td style="padding:4px 8px;text-align:right">${(12.5 * (i + 1)).toFixed(2)} EUR</td></tr>`)
    .join("");
  let html =
    `<!doctype html><html><body style="font-family:sans-serif"><h1>Your order #A-10482 has shipped</h1>` +
    `<p>Hello Ada, good news: your parcel left our warehouse this morning and should arrive within two working days.</p>` +
    `<table>${items}</table><p>Track it at <a href="https://shop.example.com/track/A-10482">shop.example.com/track/A-10482</a>.</p>`;
  while (html.length < 1000) html += `<p>Questions? Reply to this email or write to support@shop.example.com.</p>`;
  html += `</body></html>`;
  return JSON.stringify({
    from: "Example Shop <orders@shop.example.com>",
    to: ["Ada Lovelace <ada@example.com>"],
    subject: "Your order #A-10482 has shipped",
    html,
    tags: ["transactional", "shipping"],
    metadata: { order_id: "A-10482", customer_id: "cus_81723", locale: "en-GB" },
  });
}
const BODY = messageBody();


// --- CPU accounting -----------------------------------------------------------------------------


interface CpuSample {
  at: number;
  busy: number;
  server: number;
  db: number;
  self: number;
}

function cpuSample(serverPid: number | undefined, dbPids: number[]): CpuSample {
  const usage = process.cpuUsage();
  return {
    at: performance.now(),
    busy: machineBusy(),
    server: processTicks(serverPid),
    db: dbPids.reduce((sum, pid) => sum + processTicks(pid), 0),
    self: ((usage.user + usage.system) / 1e6) * CLK_TCK,
  };
}

/** CPU in cores (1.0 = one core fully busy) between two samples. */
function cpuBetween(a: CpuSample, b: CpuSample) {
  const seconds = (b.at - a.at) / 1000;
  const cores = (ticks: number) => ticks / CLK_TCK / seconds;
  const server = cores(b.server - a.server);
  const db = cores(b.db - a.db);
  const loadgen = cores(b.self - a.self);
  const machine = cores(b.busy - a.busy);
  return { server, db, loadgen, machine, foreign: Math.max(0, machine - server - db - loadgen) };
}

// --- one load run -------------------------------------------------------------------------------

interface LoadRun {
  seconds: number;
  accepted: number; // 202s
  ok: number; // any 2xx
  non2xx: number;
  /** The non-2xx answers by status code, e.g. "503 x4". */
  non2xxByStatus: string;
  errors: number;
  p50: number;
  p99: number;
  max: number;
  cpu: ReturnType<typeof cpuBetween>;
}

async function load(port: number, seconds: number, headers: Record<string, string>, serverPid: number | undefined, dbPids: number[]): Promise<LoadRun> {
  let latencies = new Float64Array(1 << 16);
  let n = 0;
  const before = cpuSample(serverPid, dbPids);
  const instance = autocannon({
    url: `http://127.0.0.1:${port}/v1/messages`,
    method: "POST",
    connections: CONNECTIONS,
    pipelining: 1,
    duration: seconds,
    timeout: 10,
    headers: { "content-type": "application/json", ...headers },
    body: BODY,
  });
  // autocannon's own histogram has 1 ms resolution; keep every 2xx latency for sub-ms percentiles.
  instance.on("response", (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    if (statusCode < 200 || statusCode >= 300) return;
    if (n === latencies.length) {
      const bigger = new Float64Array(latencies.length * 2);
      bigger.set(latencies);
      latencies = bigger;
    }
    latencies[n++] = responseTime;
  });
  const result: Result = await instance;
  const after = cpuSample(serverPid, dbPids);
  const sorted = latencies.subarray(0, n).sort();
  const pct = (p: number) => (n === 0 ? NaN : sorted[Math.min(n - 1, Math.ceil((p / 100) * n) - 1)]!);
  return {
    seconds: result.duration,
    accepted: result.statusCodeStats["202"]?.count ?? 0,
    ok: result["2xx"],
    non2xx: result.non2xx,
    non2xxByStatus: Object.entries(result.statusCodeStats)
      .filter(([code]) => !code.startsWith("2"))
      .map(([code, stats]) => `${code} x${stats.count}`)
      .join(", "),
    errors: result.errors + result.timeouts,
    p50: pct(50),
    p99: pct(99),
    max: n === 0 ? NaN : sorted[n - 1]!,
    cpu: cpuBetween(before, after),
  };
}

// --- variants -----------------------------------------------------------------------------------

interface Row {
  name: string;
  kind: "baseline" | "sqlite" | "mysql";
  run?: LoadRun;
  warmup?: LoadRun;
  notes: string[];
  durable?: boolean;
  failed?: string;
}

async function benchBare(): Promise<Row> {
  const row: Row = { name: "bare Fastify route (parse JSON, 202)", kind: "baseline", notes: [] };
  row.notes.push(`machine before start: ${await waitForQuiet(QUIET_WAIT_S, () => Date.now() - started < BUDGET_MS - 60_000)}`);
  const port = await freePort();
  const proc = startProcess(["--import", "tsx", "bench/bare-server.ts", String(port)], { ...process.env, NODE_ENV: "production" });
  const server: Server = { ...proc, port };
  try {
    await waitForHttp(server);
    row.warmup = await load(port, WARMUP_S, {}, server.child.pid, []);
    row.run = await load(port, DURATION_S, {}, server.child.pid, []);
  } finally {
    await stop(server, "SIGTERM");
  }
  return row;
}

interface RealOptions {
  name: string;
  kind: "sqlite" | "mysql";
  roles: "api" | "api+worker";
  databaseUrl: string;
  env: NodeJS.ProcessEnv;
  count(): Promise<{ messages: number; byStatus: Record<string, number> }>;
}

async function benchReal(options: RealOptions): Promise<Row> {
  const row: Row = { name: options.name, kind: options.kind, notes: [] };
  row.notes.push(`machine before start: ${await waitForQuiet(QUIET_WAIT_S, () => Date.now() - started < BUDGET_MS - 60_000)}`);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...options.env,
    DATABASE_URL: options.databaseUrl,
    ...SERVER_ENV,
  };
  const key = await bootstrapSandboxKey(env);

  const server = await startServer(env, options.roles === "api" ? ["--role", "api"] : []);
  const { port } = server;
  const dbPids = options.kind === "mysql" ? databasePids() : [];
  try {
    await waitForHttp(server);
    const headers = { authorization: `Bearer ${key}` };
    row.warmup = await load(port, WARMUP_S, headers, server.child.pid, dbPids);
    row.run = await load(port, DURATION_S, headers, server.child.pid, dbPids);
  } finally {
    const { exitCode, signalCode } = server.child;
    if (exitCode !== null || signalCode !== null) row.notes.push(`SERVER DIED during the run (exit code ${exitCode}, signal ${signalCode})`);
    await stop(server, STOP_SIGNAL);
  }
  if (server.output().trim()) row.notes.push(`server output (tail): ${server.output().trim().slice(-600)}`);

  // Durability: every 202 (warm-up and measured) must be stored, even though the server was
  // killed. Requests still in flight when a run ended may be stored without their 202 having
  // been read, so up to `connections` extra rows per run are expected.
  const { messages, byStatus } = await options.count();
  const acked = row.warmup.accepted + row.run.accepted;
  const extra = messages - acked;
  row.durable = extra >= 0 && extra <= 2 * CONNECTIONS;
  row.notes.push(
    `durability after ${STOP_SIGNAL}: ${acked} answered 202 (warm-up ${row.warmup.accepted} + measured ${row.run.accepted}), ` +
      `${messages} messages stored (${extra >= 0 ? "+" : ""}${extra}: ${extra < 0 ? "LOST ACCEPTED MESSAGES" : "committed, still in flight at cut-off"}) -> ${row.durable ? "OK" : "FAILED"}`,
  );
  row.notes.push(
    `worker: ${options.roles === "api" ? "not running (--role api)" : "running in-process (default roles api+worker)"}; messages by status at the end: ${JSON.stringify(byStatus)}`,
  );
  return row;
}

function sqliteVariant(roles: "api" | "api+worker"): RealOptions & { dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "mailroom-bench-"));
  onCleanup(async () => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "mailroom.db");
  return {
    dir,
    name: `SQLite, POST /v1/messages, ${roles === "api" ? "--role api" : "default roles (api+worker)"}`,
    kind: "sqlite",
    roles,
    databaseUrl: `sqlite:${file}`,
    env: { DATA_DIR: dir },
    async count() {
      // better-sqlite3, read-only, on the file the killed server left behind (WAL included).
      const db = knexFactory({ client: "better-sqlite3", connection: { filename: file, options: { readonly: true } }, useNullAsDefault: true });
      try {
        const [total] = (await db("messages").count({ n: "*" })) as Array<{ n: number }>;
        const rows = (await db("messages").select("status").count({ n: "*" }).groupBy("status")) as Array<{ status: string; n: number }>;
        return { messages: Number(total!.n), byStatus: Object.fromEntries(rows.map((r) => [r.status, Number(r.n)])) };
      } finally {
        await db.destroy();
      }
    },
  };
}

async function mysqlVariant(roles: "api" | "api+worker"): Promise<RealOptions> {
  const base = new URL(MYSQL_URL!);
  const baseDb = base.pathname.replace(/^\//, "") || "mailroom_test";
  const name = `${baseDb}_bench_${randomBytes(4).toString("hex")}`;
  const admin = await mysql.createConnection({ uri: MYSQL_URL! });
  await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  onCleanup(async () => {
    await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
    await admin.end();
  });
  const url = new URL(MYSQL_URL!);
  url.pathname = `/${name}`;
  const dataDir = mkdtempSync(join(tmpdir(), "mailroom-bench-"));
  onCleanup(async () => rmSync(dataDir, { recursive: true, force: true }));
  return {
    name: `MariaDB, POST /v1/messages, ${roles === "api" ? "--role api" : "default roles (api+worker)"}`,
    kind: "mysql",
    roles,
    databaseUrl: url.toString(),
    env: { SECRET_KEY: randomBytes(32).toString("hex"), DATA_DIR: dataDir },
    async count() {
      const [[total]] = (await admin.query(`SELECT count(*) AS n FROM \`${name}\`.messages`)) as unknown as [[{ n: number }]];
      const [rows] = (await admin.query(`SELECT status, count(*) AS n FROM \`${name}\`.messages GROUP BY status`)) as unknown as [Array<{ status: string; n: number }>];
      return { messages: Number(total.n), byStatus: Object.fromEntries(rows.map((r) => [r.status, Number(r.n)])) };
    },
  };
}

// --- report -------------------------------------------------------------------------------------

const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "-");
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "-");

function rate(run: LoadRun): number {
  return run.accepted > 0 ? run.accepted / run.seconds : run.ok / run.seconds;
}

function printTable(rows: Row[]): void {
  const bare = rows[0]!.run!;
  const header = ["name", "req/s", "p50 ms", "p99 ms", "non-2xx", "ratio to bare", "target met"];
  const lines = rows.map((row) => {
    if (!row.run) return [row.name, "-", "-", "-", "-", "-", `not run: ${row.failed ?? "?"}`];
    const r = row.run;
    const ratio = rate(r) / rate(bare);
    const nonOk = `${r.non2xx}${r.errors ? ` (+${r.errors} err)` : ""}`;
    let met: string;
    if (row.kind === "baseline") met = "(baseline)";
    else {
      const ok = ratio >= TARGET.ratio && r.p99 <= TARGET.p99Ms && r.non2xx === 0 && r.errors === 0 && row.durable === true;
      met = `${ok ? "yes" : "NO"}${row.kind === "mysql" ? " (SQLite target; info)" : ""}`;
    }
    return [row.name, Math.round(rate(r)).toLocaleString("en"), f2(r.p50), f2(r.p99), nonOk, row.kind === "baseline" ? "1.00" : f2(ratio), met];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`;
  console.log(fmt(header));
  console.log(`|${widths.map((w, i) => (i === 0 || i === widths.length - 1 ? "-".repeat(w + 2) : `${"-".repeat(w + 1)}:`)).join("|")}|`);
  for (const line of lines) console.log(fmt(line));
}

function printDetails(rows: Row[]): void {
  for (const row of rows) {
    console.log(`\n${row.name}`);
    if (row.run) {
      const r = row.run;
      const c = r.cpu;
      console.log(
        `  measured ${r.seconds.toFixed(2)} s: ${r.accepted || r.ok} accepted, p50 ${f2(r.p50)} ms, p99 ${f2(r.p99)} ms, max ${f1(r.max)} ms, ` +
          `${r.non2xx} non-2xx${r.non2xxByStatus ? ` (${r.non2xxByStatus})` : ""}, ${r.errors} socket errors/timeouts`,
      );
      console.log(
        `  CPU (cores) during the measured run: server ${f2(c.server)}${row.kind === "mysql" ? `, mariadbd ${f2(c.db)}` : ""}, load generator ${f2(c.loadgen)}, ` +
          `other processes ${f2(c.foreign)} (machine ${f2(c.machine)})${c.foreign > 0.3 ? "  <-- contaminated: rerun on a quiet machine" : ""}`,
      );
      // Robust against other load on the machine: what one request costs the server, in CPU.
      const perRequestUs = ((c.server + c.db) * r.seconds * 1e6) / Math.max(1, r.accepted || r.ok);
      console.log(`  server CPU per accepted request: ${Math.round(perRequestUs)} us${row.kind === "mysql" ? " (Node + mariadbd)" : ""}`);
    }
    if (row.failed) console.log(`  FAILED: ${row.failed}`);
    for (const note of row.notes) console.log(`  ${note}`);
  }
}

// --- main ---------------------------------------------------------------------------------------

async function main(): Promise<number> {
  console.log(
    `bench/accept: ${CONNECTIONS} connections, ${WARMUP_S} s warm-up + ${DURATION_S} s measured per variant, ` +
      `body ${Buffer.byteLength(BODY)} bytes, load generator autocannon (in this process; servers in their own processes), ` +
      `node ${process.version}, ${(await import("node:os")).cpus().length} CPUs`,
  );
  const rows: Row[] = [];
  try {
    rows.push(await benchBare());
  } catch (error) {
    console.error(`the baseline could not be measured: ${(error as Error).message}`);
    return 1;
  }
  const want = (name: string) => !ONLY || ONLY.has(name);
  const plans: Array<{ id: string; make: () => Promise<RealOptions> | RealOptions }> = [
    { id: "sqlite-api", make: () => sqliteVariant("api") },
    { id: "sqlite-all", make: () => sqliteVariant("api+worker") },
  ];
  if (MYSQL_URL) {
    plans.push({ id: "mysql-api", make: () => mysqlVariant("api") }, { id: "mysql-all", make: () => mysqlVariant("api+worker") });
  }
  for (const plan of plans.filter((p) => want(p.id))) {
    const needed = (WARMUP_S + DURATION_S + 8) * 1000;
    if (Date.now() - started + needed > BUDGET_MS) {
      rows.push({ name: plan.id, kind: plan.id.startsWith("mysql") ? "mysql" : "sqlite", notes: [], failed: "skipped: time budget (3 min) exhausted" });
      continue;
    }
    try {
      rows.push(await benchReal(await plan.make()));
    } catch (error) {
      rows.push({ name: plan.id, kind: plan.id.startsWith("mysql") ? "mysql" : "sqlite", notes: [], failed: (error as Error).message.slice(0, 2000) });
    }
  }
  if (!MYSQL_URL) rows.push({ name: "MariaDB", kind: "mysql", notes: [], failed: "BENCH_MYSQL_URL not set" });

  console.log(`\nTarget (SQLite): ratio to bare >= ${TARGET.ratio} with p99 <= ${TARGET.p99Ms} ms, no non-2xx, every 202 durable.\n`);
  printTable(rows);
  printDetails(rows);
  const bare = rows[0]!.run!;
  for (const row of rows.filter((r) => r.kind === "sqlite" && r.run)) {
    const ratio = rate(row.run!) / rate(bare);
    const misses = [
      ...(ratio < TARGET.ratio ? [`ratio ${f2(ratio)} < ${TARGET.ratio}`] : []),
      ...(row.run!.p99 > TARGET.p99Ms ? [`p99 ${f1(row.run!.p99)} ms > ${TARGET.p99Ms} ms`] : []),
      ...(row.run!.non2xx + row.run!.errors > 0 ? ["non-2xx answers or errors"] : []),
      ...(row.durable ? [] : ["durability check failed"]),
    ];
    console.log(`\nverdict, ${row.name}: ${misses.length === 0 ? "TARGET MET" : `TARGET NOT MET (${misses.join("; ")})`}`);
  }
  console.log(`\ntotal ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return 0;
}

runMain(main);
