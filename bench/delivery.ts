/**
 * Live delivery throughput: how fast worker processes drain a backlog of accepted messages,
 * DKIM-signed with both keys of a verified domain, into a local SMTP sink, against nodemailer's
 * pooled SMTP transport sending the same kind of message into the same sink, in one run on one
 * machine (docs/performance.md, "Delivery"). `make bench` runs it after bench/accept.ts, or:
 *
 *   node_modules/.bin/tsx bench/delivery.ts
 *
 * Processes: the SMTP sink (bench/smtp-sink.ts) and the DNS server (bench/loopback-dns.ts) each
 * run in their own child process; every worker is `bin/mailroom-server serve --role worker`, as
 * production runs it (Node with the heap limit HEAP_LIMIT_MB sets). This process prepares the databases, sends the baseline,
 * polls and samples, and does nothing else while a drain is timed. The baseline sender
 * (bench/nodemailer-baseline.ts) has its own process too. The sink offers no STARTTLS: Mailroom's
 * MX transport uses STARTTLS only when it is offered, so neither sender pays for TLS.
 *
 * Per Mailroom run: a fresh database; a workspace and the domain acme.example created through
 * the services (src/runtime.ts), its DNS records published in the loopback DNS server and
 * verified through DNS (so the worker signs with the RSA-2048 and the Ed25519 key, as for any
 * verified domain); the backlog accepted through MessagesService.createBatch (live, 100 per
 * batch); that runtime closed; then the worker(s) started and timed until no job is left, their
 * RSS sampled from /proc throughout.
 *
 * Environment:
 *   BENCH_BACKLOG (100000)          the main run's backlog (SQLite, one worker, default settings)
 *   BENCH_BASELINE_MESSAGES (20000) messages per baseline run (after a 1,000-message warm-up)
 *   BENCH_SWEEP_BACKLOG (10000)     backlog of each worker-settings variant; 0 = no sweep
 *   BENCH_SWEEP                     the variants: ";"-separated, each space-separated VAR=value
 *                                   pairs for the worker's environment (default: SWEEP below)
 *   BENCH_MYSQL_URL                 also drain on a fresh MariaDB/MySQL database (created and
 *                                   dropped) with one and with two worker processes
 *   BENCH_MYSQL_BACKLOG (20000)     the backlog of each MariaDB run
 *   BENCH_WORKER_NODE_ARGS          extra node flags for the workers, e.g. "--cpu-prof
 *                                   --cpu-prof-dir=/tmp/prof" (workers always stop with SIGTERM,
 *                                   so a profile is written); the workers then start without the
 *                                   launcher and its heap limit, unless the flags give one
 *   BENCH_QUIET_WAIT_S (8)          at most this long, before each timed part, wait for the
 *                                   machine to be quiet (other jobs' CPU skews a 2-core machine)
 *
 * With the defaults it takes about 6 minutes on a quiet machine (7.5 with MariaDB), half of it
 * the 100,000-message drain and half the sweep; longer when it has to wait for quiet.
 *
 * Exit status 0 whether or not the targets are met (this is a report); 1 if the baseline
 * itself could not be measured.
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import knexFactory, { type Knex } from "knex";
import { dkimVerify } from "mailauth/lib/dkim/verify.js";
import mysql from "mysql2/promise";
import MailComposer from "nodemailer/lib/mail-composer/index.js";
import { loadConfig } from "../src/config.js";
import type { Principal } from "../src/domain/environments.js";
import { createRuntime } from "../src/runtime.js";
import type { DnsRecord } from "../test/helpers/dns-server.js";
import type { SinkStats } from "./smtp-sink.js";
import type { components } from "../generated/v1.js";
import { CLK_TCK, sleep, intEnv, startProcess, startMailroom, onCleanup, runMain, machineBusy, processTicks, databasePids, waitForQuiet, type Proc } from "./machine.js";

type CreateMessageRequest = components["schemas"]["CreateMessageRequest"];

const BACKLOG = intEnv("BENCH_BACKLOG", 100_000);
const BASELINE_MESSAGES = intEnv("BENCH_BASELINE_MESSAGES", 20_000);
const BASELINE_WARMUP = 1_000;
const SWEEP_BACKLOG = intEnv("BENCH_SWEEP_BACKLOG", 10_000);
const MYSQL_URL = process.env.BENCH_MYSQL_URL || null;
const MYSQL_BACKLOG = intEnv("BENCH_MYSQL_BACKLOG", 20_000);
const WORKER_NODE_ARGS = (process.env.BENCH_WORKER_NODE_ARGS ?? "").split(/\s+/).filter(Boolean);
const QUIET_WAIT_S = intEnv("BENCH_QUIET_WAIT_S", 8);
const TARGET = { ratio: 0.9, rate: 1000, rssMb: 300 };
/** Mailroom's default SMTP_MAX_CONNECTIONS_PER_DESTINATION, and so the baseline's maxConnections. */
const MAX_CONNECTIONS = 10;
const SENDING_HOSTNAME = "mta.mailroom.test";
const RECIPIENT_DOMAIN = "example.net";
const SENDING_DOMAIN = "acme.example";
const started = Date.now();

/**
 * Worker-settings variants tried on a smaller backlog. WORKER_POLL_MS only matters when a claim
 * comes back empty, which it does not while a backlog lasts; one variant shows it. The last is
 * the heap limit: Node's own (a quarter of memory up to 4 GiB), which the launcher's replaces.
 */
const SWEEP: Array<Record<string, string>> = process.env.BENCH_SWEEP
  ? process.env.BENCH_SWEEP.split(";").map((variant) =>
      Object.fromEntries(variant.trim().split(/\s+/).filter(Boolean).map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)])),
    )
  : [
      {},
      { WORKER_BATCH_SIZE: "200" },
      { WORKER_BATCH_SIZE: "500" },
      { DELIVERY_CONCURRENCY: "10" },
      { SMTP_MAX_CONNECTIONS_PER_DESTINATION: "20" },
      { WORKER_POLL_MS: "50" },
      { HEAP_LIMIT_MB: "0" },
    ];


const since = (t: number) => ((Date.now() - t) / 1000).toFixed(0);

// --- the message --------------------------------------------------------------------------------

/**
 * A realistic transactional message: a shipping notice with ~2.1 KB of HTML, from which Mailroom
 * derives the text part; composed, a 3.7 KB multipart/alternative message (4.7 KB with Mailroom's
 * two DKIM-Signature headers).
 */
function messageInput(i: number): CreateMessageRequest {
  const items = ["Espresso beans, 1 kg", "Ceramic pour-over dripper", "Paper filters (100)", "Burr grinder", "Milk jug, 350 ml"]
    .map((item, n) => `<tr><td style="padding:4px 8px;border-bottom:1px solid #eee">${item}</td><td style="padding:4px 8px;text-align:right;border-bottom:1px solid #eee">${(12.5 * (n + 1)).toFixed(2)} EUR</td></tr>`)
    .join("");
  const order = `A-${10_000 + i}`;
  const html =
    `<!doctype html><html><body style="font-family:Helvetica,Arial,sans-serif;color:#222;max-width:600px;margin:0 auto">` +
    `<h1 style="font-size:20px">Your order #${order} has shipped</h1>` +
    `<p>Hello Customer ${i},</p><p>Good news: your parcel left our warehouse this morning and should arrive within two working days. ` +
    `You can follow it at any time with the tracking link below; the carrier updates it every few hours.</p>` +
    `<table style="border-collapse:collapse;width:100%">${items}<tr><td style="padding:4px 8px"><b>Total</b></td><td style="padding:4px 8px;text-align:right"><b>187.50 EUR</b></td></tr></table>` +
    `<p><a href="https://shop.acme.example/track/${order}" style="color:#0a58ca">Track your parcel</a></p>` +
    `<p>Delivery address:<br>Customer ${i}<br>12 Example Street<br>1000 Brussels<br>Belgium</p>` +
    `<p>If something is wrong with your order, reply to this email or write to support@acme.example within 30 days; ` +
    `unopened items can be returned free of charge. Our opening hours are Monday to Friday, 9:00 to 17:00.</p>` +
    `<p style="font-size:12px;color:#777">Acme Shop SRL, 1 Market Square, 1000 Brussels. VAT BE0123456789. ` +
    `You receive this email because you placed an order at shop.acme.example.</p></body></html>`;
  return {
    from: `Acme Shop <orders@${SENDING_DOMAIN}>`,
    to: `Customer ${i} <customer${i}@${RECIPIENT_DOMAIN}>`,
    subject: `Your order #${order} has shipped`,
    html,
    tags: ["transactional", "shipping"],
    metadata: { order_id: order, customer_id: `cus_${81_723 + i}` },
  };
}

/** The baseline's message: the same content composed by nodemailer, not signed (what Mailroom renders, less DKIM). */
async function baselineRaw(): Promise<Buffer> {
  const input = messageInput(0);
  const { convert } = await import("html-to-text");
  const composer = new MailComposer({
    from: input.from,
    to: input.to as string,
    subject: input.subject,
    html: input.html,
    text: convert(input.html!, { wordwrap: 78 }),
    messageId: `<baseline.${randomBytes(8).toString("hex")}@${SENDING_DOMAIN}>`,
    date: new Date(),
  });
  return composer.compile().build();
}

// --- child processes ----------------------------------------------------------------------------





/** A helper child that answers requests over IPC, one reply type per request type. */
class IpcChild {
  private readonly waiting = new Map<string, Array<(message: Record<string, unknown>) => void>>();

  constructor(readonly proc: Proc) {
    proc.child.on("message", (message: Record<string, unknown>) => {
      const queue = this.waiting.get(message.type as string);
      queue?.shift()?.(message);
    });
  }

  /** The next message of `type` (sent in answer to `request`, or unprompted when it is null). */
  ask<T>(request: Record<string, unknown> | null, type: string, timeoutMs = 30_000): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const queue = this.waiting.get(type) ?? [];
      const answered = (message: Record<string, unknown>) => {
        clearTimeout(timer);
        resolve(message as T);
      };
      const timer = setTimeout(() => {
        // Forget this request, so that a late answer cannot be taken for the next one's.
        queue.splice(queue.indexOf(answered), 1);
        reject(new Error(`no ${type} answer from ${this.proc.child.spawnargs.join(" ")} within ${timeoutMs} ms:\n${this.proc.output()}`));
      }, timeoutMs);
      queue.push(answered);
      this.waiting.set(type, queue);
      if (request) this.proc.child.send(request);
    });
  }

  get pid(): number | undefined {
    return this.proc.child.pid;
  }
}

async function stop(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill(signal);
  const timeout = sleep(20_000).then(() => "timeout");
  if ((await Promise.race([exited, timeout])) === "timeout") child.kill("SIGKILL");
  await exited;
}

// --- /proc: CPU and memory ----------------------------------------------------------------------

/** A field of /proc/<pid>/status in MB (VmRSS: resident now; VmHWM: the peak so far), or NaN. */
function memoryMb(pid: number | undefined, field: "VmRSS" | "VmHWM"): number {
  if (!pid) return NaN;
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}


type Roles = "measured" | "sink" | "dns" | "db";

/** CPU accounting of one timed part: the processes by role, this process, and everyone else. */
class CpuMeter {
  private readonly at = performance.now();
  private readonly busy = machineBusy();
  private readonly self = this.selfTicks();
  private readonly start: Map<number, number>;

  constructor(private readonly pids: Record<Roles, number[]>) {
    this.start = new Map(Object.values(pids).flat().map((pid) => [pid, processTicks(pid)]));
  }

  private selfTicks(): number {
    const usage = process.cpuUsage();
    return ((usage.user + usage.system) / 1e6) * CLK_TCK;
  }

  /** CPU in cores (1.0 = one core fully busy) since construction, per role. Call before the processes exit. */
  read(): Record<Roles | "bench" | "other" | "machine", number> {
    const seconds = (performance.now() - this.at) / 1000;
    const cores = (ticks: number) => ticks / CLK_TCK / seconds;
    const role = (r: Roles) => cores(this.pids[r].reduce((sum, pid) => sum + processTicks(pid) - (this.start.get(pid) ?? 0), 0));
    const measured = role("measured");
    const sink = role("sink");
    const dns = role("dns");
    const db = role("db");
    const bench = cores(this.selfTicks() - this.self);
    const machine = cores(machineBusy() - this.busy);
    return { measured, sink, dns, db, bench, machine, other: Math.max(0, machine - measured - sink - dns - db - bench) };
  }
}

// --- the sink and the DNS -----------------------------------------------------------------------

interface Peers {
  sink: IpcChild;
  sinkPort: number;
  dns: IpcChild;
  dnsAddress: string;
}

async function startPeers(): Promise<Peers> {
  const env = { ...process.env, NODE_ENV: "production" };
  const sink = new IpcChild(startProcess(["--import", "tsx", "bench/smtp-sink.ts"], env, true));
  const dns = new IpcChild(startProcess(["--import", "tsx", "bench/loopback-dns.ts"], env, true));
  const [{ port }, { address }] = await Promise.all([sink.ask<{ port: number }>(null, "listening"), dns.ask<{ address: string }>(null, "listening")]);
  const peers = { sink, sinkPort: port, dns, dnsAddress: address };
  // The recipients' domain: its MX is the sink.
  await publish(peers, `mx1.${RECIPIENT_DOMAIN}`, [{ type: "A", address: "127.0.0.1" }]);
  await publish(peers, RECIPIENT_DOMAIN, [{ type: "MX", priority: 10, exchange: `mx1.${RECIPIENT_DOMAIN}` }]);
  return peers;
}

/** Replaces every record of `name` in the loopback DNS. */
const publish = (peers: Peers, name: string, records: DnsRecord[]) => peers.dns.ask({ type: "set", name, records }, "set");

const sinkStats = (peers: Peers) => peers.sink.ask<SinkStats>({ type: "stats" }, "stats");
const sinkReset = (peers: Peers) => peers.sink.ask({ type: "reset" }, "reset");
const dnsQueries = async (peers: Peers) => (await peers.dns.ask<{ queries: number }>({ type: "stats" }, "stats")).queries;

// --- the baseline -------------------------------------------------------------------------------

interface BaselineRun {
  name: string;
  messages: number;
  seconds: number;
  rate: number;
  bytesPerMessage: number;
  connections: number;
  cpu: ReturnType<CpuMeter["read"]>;
  hwmMb: number;
  quiet: string;
}

/**
 * nodemailer's pooled SMTP transport, in its own process (bench/nodemailer-baseline.ts), sends
 * the same prebuilt message BASELINE_MESSAGES times after a warm-up that opens its connections.
 */
async function runBaseline(peers: Peers, raw: Buffer, name: string, keepConnections: boolean): Promise<BaselineRun> {
  const quiet = await waitForQuiet(QUIET_WAIT_S);
  const sender = new IpcChild(startProcess(["--import", "tsx", "bench/nodemailer-baseline.ts"], { ...process.env, NODE_ENV: "production" }, true));
  try {
    await sender.ask(
      {
        type: "run",
        port: peers.sinkPort,
        raw: raw.toString("latin1"),
        warmup: BASELINE_WARMUP,
        messages: BASELINE_MESSAGES,
        maxConnections: MAX_CONNECTIONS,
        keepConnections,
        envelopeFrom: `bounces@${SENDING_DOMAIN}`,
        recipientDomain: RECIPIENT_DOMAIN,
      },
      "warm",
      60_000,
    );
    await sinkReset(peers);
    const meter = new CpuMeter({ measured: [sender.pid!], sink: [peers.sink.pid!], dns: [peers.dns.pid!], db: [] });
    const done = await sender.ask<{ seconds: number; hwmMb: number }>({ type: "go" }, "done", 600_000);
    const cpu = meter.read();
    const stats = await sinkStats(peers);
    if (stats.messages !== BASELINE_MESSAGES) throw new Error(`baseline: the sink counted ${stats.messages} messages, ${BASELINE_MESSAGES} were sent`);
    return {
      name,
      messages: BASELINE_MESSAGES,
      seconds: done.seconds,
      rate: BASELINE_MESSAGES / done.seconds,
      bytesPerMessage: stats.bytes / stats.messages,
      connections: stats.connections,
      cpu,
      hwmMb: done.hwmMb,
      quiet,
    };
  } finally {
    await stop(sender.proc.child);
  }
}

// --- databases ----------------------------------------------------------------------------------

interface BenchDatabase {
  url: string;
  dataDir: string;
  kind: "sqlite" | "mysql";
  /** Jobs left (due or not, leased or not). */
  jobsLeft(): Promise<number>;
  byStatus(): Promise<Record<string, number>>;
  sizeMb(): Promise<number>;
  drop(): Promise<void>;
}

function freshSqlite(): BenchDatabase {
  const dir = mkdtempSync(join(tmpdir(), "mailroom-bench-delivery-"));
  const file = join(dir, "mailroom.db");
  let reader: Knex | null = null;
  // Opened on first use (after the migrations), read-only: counting must not take the writer's lock.
  const read = () => (reader ??= knexFactory({ client: "better-sqlite3", connection: { filename: file, options: { readonly: true } }, useNullAsDefault: true }));
  const drop = async () => {
    await reader?.destroy();
    reader = null;
    rmSync(dir, { recursive: true, force: true }); // idempotent: also run by cleanups() at exit
  };
  onCleanup(drop);
  return {
    url: `sqlite:${file}`,
    dataDir: dir,
    kind: "sqlite",
    async jobsLeft() {
      const [row] = (await read()("jobs").count({ n: "*" })) as Array<{ n: number }>;
      return Number(row!.n);
    },
    async byStatus() {
      const rows = (await read()("messages").select("status").count({ n: "*" }).groupBy("status")) as Array<{ status: string; n: number }>;
      return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    },
    async sizeMb() {
      const size = (path: string) => (existsSync(path) ? statSync(path).size : 0);
      return (size(file) + size(`${file}-wal`)) / 1024 / 1024;
    },
    drop,
  };
}

async function freshMysql(): Promise<BenchDatabase> {
  const base = new URL(MYSQL_URL!);
  const name = `${base.pathname.replace(/^\//, "") || "mailroom_test"}_bench_${randomBytes(4).toString("hex")}`;
  const admin = await mysql.createConnection({ uri: MYSQL_URL! });
  await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  const dataDir = mkdtempSync(join(tmpdir(), "mailroom-bench-delivery-"));
  let dropped = false;
  const drop = async () => {
    if (dropped) return; // also run by cleanups() at exit
    dropped = true;
    await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  };
  onCleanup(drop);
  const url = new URL(MYSQL_URL!);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    dataDir,
    kind: "mysql",
    async jobsLeft() {
      const [[row]] = (await admin.query(`SELECT count(*) AS n FROM \`${name}\`.jobs`)) as unknown as [[{ n: number }]];
      return Number(row.n);
    },
    async byStatus() {
      const [rows] = (await admin.query(`SELECT status, count(*) AS n FROM \`${name}\`.messages GROUP BY status`)) as unknown as [Array<{ status: string; n: number }>];
      return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    },
    async sizeMb() {
      await admin.query(`ANALYZE TABLE \`${name}\`.messages, \`${name}\`.events, \`${name}\`.message_recipients`);
      const [[row]] = (await admin.query(`SELECT sum(data_length + index_length) AS bytes FROM information_schema.tables WHERE table_schema = ?`, [name])) as unknown as [[{ bytes: number }]];
      return Number(row.bytes) / 1024 / 1024;
    },
    drop,
  };
}

// --- one Mailroom run ---------------------------------------------------------------------------

interface DrainRun {
  name: string;
  kind: "sqlite" | "mysql";
  workers: number;
  settings: Record<string, string>;
  backlog: number;
  enqueueSeconds: number;
  /** From spawning the worker(s) to the first message at the sink. */
  startupSeconds: number;
  /** From the first message at the sink to the moment no job was left. */
  drainSeconds: number;
  rate: number;
  /** Peak VmRSS sampled every 100 ms, and the kernel's own peak (VmHWM), per worker, MB. */
  peakRssMb: number[];
  hwmMb: number[];
  cpu: ReturnType<CpuMeter["read"]>;
  sink: SinkStats;
  dnsQueries: number;
  byStatus: Record<string, number>;
  dkim: string;
  quiet: string;
  notes: string[];
  trajectory: Array<{ done: number; rssMb: number }>;
  /** The database's size on disk after the drain (SQLite: file + WAL; MySQL: data + indexes). */
  databaseMb: number;
}

const PRINCIPAL_CREDENTIAL = { kind: "api_key" as const, id: "bench", permission: "full_access" as const };

/**
 * A workspace with the verified domain acme.example: created through the services, its records
 * published in the loopback DNS server, verified through DNS. Then the backlog is accepted.
 * Returns the published records (for DKIM verification of a sample) and the accept time.
 */
async function prepare(db: BenchDatabase, peers: Peers, secretKey: string, backlog: number): Promise<{ published: Map<string, string>; enqueueSeconds: number }> {
  const config = loadConfig({ DATABASE_URL: db.url, DATA_DIR: db.dataDir, SECRET_KEY: secretKey, DNS_SERVERS: peers.dnsAddress, SENDING_HOSTNAME, LOG_LEVEL: "silent" });
  const runtime = await createRuntime(config);
  try {
    const { workspace_id: workspaceId } = await runtime.services.workspace.bootstrap("Bench");
    const principal: Principal = { workspaceId, environment: "live", credential: PRINCIPAL_CREDENTIAL };
    const domain = await runtime.services.domains.create(principal, { name: SENDING_DOMAIN });
    // Published exactly as the API returns them, replacing an earlier run's (fresh keys each run).
    const byName = new Map<string, DnsRecord[]>();
    const published = new Map<string, string>();
    for (const record of domain.records) {
      const dnsRecord: DnsRecord = record.type === "MX" ? { type: "MX", priority: record.priority ?? 10, exchange: record.value } : { type: "TXT", value: record.value };
      byName.set(record.name, [...(byName.get(record.name) ?? []), dnsRecord]);
      if (record.type === "TXT") published.set(record.name.toLowerCase(), record.value);
    }
    for (const [name, records] of byName) await publish(peers, name, records);
    const verified = await runtime.services.domains.verify(principal, domain.id);
    if (verified.status !== "verified") throw new Error(`the domain did not verify: ${JSON.stringify(verified.records)}`);

    // The accept path is not what is measured here: batches of 100 through the service (as
    // POST /v1/messages/batch would), several at once so that they share group commits.
    const t0 = performance.now();
    let next = 0;
    const lane = async () => {
      while (next < backlog) {
        const from = next;
        next = Math.min(backlog, next + 100);
        const inputs = Array.from({ length: next - from }, (_, k) => messageInput(from + k));
        const outcomes = await runtime.services.messages.createBatch(principal, inputs, null);
        const refused = outcomes.find((o) => o.error !== null);
        if (refused) throw new Error(`accepting the backlog: ${refused.error instanceof Error ? refused.error.message : String(refused.error)}`);
      }
    };
    await Promise.all(Array.from({ length: 8 }, lane));
    return { published, enqueueSeconds: (performance.now() - t0) / 1000 };
  } finally {
    await runtime.close();
  }
}

async function drain(options: { name: string; db: BenchDatabase; peers: Peers; workers: number; settings: Record<string, string>; backlog: number }): Promise<DrainRun> {
  const { db, peers, backlog } = options;
  const secretKey = randomBytes(32).toString("hex");
  const notes: string[] = [];
  const { published, enqueueSeconds } = await prepare(db, peers, secretKey, backlog);
  const queued = await db.jobsLeft();
  if (queued !== backlog) throw new Error(`${queued} jobs queued, expected ${backlog}`);

  const quiet = await waitForQuiet(QUIET_WAIT_S);
  await sinkReset(peers);
  await dnsQueries(peers); // zeroes the count
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: "production",
    DATABASE_URL: db.url,
    DATA_DIR: db.dataDir,
    SECRET_KEY: secretKey,
    DNS_SERVERS: peers.dnsAddress,
    SMTP_MX_PORT: String(peers.sinkPort),
    SENDING_HOSTNAME,
    LOG_LEVEL: "warn",
    ...options.settings,
  };
  const spawnedAt = Date.now();
  const workers = Array.from({ length: options.workers }, () => startMailroom(["serve", "--role", "worker"], env, WORKER_NODE_ARGS));
  const pids = workers.map((w) => w.child.pid!);
  const cpuRoles = { measured: pids, sink: [peers.sink.pid!], dns: [peers.dns.pid!], db: db.kind === "mysql" ? databasePids() : [] };
  // Start-up (loading the code, migrations, the first claim) is left out: CPU is counted from
  // the first delivery recorded to the empty queue.
  let meter: CpuMeter | null = null;
  const peakRssMb = pids.map(() => 0);
  /** RSS (all workers) when the drain passed 10 %, 25 %, 50 %, 75 % and 100 %: growth with the backlog would show here. */
  const trajectory: Array<{ done: number; rssMb: number }> = [];
  const marks = [0.1, 0.25, 0.5, 0.75, 1];
  const deadline = Date.now() + Math.max(180_000, backlog * 5); // at least 200 messages/s, or give up
  let emptyAt = 0;
  let left = backlog;
  let cpu: ReturnType<CpuMeter["read"]>;
  let hwmMb: number[];
  let sink: SinkStats;
  let queries: number;
  let sample: { raw: string | null };
  try {
    for (let tick = 0; emptyAt === 0; tick++) {
      await sleep(100);
      const rss = pids.map((pid) => memoryMb(pid, "VmRSS") || 0);
      rss.forEach((mb, i) => (peakRssMb[i] = Math.max(peakRssMb[i]!, mb)));
      const dead = workers.find((w) => w.child.exitCode !== null || w.child.signalCode !== null);
      if (dead) throw new Error(`a worker exited during the drain (code ${dead.child.exitCode}, signal ${dead.child.signalCode}):\n${dead.output()}`);
      if (tick % 2 === 1) {
        left = await db.jobsLeft();
        if (left < backlog) meter ??= new CpuMeter(cpuRoles);
        while (marks.length > 0 && (backlog - left) / backlog >= marks[0]!) trajectory.push({ done: marks.shift()!, rssMb: rss.reduce((a, b) => a + b, 0) });
        if (left === 0) emptyAt = Date.now();
      }
      if (Date.now() > deadline) throw new Error(`not drained in time: ${left} of ${backlog} jobs left after ${since(spawnedAt)} s`);
    }
    cpu = (meter ?? new CpuMeter(cpuRoles)).read();
    hwmMb = pids.map((pid) => memoryMb(pid, "VmHWM"));
    sink = await sinkStats(peers);
    queries = await dnsQueries(peers);
    sample = await peers.sink.ask<{ raw: string | null }>({ type: "sample" }, "sample");
  } finally {
    // Also when the drain failed: a worker left running would skew every run after it.
    await Promise.all(workers.map((w) => stop(w.child)));
  }
  for (const w of workers) if (w.output().trim()) notes.push(`worker output (tail): ${w.output().trim().slice(-600)}`);
  const byStatus = await db.byStatus();
  const firstAt = sink.firstAt ?? spawnedAt;
  const drainSeconds = (emptyAt - firstAt) / 1000;
  return {
    name: options.name,
    kind: db.kind,
    workers: options.workers,
    settings: options.settings,
    backlog,
    enqueueSeconds,
    startupSeconds: (firstAt - spawnedAt) / 1000,
    drainSeconds,
    rate: (byStatus.delivered ?? 0) / drainSeconds,
    peakRssMb,
    hwmMb,
    cpu,
    sink,
    dnsQueries: queries,
    byStatus,
    dkim: sample.raw === null ? "no sample" : await verifyDkim(sample.raw, published),
    quiet,
    notes,
    trajectory,
    databaseMb: await db.sizeMb(),
  };
}

/** Verifies a received message's DKIM signatures with mailauth against the published records. */
async function verifyDkim(raw: string, published: Map<string, string>): Promise<string> {
  const resolver = async (name: string, type: string) => {
    const value = type === "TXT" ? published.get(name.toLowerCase()) : undefined;
    if (value === undefined) throw Object.assign(new Error(`no ${type} ${name}`), { code: "ENOTFOUND" });
    return [[value]];
  };
  const result = await dkimVerify(Buffer.from(raw, "latin1"), { resolver });
  return result.results.map((r: { signingDomain?: string; algo?: string; status: { result: string } }) => `${r.algo ?? "?"} d=${r.signingDomain ?? "?"} ${r.status.result}`).join(", ");
}

// --- report -------------------------------------------------------------------------------------

const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en") : "-");
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "-");
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "-");
const describeSettings = (settings: Record<string, string>) =>
  Object.keys(settings).length === 0 ? "defaults" : Object.entries(settings).map(([k, v]) => `${k}=${v}`).join(" ");

interface Failed {
  name: string;
  failed: string;
}

/** Mailroom's runs beside the baseline (`reference`, the faster nodemailer run; `baselines` are all shown). */
function printTable(baselines: BaselineRun[], reference: BaselineRun, runs: Array<DrainRun | Failed>): void {
  const header = ["name", "msgs/s", "baseline msgs/s", "ratio", "peak RSS MB", "baseline RSS MB", "messages", "seconds", "targets"];
  const lines = [
    ...baselines.map((b) => [b.name, f0(b.rate), f0(reference.rate), f2(b.rate / reference.rate), f1(b.hwmMb), f1(reference.hwmMb), f0(b.messages), f1(b.seconds), b === reference ? "(baseline)" : "(baseline, not the reference)"]),
    ...runs.map((run) => {
      if ("failed" in run) return [run.name, "-", f0(reference.rate), "-", "-", f1(reference.hwmMb), "-", "-", `not run: ${run.failed.split("\n")[0]!.slice(0, 120)}`];
      const ratio = run.rate / reference.rate;
      const misses = targetMisses(run, reference);
      const rss = run.workers === 1 ? f1(peakOf(run, 0)) : run.hwmMb.map((_, i) => f1(peakOf(run, i))).join(" + ");
      return [run.name, f0(run.rate), f0(reference.rate), f2(ratio), rss, f1(reference.hwmMb), f0(run.backlog), f1(run.drainSeconds), misses.length === 0 ? "met" : `NOT met: ${misses.join(", ")}`];
    }),
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const left = (i: number) => i === 0 || i === header.length - 1;
  const fmt = (cells: string[]) => `| ${cells.map((c, i) => (left(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`;
  console.log(fmt(header));
  console.log(`|${widths.map((w, i) => (left(i) ? "-".repeat(w + 2) : `${"-".repeat(w + 1)}:`)).join("|")}|`);
  for (const line of lines) console.log(fmt(line));
}

/** A worker's peak RSS: the larger of the sampled VmRSS and the kernel's VmHWM. */
const peakOf = (run: DrainRun, worker: number) => Math.max(run.hwmMb[worker] ?? 0, run.peakRssMb[worker] ?? 0);

function targetMisses(run: DrainRun, reference: BaselineRun): string[] {
  const ratio = run.rate / reference.rate;
  const peak = Math.max(...run.hwmMb.map((_, i) => peakOf(run, i)));
  return [
    ...(ratio < TARGET.ratio ? [`ratio ${f2(ratio)} < ${TARGET.ratio}`] : []),
    ...(run.rate < TARGET.rate ? [`${f0(run.rate)}/s < ${f0(TARGET.rate)}/s`] : []),
    ...(peak >= TARGET.rssMb ? [`RSS ${f0(peak)} MB >= ${TARGET.rssMb} MB`] : []),
    ...((run.byStatus.delivered ?? 0) !== run.backlog ? ["not all delivered"] : []),
    ...(run.sink.signedBoth !== run.sink.messages ? ["not all signed twice"] : []),
  ];
}

function printBaseline(run: BaselineRun): void {
  const c = run.cpu;
  console.log(`\n${run.name}`);
  console.log(`  ${f0(run.messages)} messages of ${f0(run.bytesPerMessage)} bytes in ${f2(run.seconds)} s, ${run.connections} new connections during the run; machine before start: ${run.quiet}`);
  console.log(
    `  CPU (cores): sender ${f2(c.measured)}, sink ${f2(c.sink)}, this process ${f2(c.bench)}, other processes ${f2(c.other)} (machine ${f2(c.machine)})` +
      `${c.other > 0.3 ? "  <-- contaminated: rerun on a quiet machine" : ""}`,
  );
  console.log(`  sender CPU per message: ${f0((c.measured * run.seconds * 1e6) / run.messages)} us; sender peak RSS (VmHWM) ${f1(run.hwmMb)} MB`);
}

function printRun(run: DrainRun | Failed): void {
  console.log(`\n${run.name}`);
  if ("failed" in run) {
    console.log(`  FAILED: ${run.failed}`);
    return;
  }
  const c = run.cpu;
  const delivered = run.byStatus.delivered ?? 0;
  console.log(`  settings: ${describeSettings(run.settings)}; ${run.workers} worker process${run.workers > 1 ? "es" : ""}; machine before start: ${run.quiet}`);
  console.log(
    `  backlog ${f0(run.backlog)} accepted in ${f1(run.enqueueSeconds)} s (${f0(run.backlog / run.enqueueSeconds)}/s, createBatch, not measured here); ` +
      `worker start to first message ${f1(run.startupSeconds)} s; first message to empty queue ${f1(run.drainSeconds)} s`,
  );
  console.log(
    `  delivered ${f0(delivered)} (by status ${JSON.stringify(run.byStatus)}); sink: ${f0(run.sink.messages)} messages, ${f0(run.sink.bytes / Math.max(1, run.sink.messages))} bytes each, ` +
      `${f0(run.sink.signedBoth)} with both DKIM signatures, ${run.sink.connections} connections (${run.sink.maxOpenConnections} open at once)`,
  );
  console.log(`  DKIM of a sample, verified with mailauth against the published records: ${run.dkim}`);
  console.log(
    `  RSS per worker: peak sampled ${run.peakRssMb.map(f1).join(" / ")} MB, VmHWM ${run.hwmMb.map(f1).join(" / ")} MB; ` +
      `DNS queries ${f0(run.dnsQueries)} (${f2(run.dnsQueries / Math.max(1, delivered))} per message)`,
  );
  console.log(`  RSS of the worker${run.workers > 1 ? "s (sum)" : ""} as the drain went: ${run.trajectory.map((t) => `${t.done * 100} % ${f0(t.rssMb)} MB`).join(", ")}; database afterwards ${f0(run.databaseMb)} MB`);
  console.log(
    `  CPU (cores) from the first delivery to the empty queue: worker${run.workers > 1 ? "s" : ""} ${f2(c.measured)}${run.kind === "mysql" ? `, mariadbd ${f2(c.db)}` : ""}, sink ${f2(c.sink)}, dns ${f2(c.dns)}, ` +
      `this process ${f2(c.bench)}, other processes ${f2(c.other)} (machine ${f2(c.machine)})${c.other > 0.3 ? "  <-- contaminated: rerun on a quiet machine" : ""}`,
  );
  const perMessage = (cores: number) => f0((cores * run.drainSeconds * 1e6) / Math.max(1, delivered));
  console.log(`  worker CPU per delivered message: ${perMessage(c.measured)} us${run.kind === "mysql" ? ` (+ mariadbd ${perMessage(c.db)} us)` : ""}`);
  for (const note of run.notes) console.log(`  ${note}`);
}

// --- main ---------------------------------------------------------------------------------------

async function attempt(name: string, work: () => Promise<DrainRun>): Promise<DrainRun | Failed> {
  console.error(`[${since(started)} s] ${name}...`);
  try {
    const run = await work();
    console.error(`[${since(started)} s]   ${f0(run.rate)} msgs/s, drained in ${f1(run.drainSeconds)} s, peak RSS ${run.hwmMb.map(f1).join(" / ")} MB`);
    return run;
  } catch (error) {
    return { name, failed: ((error as Error).stack ?? String(error)).slice(0, 2000) };
  }
}

async function main(): Promise<number> {
  console.log(
    `bench/delivery: backlog ${f0(BACKLOG)} (sweep variants ${f0(SWEEP_BACKLOG)}${MYSQL_URL ? `, MariaDB ${f0(MYSQL_BACKLOG)}` : ""}), baseline ${f0(BASELINE_MESSAGES)} messages, ` +
      `${MAX_CONNECTIONS} connections per destination, sink and DNS in their own processes, node ${process.version}, ${cpus().length} CPUs`,
  );
  const peers = await startPeers();
  onCleanup(async () => {
    peers.sink.proc.child.disconnect();
    peers.dns.proc.child.disconnect();
  });

  // Baseline: the brief's transport (nodemailer's pool recycles a connection after maxMessages,
  // 100 by default), and the same with connections kept, as Mailroom keeps them. The faster of
  // the two is what Mailroom is compared with.
  const raw = await baselineRaw();
  const baselines: BaselineRun[] = [];
  try {
    console.error(`[${since(started)} s] baseline...`);
    baselines.push(await runBaseline(peers, raw, "nodemailer pool (maxConnections 10), raw, no DKIM", false));
    baselines.push(await runBaseline(peers, raw, "nodemailer pool (maxConnections 10, maxMessages Infinity), raw, no DKIM", true));
  } catch (error) {
    console.error(`the baseline could not be measured: ${(error as Error).stack}`);
    return 1;
  }
  const baseline = baselines.reduce((a, b) => (b.rate > a.rate ? b : a));
  for (const b of baselines) console.error(`[${since(started)} s]   ${b.name}: ${f0(b.rate)} msgs/s`);

  const runs: Array<DrainRun | Failed> = [];
  const sqliteRun = async (name: string, settings: Record<string, string>, backlog: number) => {
    const db = freshSqlite();
    try {
      return await drain({ name, db, peers, workers: 1, settings, backlog });
    } finally {
      await db.drop();
    }
  };
  runs.push(await attempt(`SQLite, 1 worker, defaults, backlog ${f0(BACKLOG)}`, () => sqliteRun(`SQLite, 1 worker, defaults`, {}, BACKLOG)));

  const sweep: Array<DrainRun | Failed> = [];
  if (SWEEP_BACKLOG > 0) {
    for (const settings of SWEEP) {
      const name = `SQLite, 1 worker, ${describeSettings(settings)} (sweep)`;
      sweep.push(await attempt(name, () => sqliteRun(name, settings, SWEEP_BACKLOG)));
    }
  }

  if (MYSQL_URL) {
    for (const workers of [1, 2]) {
      const name = `MariaDB, ${workers} worker${workers > 1 ? "s" : ""}, defaults`;
      runs.push(
        await attempt(name, async () => {
          const db = await freshMysql();
          try {
            return await drain({ name, db, peers, workers, settings: {}, backlog: MYSQL_BACKLOG });
          } finally {
            await db.drop();
          }
        }),
      );
    }
  } else runs.push({ name: "MariaDB, 1 and 2 workers", failed: "BENCH_MYSQL_URL not set" });

  console.log(
    `\nTargets: Mailroom's delivered msgs/s >= ${TARGET.ratio} x the baseline's and >= ${f0(TARGET.rate)}/s, every message signed ` +
      `with both DKIM keys; worker peak RSS < ${TARGET.rssMb} MB (SQLite, backlog ${f0(BACKLOG)}). The reference baseline is the faster of the two nodemailer runs.\n`,
  );
  printTable(baselines, baseline, runs);
  const done = sweep.filter((r): r is DrainRun => !("failed" in r));
  if (sweep.length > 0) {
    console.log(`\nWorker settings, one worker, each on a fresh SQLite database, backlog ${f0(SWEEP_BACKLOG)}:\n`);
    printTable(baselines, baseline, sweep);
    const defaults = done.find((r) => Object.keys(r.settings).length === 0);
    const best = done.reduce<DrainRun | null>((a, b) => (a === null || b.rate > a.rate ? b : a), null);
    if (best) {
      console.log(
        `\nBest setting: ${describeSettings(best.settings)}, ${f0(best.rate)} msgs/s, peak RSS ${f1(peakOf(best, 0))} MB` +
          (defaults ? `; the defaults in the same sweep: ${f0(defaults.rate)} msgs/s, ${f1(peakOf(defaults, 0))} MB (${best === defaults ? "the defaults are the best" : `+${f0((best.rate / defaults.rate - 1) * 100)} %`}).` : "."),
      );
    }
  }
  for (const b of baselines) printBaseline(b);
  for (const run of [...runs, ...sweep]) printRun(run);
  const main = runs[0]!;
  if (!("failed" in main)) {
    const misses = targetMisses(main, baseline);
    console.log(`\nverdict, ${main.name}, backlog ${f0(main.backlog)}: ${misses.length === 0 ? "TARGETS MET" : `TARGETS NOT MET (${misses.join("; ")})`}`);
  }
  console.log(`\ntotal ${since(started)} s`);
  return 0;
}

runMain(main);
