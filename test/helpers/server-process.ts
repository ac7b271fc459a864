import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { TestDatabase } from "./databases.js";

/** Server processes for tests: started as production starts them, their JSON logs parsed. */

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** The server as production starts it: Node with the heap limit HEAP_LIMIT_MB sets. */
export const LAUNCHER = fileURLToPath(new URL("../../bin/mailroom-server", import.meta.url));

/** Resolves with the first stdout log record that matches, or rejects after `ms`. */
export function waitForLog(server: Server, match: (record: Record<string, unknown>) => boolean, ms: number): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const found = server.records.find(match);
      if (found) {
        cleanup();
        resolve(found);
      }
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`no matching log line within ${ms} ms; stdout:\n${server.stdout}\nstderr:\n${server.stderr}`));
    }, ms);
    const onExit = () => {
      cleanup();
      reject(new Error(`the server exited early; stdout:\n${server.stdout}\nstderr:\n${server.stderr}`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      server.child.stdout!.off("data", check);
      server.child.off("exit", onExit);
    };
    server.child.stdout!.on("data", check);
    server.child.on("exit", onExit);
    check();
  });
}

export interface Server {
  child: ChildProcess;
  stdout: string;
  stderr: string;
  records: Array<Record<string, unknown>>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startServer(env: NodeJS.ProcessEnv, roles: string[] = [], command: string[] = [LAUNCHER]): Server {
  // Every role unless told, the inbound SMTP server on a free port (2525 may be a developer's `make run`).
  const child = spawn(command[0]!, [...command.slice(1), "serve", ...roles.flatMap((role) => ["--role", role])], { cwd: ROOT, env: { INBOUND_SMTP_PORT: "0", SUBMISSION_SMTP_PORT: "0", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const server: Server = {
    child,
    stdout: "",
    stderr: "",
    records: [],
    exited: new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal }))),
  };
  let partial = "";
  child.stdout!.setEncoding("utf8");
  child.stderr!.setEncoding("utf8");
  // Registered before any waiter, so records are parsed before waiters look at them.
  child.stdout!.on("data", (chunk: string) => {
    server.stdout += chunk;
    const lines = (partial + chunk).split("\n");
    partial = lines.pop()!;
    for (const line of lines) {
      try {
        server.records.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not a log record
      }
    }
  });
  child.stderr!.on("data", (chunk: string) => (server.stderr += chunk));
  return server;
}

export const withTimeout = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms))]);

/** Kills a server that still runs (a test's clean-up) and waits for it to be gone. */
export async function killServer(server: Server): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill("SIGKILL");
  await withTimeout(server.exited, 10_000, "killing the server").catch(() => undefined);
}

/**
 * The environment of servers on a test database (loopback, any free port, info logs; with MySQL
 * a SECRET_KEY they share), with a workspace bootstrapped as a script would: its sandbox key.
 */
export async function bootstrapped(database: TestDatabase, db: { url: string; dataDir: string }, extra: NodeJS.ProcessEnv = {}): Promise<{ env: NodeJS.ProcessEnv; sandboxKey: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: db.url,
    DATA_DIR: db.dataDir,
    HOST: "127.0.0.1",
    PORT: "0",
    LOG_LEVEL: "info",
    ...(database.name === "mysql" ? { SECRET_KEY: randomBytes(32).toString("hex") } : {}),
    ...extra,
  };
  const bootstrap = await promisify(execFile)(LAUNCHER, ["bootstrap", "--json"], { cwd: ROOT, env, timeout: 60_000 });
  const keys = JSON.parse(bootstrap.stdout.trim().split("\n").pop()!) as { sandbox_key: string };
  return { env, sandboxKey: keys.sandbox_key };
}

/** The base URL of a server's API, once it listens. */
export async function apiBase(server: Server): Promise<string> {
  const listening = await waitForLog(server, (r) => typeof r.msg === "string" && r.msg.startsWith("Server listening at"), 60_000);
  return /(http:\/\/[^\s]+)/.exec(String(listening.msg))![1]!;
}
