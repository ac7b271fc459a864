/**
 * Every setting, its environment variable, default and meaning, in one place. `loadConfig`
 * validates them all and reports every problem in one line, so a bad deployment fails at boot.
 */
export interface Config {
  host: string;
  port: number;
  databaseUrl: string;
  logLevel: string;
  bodyLimitBytes: number;
  rateLimit: { requests: number; windowSeconds: number };
  idempotency: { retentionHours: number; lockSeconds: number };
  worker: { batchSize: number; pollMs: number; leaseSeconds: number };
  sandbox: { deferSeconds: number };
  shutdownGraceMs: number;
  /** 32-byte key that encrypts stored idempotent responses; null = derive a file under ./data. */
  secretKey: string | null;
  dataDir: string;
  /** Where people reach the dashboard (invitation links, cookie security); null = from each request. */
  publicUrl: string | null;
  /** Who may sign up once the first user exists. */
  signup: "invitation" | "open";
}

interface Setting {
  env: string;
  default: string;
  meaning: string;
}

/** The table the README's configuration section is generated from (see docs/configuration.md). */
export const SETTINGS = {
  host: { env: "HOST", default: "127.0.0.1", meaning: "Interface the HTTP server binds (0.0.0.0 to expose it)." },
  port: { env: "PORT", default: "3000", meaning: "HTTP port." },
  databaseUrl: { env: "DATABASE_URL", default: "sqlite:./data/mailroom.db", meaning: "sqlite:PATH (embedded) or mysql://user:pass@host:port/db (MySQL/MariaDB)." },
  logLevel: { env: "LOG_LEVEL", default: "info", meaning: "pino level: fatal, error, warn, info, debug, trace, silent." },
  bodyLimitBytes: { env: "BODY_LIMIT_BYTES", default: String(10 * 1024 * 1024), meaning: "Largest accepted request body; larger gets 413 payload_too_large." },
  rateLimitRequests: { env: "RATE_LIMIT_REQUESTS", default: "1200", meaning: "Requests each API key may make per window." },
  rateLimitWindowSeconds: { env: "RATE_LIMIT_WINDOW_SECONDS", default: "60", meaning: "Length of the rate-limit window." },
  idempotencyRetentionHours: { env: "IDEMPOTENCY_RETENTION_HOURS", default: "24", meaning: "How long completed Idempotency-Key answers are replayed (at least 24)." },
  idempotencyLockSeconds: { env: "IDEMPOTENCY_LOCK_SECONDS", default: "60", meaning: "How long a claimed key answers 409 before a crashed request's claim may be taken over." },
  workerBatchSize: { env: "WORKER_BATCH_SIZE", default: "50", meaning: "Jobs a worker claims at once." },
  workerPollMs: { env: "WORKER_POLL_MS", default: "250", meaning: "How often an idle worker looks for due jobs." },
  jobLeaseSeconds: { env: "JOB_LEASE_SECONDS", default: "120", meaning: "A claimed job whose worker has not finished by then is reclaimed." },
  sandboxDeferSeconds: { env: "SANDBOX_DEFER_SECONDS", default: "30", meaning: "Delay before a simulated deferral (deferred@simulator.test) is retried." },
  shutdownGraceMs: { env: "SHUTDOWN_GRACE_MS", default: "10000", meaning: "How long shutdown waits for in-flight requests and jobs." },
  secretKey: { env: "SECRET_KEY", default: "", meaning: "64 hex characters. Required with MySQL (all nodes share it); with SQLite it is generated into DATA_DIR." },
  dataDir: { env: "DATA_DIR", default: "./data", meaning: "Where the embedded database and generated secret live." },
  publicUrl: { env: "PUBLIC_URL", default: "", meaning: "The dashboard's public origin, e.g. https://mail.example.com (invitation links; Secure cookies). Unset: taken from each request." },
  signup: { env: "SIGNUP", default: "invitation", meaning: "Who may sign up after the first user: invitation (invited addresses only) or open (anyone; each gets a workspace)." },
} satisfies Record<string, Setting>;

export class ConfigError extends Error {
  override name = "ConfigError";
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const read = (key: keyof typeof SETTINGS): string => env[SETTINGS[key].env] ?? SETTINGS[key].default;
  const int = (key: keyof typeof SETTINGS, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const raw = read(key);
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${SETTINGS[key].env}=${JSON.stringify(raw)} must be an integer in [${min}, ${max}]`);
      return min;
    }
    return value;
  };

  const databaseUrl = read("databaseUrl");
  if (!/^(sqlite:|mysql:\/\/|mariadb:\/\/)/.test(databaseUrl)) problems.push(`${SETTINGS.databaseUrl.env} must start with sqlite: or mysql://`);
  const secretKey = read("secretKey") || null;
  if (secretKey !== null && !/^[0-9a-fA-F]{64}$/.test(secretKey)) problems.push(`${SETTINGS.secretKey.env} must be 64 hex characters`);
  if (secretKey === null && !databaseUrl.startsWith("sqlite:")) problems.push(`${SETTINGS.secretKey.env} is required with MySQL so that every node shares it`);

  const config: Config = {
    host: read("host"),
    port: int("port", 0, 65535),
    databaseUrl,
    logLevel: read("logLevel"),
    bodyLimitBytes: int("bodyLimitBytes", 1024),
    rateLimit: { requests: int("rateLimitRequests", 1), windowSeconds: int("rateLimitWindowSeconds", 1, 86400) },
    idempotency: { retentionHours: int("idempotencyRetentionHours", 24), lockSeconds: int("idempotencyLockSeconds", 1, 3600) },
    worker: { batchSize: int("workerBatchSize", 1, 1000), pollMs: int("workerPollMs", 10, 60_000), leaseSeconds: int("jobLeaseSeconds", 5, 86400) },
    sandbox: { deferSeconds: int("sandboxDeferSeconds", 0, 86400) },
    shutdownGraceMs: int("shutdownGraceMs", 0, 600_000),
    secretKey,
    dataDir: read("dataDir"),
    publicUrl: read("publicUrl").replace(/\/+$/, "") || null,
    signup: read("signup") === "open" ? "open" : "invitation",
  };
  if (!["invitation", "open"].includes(read("signup"))) problems.push(`${SETTINGS.signup.env} must be invitation or open`);
  if (config.publicUrl !== null && !/^https?:\/\/[^/]+$/.test(config.publicUrl)) problems.push(`${SETTINGS.publicUrl.env} must be an origin such as https://mail.example.com`);
  if (!["fatal", "error", "warn", "info", "debug", "trace", "silent"].includes(config.logLevel)) problems.push(`${SETTINGS.logLevel.env} is not a pino level`);
  if (problems.length > 0) throw new ConfigError(`invalid configuration: ${problems.join("; ")}`);
  return config;
}
