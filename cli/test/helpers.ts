import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders } from "node:http";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Io } from "../src/io.js";
import { run } from "../src/run.js";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll } from "vitest";
import { parse } from "yaml";
import { startTestServer, type TestServer } from "../../test/helpers/http-server.js";

export const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The `mailroom` binary as npm links it; it runs the built cli/dist/bin.js. */
export const BIN = join(REPO, "cli", "bin", "mailroom.js");
const DIST_BIN = join(REPO, "cli", "dist", "bin.js");

/** The sender the test workspace needs: it has no default sender. */
export const FROM = "Acme <hello@acme.example>";

export interface CliResult {
  code: number;
  stdout: string;
  /** stdout as the bytes written (a download without --output). */
  stdoutBytes: Buffer;
  stderr: string;
  /** stdout parsed as one JSON document (fails the test with the output when it is not JSON). */
  json<T = Record<string, unknown>>(): T;
}

export interface RunOptions {
  /**
   * The CLI's environment (MAILROOM_API_KEY, MAILROOM_BASE_URL). The SDK itself still falls back
   * to process.env for a base URL missing here; the test runner sets none.
   */
  env: Record<string, string | undefined>;
  /** Pretend stdout and stderr are a terminal: human output, progress on stderr. */
  tty?: boolean;
  /** Whether stderr is a terminal, when it differs from stdout (`mailroom … | tail` at a terminal). Default: `tty`. */
  stderrTty?: boolean;
  /** Files --html-file / --attach can read, by path; other paths are read from disk. */
  files?: Record<string, string | Buffer>;
  /** Files --output writes, by path, instead of the disk. Default: the disk. */
  written?: Map<string, Buffer>;
  /** What `--file -` reads from stdin, and the first line of which answers a question. Default: no stdin, as where the CLI has none. */
  stdin?: string;
  /** Pretend stdin is a terminal, where a person answers a question (`[y/N]`) with a line of `stdin`. Default: false. */
  stdinTty?: boolean;
  fetch?: (input: Request) => Promise<Response>;
  /** Resolve it to stop `events tail` as Ctrl-C would. Default: never. */
  interrupted?: Promise<void>;
}

/** A live view of a run that has not finished yet (`events tail`). */
export interface RunningCli {
  stdout(): string;
  stderr(): string;
  /**
   * What Ctrl-C does to a command that does not catch it, up to the exit (the binary then exits
   * 130, while here the run goes on): it says what the command left to say, on stderr.
   */
  stop(): void;
  done: Promise<CliResult>;
}

/**
 * Runs `mailroom <argv…>` in this process, through the same `run()` the binary calls, with
 * buffers for stdout and stderr. The promise in `done` settles with the exit code.
 */
export function startCli(argv: string[], options: RunOptions): RunningCli {
  const stdoutChunks: Buffer[] = [];
  const stdout = () => Buffer.concat(stdoutChunks);
  let stderr = "";
  let lastWords = () => {};
  const io: Io = {
    stdout: { write: (chunk: string | Uint8Array) => stdoutChunks.push(Buffer.from(chunk)), isTTY: options.tty ?? false },
    stderr: { write: (chunk: string) => (stderr += chunk), isTTY: options.stderrTty ?? options.tty ?? false },
    env: options.env,
    readFile: async (path) => {
      const given = options.files?.[path];
      if (given !== undefined) return Buffer.from(given);
      return readFile(path);
    },
    writeFile: async (path, data) => {
      if (options.written) options.written.set(path, Buffer.from(data));
      else await writeFile(path, data);
    },
    interrupted: options.interrupted ?? new Promise<void>(() => undefined),
    beforeSignalExit: (say) => (lastWords = say),
    stdin: { isTTY: options.stdinTty ?? false },
    ...(options.stdin !== undefined ? { readStdin: async () => Buffer.from(options.stdin as string), readLine: async () => firstLine(options.stdin as string) } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };
  const done = run(argv, io).then((code) => result(code, stdout(), stderr));
  return { stdout: () => stdout().toString("utf8"), stderr: () => stderr, stop: () => lastWords(), done };
}

/** A line as a person types it, without its line break; undefined for stdin that ends first (Ctrl-D). */
function firstLine(stdin: string): string | undefined {
  if (stdin === "") return undefined;
  return stdin.split(/\r?\n/)[0];
}

export function runCli(argv: string[], options: RunOptions): Promise<CliResult> {
  return startCli(argv, options).done;
}

function result(code: number, stdoutBytes: Buffer, stderr: string): CliResult {
  const stdout = stdoutBytes.toString("utf8");
  return {
    code,
    stdout,
    stdoutBytes,
    stderr,
    json<T>() {
      try {
        return JSON.parse(stdout) as T;
      } catch {
        throw new Error(`stdout is not JSON (exit ${code}):\n${stdout}\nstderr:\n${stderr}`);
      }
    },
  };
}

/** The CLI's environment for a test server: its sandbox key (or `key`) and its URL. */
export function cliEnv(server: { baseUrl: string; sandboxKey: string }, key = server.sandboxKey): Record<string, string> {
  return { MAILROOM_API_KEY: key, MAILROOM_BASE_URL: server.baseUrl };
}

/**
 * The API over plain HTTP, for setting up and checking what a command did without going through
 * the CLI (or the SDK it is built on).
 */
export function api(server: { baseUrl: string; sandboxKey: string }, key = server.sandboxKey) {
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as T;
  };
  return {
    get: <T = Record<string, unknown>>(path: string) => call<T>("GET", path),
    /** Sends a message from the test workspace's sender; answers the accepted message. */
    send: (body: Record<string, unknown>) => call<{ id: string; status: string }>("POST", "/v1/messages", { from: FROM, subject: "Hi", text: "Hi", ...body }),
  };
}

/** A named example of openapi/v1.yaml (`components.examples`), for a stand-in API to answer. */
export function contractExample<T>(name: string): T {
  const spec = parse(readFileSync(join(REPO, "openapi", "v1.yaml"), "utf8")) as { components: { examples: Record<string, { value: unknown }> } };
  return spec.components.examples[name]?.value as T;
}

/** What a stand-in API was asked: one entry per request. */
export interface Seen {
  method: string;
  target: string;
  authorization: string | null;
  idempotencyKey: string | null;
  body: unknown;
}

/**
 * A stand-in for the API: a fetch that answers `status` and `body` to every request (or, given a
 * function, what it answers for the request), and records what it was asked.
 */
export function stubApi(status: number, body: unknown): { fetch: (request: Request) => Promise<Response>; seen: Seen[] };
export function stubApi(answer: (request: Request) => { status: number; body: unknown }): { fetch: (request: Request) => Promise<Response>; seen: Seen[] };
export function stubApi(statusOrAnswer: number | ((request: Request) => { status: number; body: unknown }), fixedBody?: unknown) {
  const seen: Seen[] = [];
  const fetch = async (request: Request) => {
    const url = new URL(request.url);
    const text = await request.clone().text();
    seen.push({
      method: request.method,
      target: `${url.pathname}${url.search}`,
      authorization: request.headers.get("authorization"),
      idempotencyKey: request.headers.get("idempotency-key"),
      body: text ? (JSON.parse(text) as unknown) : undefined,
    });
    const { status, body } = typeof statusOrAnswer === "number" ? { status: statusOrAnswer, body: fixedBody } : statusOrAnswer(request);
    const type = status >= 400 ? "application/problem+json" : "application/json";
    return new Response(JSON.stringify(body), { status, headers: { "content-type": type } });
  };
  return { fetch, seen };
}

/** A list answer as the API sends it; a cursor means there is a next page. */
export const page = <T>(data: T[], next_cursor: string | null = null) => ({ data, has_more: next_cursor !== null, next_cursor });

/** A problem document as the API sends it, for a stand-in API to answer. */
export const problemBody = (status: number, code: string, extra: Record<string, unknown> = {}) => ({
  type: `https://mailroom.dev/problems/${code}`,
  title: `Title of ${code}`,
  status,
  code,
  detail: `Detail of ${code}.`,
  request_id: "req_stub",
  ...extra,
});

/** What fetch does when nothing listens at the address: fails as undici fails a refused connection. */
export const refusedConnection = (): Promise<Response> =>
  Promise.reject(new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }) }));

/** A loopback port that nothing listens on: connecting is refused at once. */
export async function closedPort(): Promise<number> {
  const listener = createNetServer();
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const { port } = listener.address() as { port: number };
  await new Promise((resolve) => listener.close(resolve));
  return port;
}

/** stderr parsed as the JSON problem the CLI prints in JSON mode. */
export function problemOf(result: CliResult): Record<string, unknown> {
  try {
    return JSON.parse(result.stderr) as Record<string, unknown>;
  } catch {
    throw new Error(`stderr is not JSON (exit ${result.code}):\n${result.stderr}`);
  }
}

/** Polls until `check` passes (or fails the test with the last reason after `timeoutMs`). */
export async function eventually(check: () => void, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

/** A promise the test resolves itself: the Ctrl-C of an in-process `events tail`. */
export function interruption(): { interrupted: Promise<void>; interrupt(): void } {
  let interrupt!: () => void;
  const interrupted = new Promise<void>((resolve) => (interrupt = resolve));
  return { interrupted, interrupt };
}

/** One webhook delivery as a receiver got it, and what the `standardwebhooks` library made of it. */
export interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
  /** The verified payload, or the verification error's message. */
  verified: unknown;
}

/** The receiver's answer to one delivery: a status, or a status with headers (say, `retry-after`). */
export type ReceiverAnswer = number | { status: number; headers?: Record<string, string> };

export interface WebhookReceiver {
  url: string;
  deliveries: Delivery[];
  close(): Promise<void>;
}

/**
 * A webhook receiver on a loopback port, as a user writes one: it verifies each delivery with
 * the public `standardwebhooks` library and `secret` (or the secret known by the time a delivery
 * comes), and answers what `answer` says, 204 by default.
 */
export async function startWebhookReceiver(secret: string | (() => string), answer: (delivery: Delivery, index: number) => ReceiverAnswer = () => 204): Promise<WebhookReceiver> {
  const deliveries: Delivery[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      let verified: unknown;
      try {
        verified = new Webhook(typeof secret === "string" ? secret : secret()).verify(body, request.headers as Record<string, string>);
      } catch (error) {
        verified = (error as Error).message;
      }
      const delivery = { headers: request.headers, body, verified };
      deliveries.push(delivery);
      const given = answer(delivery, deliveries.length - 1);
      const { status, headers = {} } = typeof given === "number" ? { status: given } : given;
      response.writeHead(status, headers);
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    deliveries,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

// --- the built binary ---------------------------------------------------------------------------

function newestMtime(paths: string[]): number {
  let newest = 0;
  for (const path of paths) {
    if (!existsSync(path)) continue;
    const stat = statSync(path);
    if (stat.isDirectory()) {
      for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime([join(path, entry)]));
    } else newest = Math.max(newest, stat.mtimeMs);
  }
  return newest;
}

const isStale = (output: string, inputs: string[]) => !existsSync(output) || statSync(output).mtimeMs < newestMtime(inputs);

/**
 * Builds sdk/dist and cli/dist when they are missing or older than their sources, as `make build`
 * does. A stale sdk/dist is recompiled in place rather than with its build script, which empties
 * dist/ first: the in-process test files, running in parallel, import the SDK from there.
 */
export function ensureBuilt(): void {
  const tsc = (project: string) => execFileSync(process.execPath, [join(REPO, "node_modules", "typescript", "bin", "tsc"), "-p", project], { cwd: REPO, stdio: "pipe" });
  const sdk = join(REPO, "sdk");
  const generated = join(REPO, "generated", "v1.d.ts");
  const sdkStale = isStale(join(sdk, "dist", "index.js"), [join(sdk, "src"), join(sdk, "tsconfig.json"), generated]);
  if (!existsSync(join(sdk, "dist"))) {
    execFileSync(process.execPath, [join(sdk, "scripts", "build.mjs")], { cwd: REPO, stdio: "pipe" });
  } else if (sdkStale) {
    tsc(sdk);
    copyFileSync(generated, join(sdk, "dist", "generated", "v1.d.ts"));
  }
  if (sdkStale || isStale(DIST_BIN, [join(REPO, "cli", "src"), join(REPO, "cli", "tsconfig.json")])) tsc(join(REPO, "cli"));
}

export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A running `mailroom …` process, its output so far, and how it ended. */
export interface RunningProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<ProcessResult>;
}

/**
 * Spawns the built binary with exactly `env` (plus PATH), its stdout a pipe: so JSON mode, as
 * in `mailroom … | jq`.
 */
export function spawnCli(argv: string[], env: Record<string, string>): RunningProcess {
  const child = spawn(process.execPath, [BIN, ...argv], { cwd: REPO, env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<ProcessResult>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

export interface FileServer {
  server: TestServer;
  /** MAILROOM_API_KEY and MAILROOM_BASE_URL for the server's sandbox key. */
  env: Record<string, string>;
  /** Plain HTTP to the same server, to set up and check state without the CLI. */
  mailroom: ReturnType<typeof api>;
}

/** One real server for a test file: started before its first test, closed after its last. */
export function useTestServer(onStart: (started: FileServer) => void): void {
  let server: TestServer | undefined;
  beforeAll(async () => {
    server = await startTestServer();
    onStart({ server, env: cliEnv(server), mailroom: api(server) });
  });
  afterAll(async () => server?.close());
}
