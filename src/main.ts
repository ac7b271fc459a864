import { parseArgs } from "node:util";
import { getHeapStatistics } from "node:v8";
import type { FastifyInstance } from "fastify";
import { pino } from "pino";
import { buildApp, LOG_REDACTION, logError } from "./app.js";
import { isSecureOrigin } from "./http/session-cookie.js";
import { ConfigError, loadConfig, sendingHostnameWarning, trackingBaseWarning, type Config } from "./config.js";
import { migrate, MigrationLockedError, openDatabase, unlockMigrations } from "./db/connection.js";
import { newId } from "./domain/ids.js";
import { maskUrlCredentials, withoutInput } from "./domain/redact.js";
import { startOpsServer, type OpsServer } from "./http/ops-server.js";
import type { Lifecycle } from "./http/readiness.js";
import { clockBoundsFor, ClockSkewError, type ClockBound } from "./clock-skew.js";
import { startMaintenance, type Maintenance } from "./maintenance.js";
import { createRuntime, type Logger, type Runtime } from "./runtime.js";

/**
 * Process entry: `serve [--role api|worker|smtp|submission ...]`, `migrate [--unlock]`, `bootstrap [--workspace NAME] [--json]`.
 * With the embedded database one process plays every role; with MySQL any number of processes
 * on any number of machines can split them.
 */
const USAGE = `usage: mailroom-server <command>
  serve [--role api] [--role worker] [--role smtp] [--role submission]
                                       run the HTTP API, the delivery worker and webhook dispatcher, the inbound
                                       SMTP server (replies, bounces, complaints) and/or the SMTP submission
                                       server (sending with an API key over SMTP) (default: all four)
  migrate                              apply database migrations and exit
  migrate --unlock                     free the migration lock a process killed while migrating left taken, and exit
  bootstrap [--workspace NAME] [--json] create a workspace and print a sandbox and a live key once
  reseal [--json]                      after a SECRET_KEY rotation, seal every stored DKIM key, webhook secret and
                                       idempotent response under the new key (SECRET_KEY_PREVIOUS opens the old ones)`;

const ROLES = ["api", "worker", "smtp", "submission"] as const;
type Role = (typeof ROLES)[number];

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { role: { type: "string", multiple: true }, workspace: { type: "string" }, json: { type: "boolean" }, unlock: { type: "boolean" }, help: { type: "boolean", short: "h" } },
  });
  const command = positionals[0];
  if (values.help || !command) {
    console.log(USAGE);
    return command ? 0 : 2;
  }
  const config = loadConfig();
  switch (command) {
    case "serve":
      return serve(config, parseRoles(values.role));
    case "migrate": {
      const db = openDatabase(config.databaseUrl);
      if (values.unlock) console.log((await unlockMigrations(db)) ? "migration lock freed" : "the migration lock was not taken; nothing to free");
      else {
        await migrate(db);
        console.log("migrations applied");
      }
      await db.close();
      return 0;
    }
    case "bootstrap":
      return bootstrap(config, values.workspace ?? "My workspace", values.json ?? !process.stdout.isTTY);
    case "reseal":
      return reseal(config, values.json ?? !process.stdout.isTTY);
    default:
      console.error(`unknown command ${command}\n${USAGE}`);
      return 2;
  }
}

function parseRoles(values: string[] | undefined): Set<Role> {
  const roles = (values ?? ROLES).flatMap((v) => v.split(",")).map((v) => v.trim());
  for (const role of roles) if (!(ROLES as readonly string[]).includes(role)) throw new ConfigError(`unknown role ${role}; roles are ${ROLES.join(", ")}`);
  return new Set(roles as Role[]);
}

/** What serve() has started so far: a signal or a failed start closes exactly that. */
interface Started {
  log: Logger;
  runtime?: Runtime;
  ops?: OpsServer;
  app?: FastifyInstance;
  smtp?: { port: number };
  submission?: { port: number };
  maintenance?: Maintenance;
}

async function serve(config: Config, roles: Set<Role>): Promise<number> {
  const lifecycle: Lifecycle = { ready: false };
  // The worker, the dispatcher and the SMTP server log through the runtime's logger.
  const processLog = pino({ level: config.logLevel, redact: LOG_REDACTION, serializers: { err: logError } });
  const started: Started = { log: processLog };
  let stopping = false;
  let startup: Promise<void> = Promise.resolve();
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    started.log.info({ signal }, "shutting down: readiness off, finishing in-flight work");
    lifecycle.ready = false;
    exitWhenGraceIsOver(config, started);
    // During start-up: it stops before its next step, and what it started is stopped below.
    await startup.catch(() => undefined);
    await stopStarted(started);
    started.log.info({}, "stopped");
    process.exit(0);
  };
  // Before anything starts: without them a signal during start-up kills the process wherever it is.
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  processLog.info({ roles: [...roles] }, "starting");
  startup = start(config, roles, lifecycle, started, () => stopping);
  try {
    await startup;
    if (!stopping) {
      lifecycle.ready = true;
      await announce(config, roles, started);
    }
  } catch (error) {
    if (stopping) {
      // A signal came first: its shutdown stops what started, and exits.
      started.log.error({ err: error }, "start-up failed while shutting down");
      return new Promise<number>(() => {});
    }
    stopping = true;
    lifecycle.ready = false;
    await stopStarted(started).catch((closeError: unknown) => started.log.error({ err: closeError }, "could not stop what had started"));
    throw error;
  }
  return new Promise<number>(() => {});
}

/**
 * Starts the roles' parts, every listener before the worker, the dispatcher and maintenance: a
 * process that cannot bind a port (EADDRINUSE) then exits holding no job, where a job it held
 * would wait out its lease, and one whose SMTP hand-off had begun could be sent twice. Each step
 * begins only if no signal has come meanwhile.
 */
async function start(config: Config, roles: Set<Role>, lifecycle: Lifecycle, started: Started, stopping: () => boolean): Promise<void> {
  const clockBounds = clockBoundsFor(config, roles);
  const runtime = (started.runtime = await createRuntime(config, { logger: started.log }));
  const steps: Array<() => Promise<unknown>> = [
    () => checkClockAtStart(runtime, clockBounds, started.log),
    // Up before the roles start, so that probes see "not ready" until they have.
    async () => {
      if (config.metricsPort === null) return;
      const options = { host: config.host, port: config.metricsPort, metrics: runtime.metrics, lifecycle, ping: runtime.repositories.ping, newRequestId: () => newId("request", runtime.clock.now()), log: started.log };
      started.ops = await listening({ host: "HOST", port: "METRICS_PORT" }, config.host, config.metricsPort, () => startOpsServer(options));
    },
    async () => {
      // A worker-only process serves no HTTP, so it does not build the app (a third of its memory).
      if (!roles.has("api")) return;
      const app = (started.app = await buildApp({ runtime, lifecycle }));
      started.log = app.log;
      await listening({ host: "HOST", port: "PORT" }, config.host, config.port, () => app.listen({ host: config.host, port: config.port }));
    },
    async () => {
      if (roles.has("smtp")) started.smtp = await listening({ host: "INBOUND_SMTP_HOST", port: "INBOUND_SMTP_PORT" }, config.inbound.host, config.inbound.port, () => runtime.startSmtp());
    },
    async () => {
      if (roles.has("submission")) started.submission = await listening({ host: "SUBMISSION_SMTP_HOST", port: "SUBMISSION_SMTP_PORT" }, config.submission.host, config.submission.port, () => runtime.startSubmission());
    },
    async () => {
      if (!roles.has("worker")) return;
      runtime.worker.start();
      runtime.dispatcher.start();
      started.maintenance = startMaintenance(runtime, started.log, { clockBounds });
    },
  ];
  for (const step of steps) {
    if (stopping()) return;
    await step();
  }
}

/**
 * Before any door opens: a process whose clock would break the claims its roles take (a
 * worker's leases, an API node's Idempotency-Key locks) must not start at all.
 */
async function checkClockAtStart(runtime: Runtime, bounds: readonly ClockBound[], log: Logger): Promise<void> {
  const clock = await runtime.checkClock(bounds);
  if (clock.verdict === "too_far") throw new ClockSkewError(clock.message);
  if (clock.verdict === "warning") log.warn({ clock_skew_ms: Math.round(clock.skewMs!) }, clock.message);
}

/** A port the process cannot bind, said in one line (as a ConfigError is) rather than with a stack. */
class ListenError extends Error {
  override name = "ListenError";
}

/** Runs `listen`, turning a bind failure into a ListenError naming the settings to change. */
async function listening<T>(settings: { host: string; port: string }, host: string, port: number, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | null)?.code;
    const where = `port ${port} on ${host}`;
    if (code === "EADDRINUSE") throw new ListenError(`${where} is in use (${settings.port}): another process listens there; stop it or set ${settings.port} to a free port`);
    if (code === "EACCES") throw new ListenError(`${where} may not be bound by this user (${settings.port}): ports below 1024 need CAP_NET_BIND_SERVICE (docs/deployment.md#running-it-as-a-service)`);
    if (code === "EADDRNOTAVAIL") throw new ListenError(`${host} is not an address of this machine (${settings.host}): set it to one of its addresses, or 0.0.0.0`);
    throw error;
  }
}

/** The start-up lines: where each door is, and what the operator should still set. */
async function announce(config: Config, roles: Set<Role>, started: Started): Promise<void> {
  const { log, runtime, smtp, submission, ops } = started;
  // Where people reach the dashboard; 0.0.0.0 is reachable from anywhere, so not as loopback.
  const host = config.host === "::" ? "0.0.0.0" : config.host.includes(":") ? `[${config.host}]` : config.host;
  const origin = config.publicUrl ?? `http://${host}:${config.port}`;
  const heapLimitMb = Math.round(getHeapStatistics().heap_size_limit / 2 ** 20);
  if (startedWithoutHeapLimit(config)) {
    log.warn({ heap_limit_mb: heapLimitMb }, `Node was started without the heap limit HEAP_LIMIT_MB=${config.heapLimitMb} asks for: start the server with bin/mailroom-server (make run does), or give node --max-old-space-size; without it a worker's memory grows further (docs/performance.md#delivery)`);
  }
  log.info({ roles: [...roles], database: maskUrlCredentials(config.databaseUrl), dashboard: roles.has("api") ? `${origin}/` : undefined, smtp: smtp ? `${config.inbound.host}:${smtp.port}` : undefined, submission: submission ? `${config.submission.host}:${submission.port}` : undefined, metrics: ops ? `http://${host}:${ops.port}/metrics` : undefined, heap_limit_mb: heapLimitMb }, "mailroom is running");
  if (roles.has("api") && !(await runtime!.repositories.users.any())) {
    log.info({}, `no user yet: open ${origin}/ and sign up (the first user creates the first workspace), or run \`make bootstrap\` for API keys only`);
  }
  const trackingWarning = roles.has("worker") ? trackingBaseWarning(config) : null;
  if (trackingWarning) log.warn({ tracking_base_url: config.trackingBaseUrl }, trackingWarning);
  const hostnameWarning = sendingHostnameWarning(config);
  if (hostnameWarning) log.warn({ sending_hostname: config.delivery.hostname }, hostnameWarning);
  if (roles.has("api") && !isSecureOrigin(origin)) {
    log.warn({}, "the dashboard is reachable over plain HTTP beyond loopback: its cookies cannot be Secure. Put Mailroom behind HTTPS and set PUBLIC_URL=https://…");
  }
}

/**
 * Exits 1 once the grace is over, keeping its last fifth (2 s at most) for writing what waits in
 * memory when the drain overruns: work accepted through the group commit, request-log entries.
 */
function exitWhenGraceIsOver(config: Config, started: Started): void {
  const flushMs = Math.min(2000, config.shutdownGraceMs / 5);
  const force = setTimeout(() => {
    started.log.error({}, "shutdown grace period over");
    const flushed = (started.runtime?.flush() ?? Promise.resolve()).catch((error: unknown) => started.log.error({ err: error }, "could not write what waited in memory"));
    void Promise.race([flushed, new Promise((resolve) => setTimeout(resolve, flushMs))]).then(() => process.exit(1));
  }, config.shutdownGraceMs - flushMs);
  force.unref();
}

/**
 * Every door stops taking work at once: HTTP (in-flight requests finish), inbound SMTP, the
 * worker and the dispatcher (what they began finishes, the rest is given back); a maintenance
 * round ends after its step under way; all before the database closes. Only what has started.
 */
async function stopStarted(started: Started): Promise<void> {
  started.maintenance?.stop();
  await Promise.all([started.app?.close(), started.runtime?.stop(), started.maintenance?.round]);
  await started.runtime?.close(); // group commit drains, request log flushes, database closes
  await started.ops?.close(); // last: probes saw "not ready" throughout the drain
}

/**
 * The heap limit is a flag of Node's command line (bin/mailroom-server sets it), so a process
 * started another way (`node src/main.ts`, a custom container command) runs without it.
 */
function startedWithoutHeapLimit(config: Config): boolean {
  // V8 takes a flag's words joined by dashes or by underscores.
  const flagged = [...process.execArgv, process.env.NODE_OPTIONS ?? ""].some((arg) => /--max[-_]old[-_]space[-_]size\b/.test(arg));
  return config.heapLimitMb > 0 && !flagged;
}

async function bootstrap(config: Config, name: string, json: boolean): Promise<number> {
  const runtime = await createRuntime(config);
  try {
    const result = await runtime.services.workspace.bootstrap(name);
    if (json) console.log(JSON.stringify(result));
    else {
      console.log(`Workspace ${result.workspace_id} (${name}) created.\n`);
      console.log(`  sandbox key  ${result.sandbox_key}`);
      console.log(`  live key     ${result.live_key}\n`);
      console.log("These secrets are shown once. Store them now; only their digests are kept.");
    }
    return 0;
  } finally {
    await runtime.close();
  }
}

/**
 * Re-seals stored secrets under the current SECRET_KEY, showing progress on stderr. Exits 1 when
 * some value no key opens: dropping SECRET_KEY_PREVIOUS would not lose it (it is lost already),
 * but the operator must know before deciding.
 */
async function reseal(config: Config, json: boolean): Promise<number> {
  const runtime = await createRuntime(config);
  try {
    const counts = await runtime.services.reseal.run((count) => {
      if (!json || process.stderr.isTTY) process.stderr.write(`${count.name}: ${count.rows} read, ${count.resealed} resealed\n`);
    });
    const unreadable = counts.reduce((sum, count) => sum + count.unreadable, 0);
    if (json) console.log(JSON.stringify({ counts, unreadable }));
    else {
      for (const count of counts) {
        console.log(`${count.name}: ${count.resealed} of ${count.rows} resealed under SECRET_KEY${count.changed ? `, ${count.changed} changed meanwhile (run again)` : ""}${count.unreadable ? `, ${count.unreadable} UNREADABLE` : ""}`);
      }
      console.log(
        unreadable > 0
          ? "Some values open under no key given: add the key that sealed them to SECRET_KEY_PREVIOUS and run reseal again."
          : "Every stored secret is sealed under SECRET_KEY. Keep the old key in SECRET_KEY_PREVIOUS for as long as links and reply addresses in mail already sent should work (docs/deployment.md#rotating-the-secret-key).",
      );
    }
    return unreadable > 0 ? 1 : 0;
  } finally {
    await runtime.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    // What the operator must fix is one line; anything else is a bug, with its stack.
    console.error(error instanceof ConfigError || error instanceof MigrationLockedError || error instanceof ClockSkewError || error instanceof ListenError ? error.message : withoutInput(error));
    process.exit(1);
  },
);
