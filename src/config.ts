import { hostname } from "node:os";
import { isIP } from "node:net";
import { isLoopback } from "./domain/loopback.js";
import { credentialUrlProblem } from "./domain/redact.js";

/**
 * Every setting, its environment variable, default and meaning, in one place. `loadConfig`
 * validates them all and reports every problem in one line, so a bad deployment fails at boot.
 * A blank variable (empty, or spaces only) counts as unset and takes the default: compose files
 * that pass `VAR=${VAR}` give one for every variable the operator did not set, and Number("")
 * would otherwise load it as 0.
 */
export interface Config {
  host: string;
  port: number;
  /** The operators' port (/metrics, /health, /ready) on `host`; null: none. */
  metricsPort: number | null;
  databaseUrl: string;
  logLevel: string;
  bodyLimitBytes: number;
  /** How long a client may take to send a whole request; 0: no limit. */
  requestTimeoutMs: number;
  rateLimit: { requests: number; windowSeconds: number };
  idempotency: { retentionHours: number; lockSeconds: number };
  /** How long the request log keeps a request (docs/request-log.md); 0: no log. */
  requestLogRetentionDays: number;
  worker: { batchSize: number; pollMs: number; leaseSeconds: number };
  sandbox: { deferSeconds: number };
  shutdownGraceMs: number;
  /** The heap limit bin/mailroom-server starts Node with, in MiB (0: Node's default). */
  heapLimitMb: number;
  /** 32-byte key that encrypts stored idempotent responses; null = derive a file under dataDir. */
  secretKey: string | null;
  /** Keys SECRET_KEY replaced, newest first: what they sealed or signed still opens or verifies. */
  secretKeyPrevious: string[];
  dataDir: string;
  /** Where people reach the dashboard (invitation links, cookie security); null = from each request. */
  publicUrl: string | null;
  /** Who may sign up once the first user exists. */
  signup: "invitation" | "open";
  /** Origin of open, click and unsubscribe links when the sending domain has no tracking domain. */
  trackingBaseUrl: string;
  /** Which proxies' X-Forwarded-For is believed for a request's client address (Fastify's trustProxy). */
  trustProxy: false | string[];
  delivery: DeliveryConfig;
  domains: DomainsConfig;
  templates: TemplatesConfig;
  webhooks: WebhooksConfig;
  inbound: InboundConfig;
  submission: SubmissionConfig;
  attachments: AttachmentsConfig;
}

/** The SMTP submission server, role `submission` (docs/smtp.md): applications send through it with an API key. */
export interface SubmissionConfig extends SmtpListenerConfig {
  /** TLS from the first byte (port 465, RFC 8314) instead of STARTTLS. Without TLS files the server listens on loopback only. */
  implicitTls: boolean;
}

/** Attachments given by URL, fetched while a send is checked (docs/api.md#attachments-by-url). */
export interface AttachmentsConfig {
  /** Each fetch, connection to last byte, redirects included. */
  fetchTimeoutMs: number;
  /** The bytes one request may fetch, all its URLs together (a batch's messages share them). */
  fetchMaxBytes: number;
  /** The fetched bytes all requests of the process may hold at once; past it, a request that fetches is answered 503. */
  fetchMaxBytesInHand: number;
  /** Whether URLs may point at private, loopback and link-local addresses (SSRF guard off). */
  allowPrivateTargets: boolean;
}

/** Where and how one of Mailroom's SMTP servers listens (the inbound MX, the submission server). */
export interface SmtpListenerConfig {
  host: string;
  /** Inbound: 25 in production (the return-path domains' MX points here); submission: 587. */
  port: number;
  /** Larger messages are refused with 552 5.3.4. */
  maxMessageBytes: number;
  /** Simultaneous SMTP connections; more are refused with 421. */
  maxConnections: number;
  /** An idle connection is closed after this long. */
  timeoutMs: number;
  /** PEM files offering TLS; without both, there is none. */
  tlsKeyFile: string | null;
  tlsCertFile: string | null;
  /**
   * Load balancers whose connections start with a PROXY protocol v1 header naming the client
   * (docs/deployment.md#load-balancers-in-front-of-smtp); empty for none.
   */
  proxyProtocolFrom: string[];
}

/** The inbound SMTP server, role `smtp` (DESIGN.md §10, docs/inbound.md). */
export type InboundConfig = SmtpListenerConfig;

/** Automatic re-verification of verified domains (docs/domains.md#automatic-checks). */
export interface DomainsConfig {
  /** How often a verified domain's records are looked up again; 0 turns automatic checks off. */
  recheckMinutes: number;
  /** How long a verified domain whose records went missing keeps sending live mail before it fails. */
  graceHours: number;
}

/** Webhook delivery (DESIGN.md §10, docs/webhooks.md). */
export interface WebhooksConfig {
  /** Each attempt, connection to last byte. */
  timeoutMs: number;
  /** Whether endpoints may point at private, loopback and link-local addresses (SSRF guard off). */
  allowPrivateTargets: boolean;
  maxInFlightPerEndpoint: number;
  /** HTTP requests a worker has in flight over every endpoint. */
  concurrency: number;
  batchSize: number;
  pollMs: number;
  leaseSeconds: number;
}

/** Template rendering (docs/templates.md#limits): where it runs and how much a template may ask for. */
export interface TemplatesConfig {
  /** Worker threads rendering templates; each renders one at a time. */
  workers: number;
  /** Hard limit of one render: past it the worker is terminated and replaced (422 template_render_failed). */
  timeoutMs: number;
  /** liquidjs' own render-time limit per field, checked between template nodes (stops most runaways early). */
  renderLimitMs: number;
  /** liquidjs' allocation budget per field: bounds ranges, loop iterations and string building. */
  memoryLimit: number;
  /** Largest template source liquidjs parses, per field, in characters. */
  parseLimit: number;
  /** Largest rendered field, in characters. */
  maxOutputChars: number;
  /** Heap of each render worker, in MiB: a template that allocates past it kills its worker, not the server. */
  workerHeapMb: number;
  /** How long sends reuse a template lookup; changes made through another process reach this one within it. */
  cacheMs: number;
}

/** Live delivery (DESIGN.md §9): how mail leaves, how long it keeps trying. */
export interface DeliveryConfig {
  /** mx: straight to each recipient domain's MX; relay: everything through relayUrl. */
  transport: "mx" | "relay";
  /** smtp://user:pass@host:587 (STARTTLS when offered) or smtps://user:pass@host:465. */
  relayUrl: string | null;
  /** Resolvers for MX/A/AAAA and domain verification ("127.0.0.1:5353"); empty = the system's. */
  dnsServers: string[];
  /** How long delivery reuses an MX or address answer at most (addresses: no longer than their TTL); 0 = never. */
  dnsCacheSeconds: number;
  /** Port of recipients' MX hosts: 25 everywhere but in tests. */
  mxPort: number;
  /** This MTA's public host name: EHLO name, SPF `a:` mechanism and return-path MX target. */
  hostname: string;
  maxConnectionsPerDestination: number;
  /** Simultaneous SMTP transactions per worker process. */
  concurrency: number;
  /** Threads that render and DKIM-sign outgoing mail; 0: on the worker's event loop. */
  composeThreads: number;
  /** Content bytes of the messages a worker holds at once (one message always goes, however large). */
  maxBytesInHand: number;
  connectTimeoutMs: number;
  /** Per SMTP phase: greeting, each command's reply, the DATA transfer. */
  commandTimeoutMs: number;
  /** A connection open longer than this is not reused: closed with QUIT after its transaction. */
  connectionReuseTimeLimitSeconds: number;
  /** Messages one connection carries at most, then it is closed with QUIT; 0: no limit. */
  maxMessagesPerConnection: number;
  /** Postfix-like backoff: the first retry after retryMinSeconds, doubling up to retryMaxSeconds. */
  retryMinSeconds: number;
  retryMaxSeconds: number;
  /** How long a message keeps being retried before it fails (4.4.7). */
  lifetimeSeconds: number;
}

interface Setting {
  env: string;
  default: string;
  meaning: string;
}

/** Every setting; the README's configuration table names each one (test/unit/config.test.ts checks). */
export const SETTINGS = {
  host: { env: "HOST", default: "127.0.0.1", meaning: "Interface the HTTP server binds (0.0.0.0 to expose it)." },
  port: { env: "PORT", default: "3000", meaning: "HTTP port." },
  metricsPort: { env: "METRICS_PORT", default: "", meaning: "The operators' port: when set, the process also serves GET /metrics, /health and /ready there (on HOST), whatever its roles. A --role worker, smtp or submission process serves no other HTTP, so this is where its counters are scraped. Empty: none (the API role still serves /metrics on PORT)." },
  databaseUrl: { env: "DATABASE_URL", default: "", meaning: "sqlite:PATH (embedded) or mysql://user:pass@host:port/db (MySQL/MariaDB; characters such as # / ? % in the password percent-encoded). Empty: sqlite:DATA_DIR/mailroom.db." },
  logLevel: { env: "LOG_LEVEL", default: "info", meaning: "pino level: fatal, error, warn, info, debug, trace, silent." },
  bodyLimitBytes: { env: "BODY_LIMIT_BYTES", default: String(10 * 1024 * 1024), meaning: "Largest accepted request body; larger gets 413 payload_too_large." },
  requestTimeoutMs: { env: "REQUEST_TIMEOUT_MS", default: "120000", meaning: "How long a client may take to send a whole request, headers and body; a slower one gets 408 request_timeout and its connection is closed, so slow senders cannot hold connections open without end. 0: no limit (a reverse proxy in front enforces its own)." },
  rateLimitRequests: { env: "RATE_LIMIT_REQUESTS", default: "1200", meaning: "Requests each API key may make per window." },
  rateLimitWindowSeconds: { env: "RATE_LIMIT_WINDOW_SECONDS", default: "60", meaning: "Length of the rate-limit window." },
  idempotencyRetentionHours: { env: "IDEMPOTENCY_RETENTION_HOURS", default: "24", meaning: "How long completed Idempotency-Key answers are replayed (at least 24); a workspace's content retention, if shorter, bounds its answers (docs/idempotency.md)." },
  requestLogRetentionDays: { env: "REQUEST_LOG_RETENTION_DAYS", default: "7", meaning: "How long the request log (listRequestLogs) keeps each authenticated /v1 request, 0 to 90 days; 0 keeps no log." },
  idempotencyLockSeconds: { env: "IDEMPOTENCY_LOCK_SECONDS", default: "60", meaning: "How long a claimed key answers 409 after its request last renewed it (a running request renews every third of this); then a crashed request's retry may take it over. A third of it is how far an API node's clock may be from the database server's (docs/scaling.md#clocks)." },
  workerBatchSize: { env: "WORKER_BATCH_SIZE", default: "50", meaning: "Jobs a worker claims at once." },
  workerPollMs: { env: "WORKER_POLL_MS", default: "250", meaning: "How often an idle worker looks for due jobs." },
  jobLeaseSeconds: { env: "JOB_LEASE_SECONDS", default: "120", meaning: "A claimed job whose worker has not finished by then is reclaimed. A third of the shorter of this and WEBHOOK_LEASE_SECONDS is how far a worker's clock may be from the database server's (docs/scaling.md#clocks)." },
  sandboxDeferSeconds: { env: "SANDBOX_DEFER_SECONDS", default: "30", meaning: "Delay before a simulated deferral (deferred@simulator.test) is retried." },
  shutdownGraceMs: { env: "SHUTDOWN_GRACE_MS", default: "10000", meaning: "How long shutdown waits for in-flight requests and jobs, at least 1000; past it the process exits 1, having kept the grace's last fifth (2 s at most) to write what waits in memory." },
  heapLimitMb: { env: "HEAP_LIMIT_MB", default: "1024", meaning: "Node's heap limit in MiB, set by bin/mailroom-server (and so make run) as it starts Node: under 2 GiB, V8 lets the heap grow far less past its live data, which keeps a delivery worker's memory flat (docs/performance.md). 0: Node's default. A --max-old-space-size in NODE_OPTIONS wins." },
  secretKey: { env: "SECRET_KEY", default: "", meaning: "64 hex characters. Required with MySQL (all nodes share it); with SQLite it is generated into DATA_DIR." },
  secretKeyPrevious: { env: "SECRET_KEY_PREVIOUS", default: "", meaning: "Keys SECRET_KEY replaced, comma-separated, newest first: data sealed and links signed under them still open and verify (docs/deployment.md#rotating-the-secret-key)." },
  dataDir: { env: "DATA_DIR", default: "./data", meaning: "Where the embedded database (DATABASE_URL's default) and generated secret live." },
  trustProxy: { env: "TRUST_PROXY", default: "", meaning: "Reverse proxies whose X-Forwarded-For gives the client's address (sign-in throttling, API keys' allowed_ips, the audit log, the IP of opens and clicks): comma-separated addresses and CIDRs such as 127.0.0.1,10.0.0.0/8; empty for none. Name only proxies you run: a trusted hop's header is believed." },
  publicUrl: { env: "PUBLIC_URL", default: "", meaning: "The dashboard's public origin, e.g. https://mail.example.com (invitation links; Secure cookies). Unset: taken from each request." },
  trackingBaseUrl: { env: "TRACKING_BASE_URL", default: "", meaning: "Origin of tracking links (open image, click redirects, one-click unsubscribe) for mail from a domain without a tracking_domain, e.g. https://t.mail.example.com; a tracking domain's CNAME points at its host. Empty: PUBLIC_URL, else http://localhost:PORT. Use https: List-Unsubscribe-Post (one-click) is added only then, and a worker warns at start when it is http or loopback." },
  signup: { env: "SIGNUP", default: "invitation", meaning: "Who may sign up after the first user: invitation (invited addresses only) or open (anyone; each gets a workspace)." },
  deliveryTransport: { env: "DELIVERY_TRANSPORT", default: "mx", meaning: "How live mail leaves: mx (straight to each recipient domain's MX hosts) or relay (everything through SMTP_RELAY_URL)." },
  smtpRelayUrl: { env: "SMTP_RELAY_URL", default: "", meaning: "The relay for DELIVERY_TRANSPORT=relay: smtp://user:pass@host:587 (STARTTLS when offered) or smtps://user:pass@host:465 (characters such as # / ? % in the password percent-encoded)." },
  dnsServers: { env: "DNS_SERVERS", default: "", meaning: "Comma-separated resolvers (ip or ip:port) for MX lookups and domain verification. Empty: the system's." },
  dnsCacheSeconds: { env: "DNS_CACHE_SECONDS", default: "60", meaning: "How long a delivery worker reuses an MX or address (A/AAAA) answer at most; an address answer no longer than its TTL (Node does not report an MX answer's TTL). 0 asks for every message. Domain verification always asks." },
  smtpMxPort: { env: "SMTP_MX_PORT", default: "25", meaning: "Port of the recipients' MX hosts (25; tests point it at a local server)." },
  sendingHostname: { env: "SENDING_HOSTNAME", default: "", meaning: "This MTA's public host name: EHLO name, SPF a: mechanism and return-path MX target. Empty: the machine's host name." },
  smtpMaxConnectionsPerDestination: { env: "SMTP_MAX_CONNECTIONS_PER_DESTINATION", default: "10", meaning: "Open SMTP connections per destination MX host, per worker." },
  deliveryConcurrency: { env: "DELIVERY_CONCURRENCY", default: "100", meaning: "SMTP transactions a worker runs at once." },
  deliveryMaxBytesInHand: { env: "DELIVERY_MAX_BYTES_IN_HAND", default: String(64 * 1024 * 1024), meaning: "Content (subject, bodies, attachments as accepted) of the messages a worker holds at once; a message waits until it fits beside the others, and one larger than this goes alone. Bounds a worker's memory (a message in hand takes a few times its content: see docs/delivery.md)." },
  deliveryComposeThreads: { env: "DELIVERY_COMPOSE_THREADS", default: "1", meaning: "Worker threads of a delivery worker that render and DKIM-sign outgoing mail, started on first use (the CPU-heavy part of sending: see docs/performance.md); 0 does it on the worker's event loop." },
  smtpConnectTimeoutMs: { env: "SMTP_CONNECT_TIMEOUT_MS", default: "30000", meaning: "Timeout to open an SMTP connection." },
  smtpCommandTimeoutMs: { env: "SMTP_COMMAND_TIMEOUT_MS", default: "60000", meaning: "Timeout of each SMTP phase (greeting, each reply, the DATA transfer)." },
  smtpConnectionReuseTimeLimitSeconds: { env: "SMTP_CONNECTION_REUSE_TIME_LIMIT_SECONDS", default: "300", meaning: "How long an outbound SMTP connection is reused at most (Postfix's smtp_connection_reuse_time_limit): one open longer is closed with QUIT after its transaction, and the next message opens a new one to the addresses DNS gives then. Under steady traffic a connection never goes idle, so this bounds how long mail keeps going to an MX host's old address, or past its old TLS certificate." },
  smtpMaxMessagesPerConnection: { env: "SMTP_MAX_MESSAGES_PER_CONNECTION", default: "100", meaning: "Messages (one recipient each) an outbound SMTP connection carries at most; then it is closed with QUIT and the next message opens a new one. Keeps under receivers that answer 421 past a per-session cap, for the cost of a handshake per 100 messages. 0: no limit (Postfix's default)." },
  retryMinSeconds: { env: "RETRY_MIN_SECONDS", default: "300", meaning: "First retry of a deferred recipient, at least 60 (a destination that defers is not hammered); doubles on each attempt." },
  retryMaxSeconds: { env: "RETRY_MAX_SECONDS", default: "4000", meaning: "Longest wait between retries; at least RETRY_MIN_SECONDS." },
  deliveryLifetimeSeconds: { env: "DELIVERY_LIFETIME_SECONDS", default: String(5 * 24 * 3600), meaning: "How long a message is retried before it fails with 4.4.7 (a message's expires_at may shorten it)." },
  domainRecheckMinutes: { env: "DOMAIN_RECHECK_MINUTES", default: "360", meaning: "How often a worker looks a verified domain's DNS records up again (hourly, at most, while they are missing). 0 turns automatic checks off: a domain then changes status only when verified by hand." },
  domainGraceHours: { env: "DOMAIN_GRACE_HOURS", default: "72", meaning: "How long a verified domain whose required records went missing (temporary_failure) keeps sending live mail before it is failed and refused." },
  templateRenderWorkers: { env: "TEMPLATE_RENDER_WORKERS", default: "2", meaning: "Worker threads that render templates (each renders one at a time), so a runaway template never stalls the server." },
  templateRenderTimeoutMs: { env: "TEMPLATE_RENDER_TIMEOUT_MS", default: "2000", meaning: "Hard limit of one template render: past it the worker is terminated and replaced, and the request gets 422 template_render_failed." },
  templateRenderLimitMs: { env: "TEMPLATE_RENDER_LIMIT_MS", default: "500", meaning: "liquidjs' render-time limit per field (renderLimit), checked between template nodes; stops most runaway loops before the hard timeout." },
  templateMemoryLimit: { env: "TEMPLATE_MEMORY_LIMIT", default: "10000000", meaning: "liquidjs' allocation budget per field (memoryLimit): a range counts its length, strings their characters. Bounds huge ranges and loops." },
  templateParseLimit: { env: "TEMPLATE_PARSE_LIMIT", default: "1000000", meaning: "Largest template source parsed, per field, in characters (liquidjs parseLimit)." },
  templateMaxOutputChars: { env: "TEMPLATE_MAX_OUTPUT_CHARS", default: "2000000", meaning: "Largest rendered subject, html or text, in characters; larger fails with 422 template_render_failed." },
  templateWorkerHeapMb: { env: "TEMPLATE_WORKER_HEAP_MB", default: "128", meaning: "Heap of each template render worker, in MiB; a template that allocates past it fails (its worker is replaced), the server does not." },
  templateCacheMs: { env: "TEMPLATE_CACHE_MS", default: "1000", meaning: "How long sends reuse a template lookup instead of reading it again (0: never). A publish, draft edit or delete made through another process reaches this one's sends within it; this process's own changes apply at once." },
  webhookTimeoutMs: { env: "WEBHOOK_TIMEOUT_MS", default: "15000", meaning: "How long a webhook attempt may take, connection to last byte; longer counts as a failed attempt (timeout)." },
  attachmentFetchTimeoutMs: { env: "ATTACHMENT_FETCH_TIMEOUT_MS", default: "10000", meaning: "How long fetching one attachment given by URL may take, redirects included; longer is a 422 naming it." },
  attachmentFetchMaxBytes: { env: "ATTACHMENT_FETCH_MAX_BYTES", default: String(10 * 1024 * 1024), meaning: "The bytes one request may fetch for its attachments given by URL, all together; a batch's messages share them (10 MiB)." },
  attachmentFetchMaxBytesInHand: { env: "ATTACHMENT_FETCH_MAX_BYTES_IN_HAND", default: String(256 * 1024 * 1024), meaning: "The bytes of attachments given by URL that all requests of an API process may hold at once, fetched or declared by the answers being fetched, until each request ends (256 MiB); a request that would pass it is answered 503 with Retry-After. A held file takes its size in bytes and about 1.4 times that on the heap (as base64), so keep it at most about a quarter of HEAP_LIMIT_MB (256 MiB of 1 GiB). At least ATTACHMENT_FETCH_MAX_BYTES." },
  attachmentFetchAllowPrivateTargets: { env: "ATTACHMENT_FETCH_ALLOW_PRIVATE_TARGETS", default: "false", meaning: "true lets attachment URLs point at private, loopback and link-local addresses (files on an internal server). Off, such URLs are refused, at every redirect and at connect time." },
  webhookAllowPrivateTargets: { env: "WEBHOOK_ALLOW_PRIVATE_TARGETS", default: "false", meaning: "true lets webhook endpoints point at private, loopback and link-local addresses (a Mailroom inside a private network). Off, such URLs are refused when saved and at connect time." },
  webhookMaxInFlightPerEndpoint: { env: "WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT", default: "10", meaning: "Webhook requests a worker has in flight to one endpoint at once." },
  webhookConcurrency: { env: "WEBHOOK_CONCURRENCY", default: "200", meaning: "Webhook requests a worker has in flight over every endpoint at once." },
  webhookBatchSize: { env: "WEBHOOK_BATCH_SIZE", default: "100", meaning: "Webhook deliveries a worker claims at once." },
  webhookPollMs: { env: "WEBHOOK_POLL_MS", default: "100", meaning: "How often an idle worker looks for due webhook deliveries." },
  webhookLeaseSeconds: { env: "WEBHOOK_LEASE_SECONDS", default: "300", meaning: "A claimed webhook delivery whose worker has not finished by then is claimed again (renewed while the worker lives)." },
  inboundSmtpHost: { env: "INBOUND_SMTP_HOST", default: "127.0.0.1", meaning: "Interface the inbound SMTP server (role smtp) binds; 0.0.0.0 to receive replies and bounces from the internet." },
  inboundSmtpPort: { env: "INBOUND_SMTP_PORT", default: "2525", meaning: "Port of the inbound SMTP server; 25 in production (the return-path MX points at it)." },
  inboundMaxMessageBytes: { env: "INBOUND_MAX_MESSAGE_BYTES", default: String(10 * 1024 * 1024), meaning: "Largest inbound message (advertised with SIZE); larger is refused with 552 5.3.4." },
  inboundMaxConnections: { env: "INBOUND_MAX_CONNECTIONS", default: "100", meaning: "Simultaneous inbound SMTP connections; more are refused with 421." },
  inboundTimeoutMs: { env: "INBOUND_TIMEOUT_MS", default: "60000", meaning: "An inbound SMTP connection idle this long is closed." },
  inboundTlsKeyFile: { env: "INBOUND_TLS_KEY_FILE", default: "", meaning: "PEM private key for STARTTLS on the inbound SMTP server (with INBOUND_TLS_CERT_FILE); unset: no STARTTLS." },
  inboundTlsCertFile: { env: "INBOUND_TLS_CERT_FILE", default: "", meaning: "PEM certificate chain for STARTTLS on the inbound SMTP server." },
  inboundProxyProtocolFrom: { env: "INBOUND_PROXY_PROTOCOL_FROM", default: "", meaning: "Load balancers in front of the inbound SMTP server that open each connection with a PROXY protocol v1 header naming the sender's address (HAProxy's send-proxy, nginx's proxy_protocol), which SPF and DMARC are checked against: comma-separated IP addresses; empty for none. Their connections must carry the header; other peers' must not." },
  submissionSmtpHost: { env: "SUBMISSION_SMTP_HOST", default: "127.0.0.1", meaning: "Interface the SMTP submission server (role submission) binds; 0.0.0.0 to let applications elsewhere send through it." },
  submissionSmtpPort: { env: "SUBMISSION_SMTP_PORT", default: "2587", meaning: "Port of the SMTP submission server; 587 in production (465 with SUBMISSION_IMPLICIT_TLS)." },
  submissionMaxMessageBytes: { env: "SUBMISSION_MAX_MESSAGE_BYTES", default: String(10 * 1024 * 1024), meaning: "Largest submitted message (advertised with SIZE); larger is refused with 552 5.3.4." },
  submissionMaxConnections: { env: "SUBMISSION_MAX_CONNECTIONS", default: "100", meaning: "Simultaneous SMTP submission connections; more are refused with 421." },
  submissionTimeoutMs: { env: "SUBMISSION_TIMEOUT_MS", default: "60000", meaning: "An SMTP submission connection idle this long is closed." },
  submissionTlsKeyFile: { env: "SUBMISSION_TLS_KEY_FILE", default: "", meaning: "PEM private key for TLS on the submission server (with SUBMISSION_TLS_CERT_FILE); unset: no TLS, and the submission server listens on loopback only." },
  submissionTlsCertFile: { env: "SUBMISSION_TLS_CERT_FILE", default: "", meaning: "PEM certificate chain for TLS on the submission server." },
  submissionProxyProtocolFrom: { env: "SUBMISSION_PROXY_PROTOCOL_FROM", default: "", meaning: "Load balancers in front of the submission server that open each connection with a PROXY protocol v1 header naming the client's address, which API keys' allowed_ips and the encryption rule see: comma-separated IP addresses; empty for none. Their connections must carry the header; other peers' must not." },
  submissionImplicitTls: { env: "SUBMISSION_IMPLICIT_TLS", default: "false", meaning: "true: TLS from the first byte (port 465, RFC 8314) instead of STARTTLS; needs the TLS files." },
} satisfies Record<string, Setting>;

export class ConfigError extends Error {
  override name = "ConfigError";
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const read = (key: keyof typeof SETTINGS): string => {
    const value = env[SETTINGS[key].env];
    return value === undefined || value.trim() === "" ? SETTINGS[key].default : value;
  };
  const int = (key: keyof typeof SETTINGS, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const raw = read(key);
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${SETTINGS[key].env}=${JSON.stringify(raw)} must be an integer in [${min}, ${max}]`);
      return min;
    }
    return value;
  };
  /** Comma-separated IP addresses (not ranges: smtp-server compares each peer's address exactly). */
  const addresses = (key: keyof typeof SETTINGS): string[] => {
    const entries = read(key).split(",").map((entry) => entry.trim()).filter(Boolean);
    if (entries.some((entry) => isIP(entry) === 0)) problems.push(`${SETTINGS[key].env} must be empty or comma-separated IP addresses (no ranges)`);
    return entries;
  };
  /** An SMTP server's listener settings, read from its own `<server>…` settings. */
  const smtpListener = (server: "inbound" | "submission"): SmtpListenerConfig => ({
    host: read(`${server}SmtpHost`),
    port: int(`${server}SmtpPort`, 0, 65535),
    maxMessageBytes: int(`${server}MaxMessageBytes`, 1024),
    maxConnections: int(`${server}MaxConnections`, 1, 100_000),
    timeoutMs: int(`${server}TimeoutMs`, 1000, 3_600_000),
    tlsKeyFile: read(`${server}TlsKeyFile`) || null,
    tlsCertFile: read(`${server}TlsCertFile`) || null,
    proxyProtocolFrom: addresses(`${server}ProxyProtocolFrom`),
  });
  // Parsed here, so that a malformed URL is named at boot: parsed later, by a driver, it would
  // fail with an error that carries the whole URL, password included.
  const urlProblem = (key: keyof typeof SETTINGS, url: string): void => {
    const problem = credentialUrlProblem(url);
    if (problem !== null) problems.push(`${SETTINGS[key].env} ${problem}`);
  };

  const dataDir = read("dataDir");
  // The embedded database lives beside the generated secret, wherever DATA_DIR puts them.
  const databaseUrl = read("databaseUrl") || `sqlite:${dataDir.replace(/\/+$/, "")}/mailroom.db`;
  if (!/^(sqlite:|mysql:\/\/|mariadb:\/\/)/.test(databaseUrl)) problems.push(`${SETTINGS.databaseUrl.env} must start with sqlite: or mysql://`);
  else if (!databaseUrl.startsWith("sqlite:")) urlProblem("databaseUrl", databaseUrl);
  const secretKey = read("secretKey") || null;
  if (secretKey !== null && !/^[0-9a-fA-F]{64}$/.test(secretKey)) problems.push(`${SETTINGS.secretKey.env} must be 64 hex characters`);
  if (secretKey === null && !databaseUrl.startsWith("sqlite:")) problems.push(`${SETTINGS.secretKey.env} is required with MySQL so that every node shares it`);
  const secretKeyPrevious = read("secretKeyPrevious").split(",").map((key) => key.trim()).filter(Boolean);
  if (secretKeyPrevious.some((key) => !/^[0-9a-fA-F]{64}$/.test(key))) problems.push(`${SETTINGS.secretKeyPrevious.env} must be 64-hex-character keys, comma-separated`);
  if (secretKeyPrevious.length > 0 && secretKey === null) problems.push(`${SETTINGS.secretKeyPrevious.env} needs ${SETTINGS.secretKey.env}, the new key, set too`);
  if (secretKey !== null && secretKeyPrevious.some((key) => key.toLowerCase() === secretKey.toLowerCase())) problems.push(`${SETTINGS.secretKeyPrevious.env} must not list ${SETTINGS.secretKey.env} itself`);

  const config: Config = {
    host: read("host"),
    port: int("port", 0, 65535),
    metricsPort: read("metricsPort") === "" ? null : int("metricsPort", 0, 65535),
    databaseUrl,
    logLevel: read("logLevel"),
    bodyLimitBytes: int("bodyLimitBytes", 1024),
    requestTimeoutMs: int("requestTimeoutMs", 0, 3_600_000),
    rateLimit: { requests: int("rateLimitRequests", 1), windowSeconds: int("rateLimitWindowSeconds", 1, 86400) },
    idempotency: { retentionHours: int("idempotencyRetentionHours", 24), lockSeconds: int("idempotencyLockSeconds", 1, 3600) },
    requestLogRetentionDays: int("requestLogRetentionDays", 0, 90),
    worker: { batchSize: int("workerBatchSize", 1, 1000), pollMs: int("workerPollMs", 10, 60_000), leaseSeconds: int("jobLeaseSeconds", 5, 86400) },
    sandbox: { deferSeconds: int("sandboxDeferSeconds", 0, 86400) },
    // A second at least: under it every stop overruns (exit 1) before a single request can finish.
    shutdownGraceMs: int("shutdownGraceMs", 1000, 600_000),
    heapLimitMb: int("heapLimitMb", 0),
    secretKey,
    secretKeyPrevious,
    dataDir,
    publicUrl: read("publicUrl") === "" ? null : originOf(read("publicUrl")),
    signup: read("signup") === "open" ? "open" : "invitation",
    trackingBaseUrl: "",
    trustProxy: parseTrustProxy(read("trustProxy")) ?? false,
    delivery: {
      transport: read("deliveryTransport") === "relay" ? "relay" : "mx",
      relayUrl: read("smtpRelayUrl") || null,
      dnsServers: read("dnsServers").split(",").map((s) => s.trim()).filter(Boolean),
      dnsCacheSeconds: int("dnsCacheSeconds", 0, 86_400),
      mxPort: int("smtpMxPort", 1, 65535),
      hostname: read("sendingHostname") || hostname(),
      maxConnectionsPerDestination: int("smtpMaxConnectionsPerDestination", 1, 1000),
      concurrency: int("deliveryConcurrency", 1, 10_000),
      composeThreads: int("deliveryComposeThreads", 0, 64),
      maxBytesInHand: int("deliveryMaxBytesInHand", 1),
      connectTimeoutMs: int("smtpConnectTimeoutMs", 100, 600_000),
      commandTimeoutMs: int("smtpCommandTimeoutMs", 100, 600_000),
      connectionReuseTimeLimitSeconds: int("smtpConnectionReuseTimeLimitSeconds", 1, 86_400),
      maxMessagesPerConnection: int("smtpMaxMessagesPerConnection", 0, 1_000_000),
      // A minute at least: a destination that defers (greylisting, 421 too busy) is not hammered
      // for the message's whole lifetime, which 0 would do (RFC 5321 §4.5.4.1: at least 30 min is advised).
      retryMinSeconds: int("retryMinSeconds", 60, 86400),
      retryMaxSeconds: int("retryMaxSeconds", 60, 7 * 86400),
      lifetimeSeconds: int("deliveryLifetimeSeconds", 1, 30 * 86400),
    },
    domains: { recheckMinutes: int("domainRecheckMinutes", 0, 30 * 24 * 60), graceHours: int("domainGraceHours", 0, 90 * 24) },
    webhooks: {
      timeoutMs: int("webhookTimeoutMs", 100, 600_000),
      allowPrivateTargets: read("webhookAllowPrivateTargets") === "true",
      maxInFlightPerEndpoint: int("webhookMaxInFlightPerEndpoint", 1, 1000),
      concurrency: int("webhookConcurrency", 1, 10_000),
      batchSize: int("webhookBatchSize", 1, 1000),
      pollMs: int("webhookPollMs", 10, 60_000),
      leaseSeconds: int("webhookLeaseSeconds", 5, 86400),
    },
    inbound: smtpListener("inbound"),
    submission: { ...smtpListener("submission"), implicitTls: read("submissionImplicitTls") === "true" },
    attachments: {
      fetchTimeoutMs: int("attachmentFetchTimeoutMs", 100, 120_000),
      fetchMaxBytes: int("attachmentFetchMaxBytes", 1024, 100 * 1024 * 1024),
      fetchMaxBytesInHand: int("attachmentFetchMaxBytesInHand", 1024),
      allowPrivateTargets: read("attachmentFetchAllowPrivateTargets") === "true",
    },
    templates: {
      workers: int("templateRenderWorkers", 1, 64),
      timeoutMs: int("templateRenderTimeoutMs", 50, 60_000),
      renderLimitMs: int("templateRenderLimitMs", 10, 60_000),
      memoryLimit: int("templateMemoryLimit", 1000),
      parseLimit: int("templateParseLimit", 1000),
      maxOutputChars: int("templateMaxOutputChars", 1000),
      workerHeapMb: int("templateWorkerHeapMb", 16, 16_384),
      cacheMs: int("templateCacheMs", 0, 60_000),
    },
  };
  if (config.attachments.fetchMaxBytesInHand < config.attachments.fetchMaxBytes) problems.push(`${SETTINGS.attachmentFetchMaxBytesInHand.env} must be at least ${SETTINGS.attachmentFetchMaxBytes.env}: one request may hold that much`);
  if (!["true", "false"].includes(read("attachmentFetchAllowPrivateTargets"))) problems.push(`${SETTINGS.attachmentFetchAllowPrivateTargets.env} must be true or false`);
  if (!["true", "false"].includes(read("webhookAllowPrivateTargets"))) problems.push(`${SETTINGS.webhookAllowPrivateTargets.env} must be true or false`);
  if (!["mx", "relay"].includes(read("deliveryTransport"))) problems.push(`${SETTINGS.deliveryTransport.env} must be mx or relay`);
  if (config.delivery.transport === "relay" && config.delivery.relayUrl === null) problems.push(`${SETTINGS.smtpRelayUrl.env} is required with ${SETTINGS.deliveryTransport.env}=relay`);
  if (config.delivery.relayUrl !== null && !/^smtps?:\/\/[^/]+/.test(config.delivery.relayUrl)) problems.push(`${SETTINGS.smtpRelayUrl.env} must look like smtp://user:pass@host:587 or smtps://user:pass@host:465`);
  else if (config.delivery.relayUrl !== null) urlProblem("smtpRelayUrl", config.delivery.relayUrl);
  if (config.delivery.retryMaxSeconds < config.delivery.retryMinSeconds) problems.push(`${SETTINGS.retryMaxSeconds.env} must be at least ${SETTINGS.retryMinSeconds.env}`);
  for (const server of config.delivery.dnsServers) if (!/^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:]+\])(:\d{1,5})?$|^[0-9a-fA-F:]+$/.test(server)) problems.push(`${SETTINGS.dnsServers.env}: ${JSON.stringify(server)} is not an ip or ip:port`);
  for (const server of ["inbound", "submission"] as const) {
    if ((config[server].tlsKeyFile === null) !== (config[server].tlsCertFile === null)) problems.push(`${SETTINGS[`${server}TlsKeyFile`].env} and ${SETTINGS[`${server}TlsCertFile`].env} go together`);
  }
  if (!["true", "false"].includes(read("submissionImplicitTls"))) problems.push(`${SETTINGS.submissionImplicitTls.env} must be true or false`);
  else if (config.submission.implicitTls && config.submission.tlsKeyFile === null) problems.push(`${SETTINGS.submissionImplicitTls.env}=true needs ${SETTINGS.submissionTlsKeyFile.env} and ${SETTINGS.submissionTlsCertFile.env}`);
  if (!["invitation", "open"].includes(read("signup"))) problems.push(`${SETTINGS.signup.env} must be invitation or open`);
  if (read("publicUrl") !== "" && config.publicUrl === null) problems.push(`${SETTINGS.publicUrl.env} must be an origin such as https://mail.example.com (no path, query or credentials)`);
  config.trackingBaseUrl = read("trackingBaseUrl").replace(/\/+$/, "") || config.publicUrl || `http://localhost:${config.port}`;
  if (!/^https?:\/\/[^/?#@\s]+$/.test(config.trackingBaseUrl)) problems.push(`${SETTINGS.trackingBaseUrl.env} must be an origin such as https://t.mail.example.com`);
  if (parseTrustProxy(read("trustProxy")) === null) problems.push(`${SETTINGS.trustProxy.env} must be empty or comma-separated addresses and CIDRs`);
  if (!["fatal", "error", "warn", "info", "debug", "trace", "silent"].includes(config.logLevel)) problems.push(`${SETTINGS.logLevel.env} is not a pino level`);
  if (config.metricsPort !== null && config.metricsPort !== 0 && config.metricsPort === config.port) problems.push(`${SETTINGS.metricsPort.env} must differ from ${SETTINGS.port.env}: the API serves /metrics on its own port already`);
  if (problems.length > 0) throw new ConfigError(`invalid configuration: ${problems.join("; ")}`);
  return config;
}

/**
 * What a process that delivers mail should warn about its tracking base URL, or null: links to
 * this machine reach no reader, and over plain HTTP mailbox providers ignore one-click
 * unsubscribe (RFC 8058 §3.1; List-Unsubscribe-Post is then left out). Not refused: a development
 * setup runs on http://localhost, and mail from a domain with a tracking domain uses https anyway.
 */
export function trackingBaseWarning(config: Pick<Config, "trackingBaseUrl">): string | null {
  const url = new URL(config.trackingBaseUrl);
  const variable = `${SETTINGS.trackingBaseUrl.env} (else ${SETTINGS.publicUrl.env})`;
  if (isLoopback(url.hostname.replace(/^\[|\]$/g, ""))) {
    return `tracking links (open image, click redirects, unsubscribe) point at this machine, ${config.trackingBaseUrl}: recipients elsewhere cannot reach them. Set ${variable} to this server's public https origin before sending live mail with tracking (docs/tracking.md)`;
  }
  if (url.protocol !== "https:") {
    return `tracking links go over plain HTTP, ${config.trackingBaseUrl}: mailbox providers honour one-click unsubscribe only over https (RFC 8058), so List-Unsubscribe-Post is left out. Set ${variable} to an https origin (docs/tracking.md)`;
  }
  return null;
}

/**
 * What a process sharing a MySQL database should warn about SENDING_HOSTNAME, or null. Every
 * domain check writes this process's host name into the records it checks (the return path's MX
 * and SPF), so nodes whose names differ, as the machine's own names do, undo each other's records
 * and flap every domain between verified and failing (docs/scaling.md).
 */
export function sendingHostnameWarning(config: Pick<Config, "databaseUrl" | "delivery">, env: NodeJS.ProcessEnv = process.env): string | null {
  if (config.databaseUrl.startsWith("sqlite:") || (env[SETTINGS.sendingHostname.env] ?? "").trim() !== "") return null;
  return `${SETTINGS.sendingHostname.env} is not set, so this node uses its machine's host name, ${config.delivery.hostname}, in the DNS records of every domain it checks: nodes sharing the database must all set the same ${SETTINGS.sendingHostname.env} (docs/scaling.md)`;
}

/**
 * PUBLIC_URL as browsers write it in Origin (RFC 6454: lower-case host, no default port), which
 * the CSRF check compares byte for byte: https://Mail.Example.com:443 would otherwise refuse
 * every dashboard POST. Null unless it is an http(s) origin; trailing slashes are allowed.
 */
function originOf(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value.replace(/\/+$/, ""));
  } catch {
    return null;
  }
  const bare = url.pathname === "/" && url.search === "" && url.hash === "" && url.username === "" && url.password === "";
  return bare && (url.protocol === "https:" || url.protocol === "http:") ? url.origin : null;
}

/**
 * TRUST_PROXY as Fastify's trustProxy takes it; null when an entry is not an address or CIDR.
 * Addresses only, never `true` or a hop count: trusting whoever connects lets any client choose
 * the address it is throttled and recorded under.
 */
function parseTrustProxy(value: string): false | string[] | null {
  if (value.trim() === "") return false;
  const entries = value.split(",").map((entry) => entry.trim()).filter(Boolean);
  const valid = entries.every((entry) => {
    const [address, bits, ...rest] = entry.split("/");
    const family = isIP(address ?? "");
    return family !== 0 && rest.length === 0 && (bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128)));
  });
  return valid ? entries : null;
}
