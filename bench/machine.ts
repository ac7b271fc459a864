/**
 * What every benchmark under bench/ needs from the machine: settings from the environment, child
 * processes that die with the benchmark, cleanups that run whatever happens, and the CPU
 * accounting (/proc) that lets each figure say how busy the machine was while it was taken.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** Jiffies per second in /proc (USER_HZ, 100 on Linux). */
export const CLK_TCK = 100;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function intEnv(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer`);
  return value;
}

// --- child processes and cleanups ---------------------------------------------------------------

const children = new Set<ChildProcess>();
const cleanupTasks: Array<() => Promise<void>> = [];

export interface Proc {
  child: ChildProcess;
  /** The last 4,000 characters it wrote, for error messages. */
  output(): string;
}

/** `node <args>` (or `command <args>`) from the repository root; killed with the benchmark, whatever ends it. */
export function startProcess(args: string[], env: NodeJS.ProcessEnv, ipc = false, command = process.execPath): Proc {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe", ...(ipc ? (["ipc"] as const) : [])] });
  children.add(child);
  child.on("exit", () => children.delete(child));
  let tail = "";
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-4000);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  return { child, output: () => tail };
}

export function killChildren(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null && child.pid) process.kill(child.pid, "SIGKILL");
  children.clear();
}

/** Runs at the end, last registered first (a database dropped after what used it stopped). */
export function onCleanup(task: () => Promise<void>): void {
  cleanupTasks.push(task);
}

export async function cleanups(): Promise<void> {
  for (const task of cleanupTasks.splice(0).reverse()) await task().catch(() => {});
}

process.on("exit", killChildren);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping child processes`);
    killChildren();
    void cleanups().finally(() => process.exit(130));
  });
}

/**
 * Runs a benchmark's main and exits with its status (0 when it returns none), or 1 when it
 * throws; either way the child processes are killed and the cleanups run first.
 */
export function runMain(main: () => Promise<number | void>): void {
  main()
    .then(async (code) => {
      killChildren();
      await cleanups();
      process.exit(code ?? 0);
    })
    .catch(async (error: unknown) => {
      console.error(error);
      killChildren();
      await cleanups();
      process.exit(1);
    });
}

// --- HTTP servers under test --------------------------------------------------------------------

/** A server under test: its process and the port it listens on. */
export interface Server extends Proc {
  port: number;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export async function waitForHttp(server: Server, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null) throw new Error(`server exited (${server.child.exitCode}):\n${server.output()}`);
    try {
      await fetch(`http://127.0.0.1:${server.port}/health`);
      return; // any answer (the bare server's 404 too) means it is listening
    } catch {
      await sleep(100);
    }
  }
  throw new Error(`server did not listen within ${timeoutMs} ms:\n${server.output()}`);
}

/** Stops a child process with `signal`, escalating to SIGKILL after 15 s. */
export async function stop(server: Proc, signal: NodeJS.Signals): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => server.child.once("exit", () => resolve()));
  server.child.kill(signal);
  const timeout = sleep(15_000).then(() => "timeout");
  if ((await Promise.race([exited, timeout])) === "timeout") server.child.kill("SIGKILL");
  await exited;
}

// --- the Mailroom server under test -------------------------------------------------------------

/** Node flags for the server under test (BENCH_SERVER_NODE_ARGS, e.g. "--cpu-prof"). */
export const SERVER_NODE_ARGS = (process.env.BENCH_SERVER_NODE_ARGS ?? "").split(/\s+/).filter(Boolean);

/** Laid over a benchmarked server's settings: production mode on loopback, quiet logs, and no rate limit in the way. */
export const SERVER_ENV = { LOG_LEVEL: "warn", RATE_LIMIT_REQUESTS: "1000000000", HOST: "127.0.0.1", NODE_ENV: "production" } as const;

/** bin/mailroom-server: the server as production starts it, Node with the heap limit HEAP_LIMIT_MB sets. */
const LAUNCHER = join(ROOT, "bin", "mailroom-server");

/**
 * `mailroom-server <args>` as production starts it, through bin/mailroom-server. Node flags
 * (BENCH_*_NODE_ARGS: --cpu-prof and the like, which NODE_OPTIONS does not take) bypass the
 * launcher, `node <flags> bin/mailroom-server.js <args>`: Node's own heap limit then, unless
 * the flags give one.
 */
export function startMailroom(args: string[], env: NodeJS.ProcessEnv, nodeArgs: readonly string[] = []): Proc {
  return nodeArgs.length === 0 ? startProcess(args, env, false, LAUNCHER) : startProcess([...nodeArgs, join(ROOT, "bin", "mailroom-server.js"), ...args], env);
}

/** Runs `bootstrap --json` on the database `env` names; returns the new workspace's sandbox key. */
export async function bootstrapSandboxKey(env: NodeJS.ProcessEnv): Promise<string> {
  const bootstrap = startMailroom(["bootstrap", "--json"], env);
  const code = await new Promise<number | null>((resolve) => bootstrap.child.once("exit", resolve));
  if (code !== 0) throw new Error(`bootstrap failed (${code}):\n${bootstrap.output()}`);
  const { sandbox_key: key } = JSON.parse(bootstrap.output().trim().split("\n").pop()!) as { sandbox_key: string };
  return key;
}

/** Starts `serve <args>` (e.g. `--role api`) on a free port; waitForHttp tells when it listens. */
export async function startServer(env: NodeJS.ProcessEnv, args: string[]): Promise<Server> {
  const port = await freePort();
  return { ...startMailroom(["serve", ...args], { INBOUND_SMTP_PORT: "0", SUBMISSION_SMTP_PORT: "0", ...env, PORT: String(port) }, SERVER_NODE_ARGS), port };
}

// --- /proc: CPU ---------------------------------------------------------------------------------

/** Busy jiffies of the whole machine (all cores). */
export function machineBusy(): number {
  const fields = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return user + nice + system + irq + softirq + steal;
}

/** utime + stime of a process, in jiffies (0 when it is gone). */
export function processTicks(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** The MariaDB/MySQL server processes on this machine, whose CPU counts as the database's. */
export function databasePids(): number[] {
  try {
    return execFileSync("pidof", ["mariadbd", "mysqld"], { encoding: "utf8" }).trim().split(/\s+/).map(Number).filter(Boolean);
  } catch {
    return [];
  }
}

/**
 * Waits up to `seconds` for 2 s in a row with other processes using under 0.2 core (on 2 cores,
 * another job's CPU skews a figure badly); says what it found. `keepWaiting` may cut it short.
 */
export async function waitForQuiet(seconds: number, keepWaiting: () => boolean = () => true): Promise<string> {
  if (seconds === 0) return "not checked (BENCH_QUIET_WAIT_S=0)";
  const deadline = Date.now() + seconds * 1000;
  let quietFor = 0;
  let last = NaN;
  while (Date.now() < deadline && keepWaiting()) {
    const before = machineBusy();
    await sleep(500);
    last = (machineBusy() - before) / CLK_TCK / 0.5;
    quietFor = last < 0.2 ? quietFor + 500 : 0;
    if (quietFor >= 2000) return "quiet";
  }
  return Number.isNaN(last) ? "not checked (time budget)" : `busy (${last.toFixed(2)} cores in use by others when starting)`;
}
