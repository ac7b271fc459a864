import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Config } from "./config.js";
import { systemClock, type Clock } from "./domain/clock.js";
import { Verp } from "./domain/verp.js";
import { migrate, openDatabase, type Database } from "./db/connection.js";
import { createRepositories, type Repositories } from "./db/repositories/index.js";
import { MxResolver } from "./delivery/dns-resolver.js";
import { retryDelaySeconds } from "./delivery/retry-policy.js";
import { MxTransport } from "./delivery/transports/mx.js";
import { RelayTransport } from "./delivery/transports/relay.js";
import { simulateDelivery } from "./delivery/transports/sandbox.js";
import { DeliveryWorker } from "./delivery/worker.js";
import { composeMessage } from "./delivery/compose.js";
import { ComposeThreads } from "./delivery/compose-threads.js";
import { Metrics } from "./metrics.js";
import { ApiKeysService } from "./services/api-keys.js";
import { AuditLogService } from "./services/audit-log.js";
import { AuthService } from "./services/auth.js";
import { DomainsService } from "./services/domains.js";
import { ResealService } from "./services/reseal.js";
import { RetentionService } from "./services/retention.js";
import { secretKeys } from "./domain/secret-keys.js";
import { EngagementService } from "./services/engagement.js";
import { InboundService } from "./services/inbound.js";
import { InboundReceiver } from "./inbound/receiver.js";
import { startInboundServer, type InboundSmtpServer } from "./inbound/server.js";
import { startSubmissionServer, type SubmissionSmtpServer } from "./submission/server.js";
import { createResolver } from "./delivery/dns-resolver.js";
import { IdempotencyService } from "./services/idempotency.js";
import { MembersService } from "./services/members.js";
import { MessagePreviewService } from "./services/message-preview.js";
import { MessagesService } from "./services/messages.js";
import { RateLimiter } from "./services/rate-limiter.js";
import { SealedBox } from "./services/sealed-box.js";
import { SessionsService } from "./services/sessions.js";
import { SignInThrottle } from "./services/sign-in-throttle.js";
import { SuppressionsService } from "./services/suppressions.js";
import { TemplatesService } from "./services/templates.js";
import { RenderPool } from "./templates/render-pool.js";
import { UsageService } from "./services/usage.js";
import { MailMetricsService } from "./services/mail-metrics.js";
import { AttachmentUrls } from "./services/attachment-urls.js";
import { UrlFetcher } from "./attachments/url-fetcher.js";
import { RequestLogService } from "./services/request-logs.js";
import { WebhooksService } from "./services/webhooks.js";
import { WebhookDispatcher } from "./webhooks/dispatcher.js";
import { WebhookHttpClient } from "./webhooks/http-client.js";
import { TargetGuard } from "./webhooks/target-guard.js";
import { WorkspaceService } from "./services/workspace.js";
import { TrackingService } from "./services/tracking.js";
import { checkClockSkew, clockBoundsFor, measureClockSkew, type ClockBound, type ClockSkewCheck } from "./clock-skew.js";
import { TrackingLinks } from "./tracking/links.js";
import { TrackingTokens } from "./tracking/tokens.js";

export interface Services {
  /** Moves sealed values under the current SECRET_KEY (`mailroom-server reseal`). */
  reseal: ResealService;
  auth: AuthService;
  rateLimiter: RateLimiter;
  idempotency: IdempotencyService;
  apiKeys: ApiKeysService;
  auditLog: AuditLogService;
  requestLogs: RequestLogService;
  workspace: WorkspaceService;
  messages: MessagesService;
  /** The fetched attachment bytes the process holds (bytesInHand); the services that fetch run their calls in its forRequest. */
  attachmentUrls: AttachmentUrls;
  messagePreviews: MessagePreviewService;
  members: MembersService;
  sessions: SessionsService;
  domains: DomainsService;
  suppressions: SuppressionsService;
  usage: UsageService;
  mailMetrics: MailMetricsService;
  webhooks: WebhooksService;
  templates: TemplatesService;
  engagement: EngagementService;
  tracking: TrackingService;
  inbound: InboundService;
  retention: RetentionService;
}

export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Everything a process needs, wired once: used by main.ts, the tests and the benchmarks. */
export interface Runtime {
  config: Config;
  clock: Clock;
  db: Database;
  repositories: Repositories;
  services: Services;
  worker: DeliveryWorker;
  /** Sends webhook deliveries; started with the worker role, like `worker`. */
  dispatcher: WebhookDispatcher;
  metrics: Metrics;
  /** Signs and checks tracking links and unsubscribe addresses (the inbound server parses the latter). */
  tracking: TrackingTokens;
  /** This process's clock against the database server's, judged against the claims of its roles (default: a worker's leases; src/clock-skew.ts). */
  checkClock(bounds?: readonly ClockBound[]): Promise<ClockSkewCheck>;
  /** Starts the inbound SMTP server (role smtp) on config.inbound; close() stops it. */
  startSmtp(): Promise<InboundSmtpServer>;
  /** Starts the SMTP submission server (role submission) on config.submission; close() stops it. */
  startSubmission(): Promise<SubmissionSmtpServer>;
  /**
   * Stops taking work at every door at once (inbound SMTP, delivery worker, webhook dispatcher)
   * and resolves when what they had begun is finished; what they had not begun is given back.
   */
  stop(): Promise<void>;
  /** Writes what waits in memory: the group commit's accepted work, the request log's entries. */
  flush(): Promise<void>;
  /** stop(), then flush() and release everything, the database last. */
  close(): Promise<void>;
}

export async function createRuntime(config: Config, options: { clock?: Clock; logger?: Logger } = {}): Promise<Runtime> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? { info() {}, warn() {}, error() {} };
  const db = openDatabase(config.databaseUrl);
  await migrate(db);
  const repositories = createRepositories(db);
  const metrics = new Metrics();
  metrics.watchQueue("mailroom_queue", "Delivery jobs", () => repositories.jobs.stats(clock.now()));
  metrics.watchQueue("mailroom_webhook_queue", "Webhook deliveries", () => repositories.webhookDeliveries.stats(clock.now()));
  metrics.watchDomains(() => repositories.domains.countByStatus());
  metrics.watchClockSkew(() => measureClockSkew(clock, repositories.serverTime));

  const secret = secretKeys(secretKey(config), config.secretKeyPrevious);
  const dnsResolver = MxResolver.fromConfig(config.delivery);
  const dkimKeys = new SealedBox(secret, "dkim-keys");
  const idempotentResponses = new SealedBox(secret, "idempotent-responses");
  const domains = new DomainsService(repositories.domains, dkimKeys, dnsResolver, config.delivery.hostname, clock, new URL(config.trackingBaseUrl).hostname, {
    recheckMs: config.domains.recheckMinutes * 60_000,
    graceMs: config.domains.graceHours * 3_600_000,
  }, () => dispatcher.notify());
  const trackingTokens = new TrackingTokens(secret, clock);
  // One VERP/reply-address signer: the worker writes the addresses the inbound server reads.
  const verp = new Verp(secret);
  const usage = new UsageService(repositories.usage, repositories.workspaces, clock);
  const liveTransport = config.delivery.transport === "relay" ? new RelayTransport(config.delivery) : new MxTransport(config.delivery, { resolver: dnsResolver });
  const composeThreads = config.delivery.composeThreads > 0 ? new ComposeThreads(config.delivery.composeThreads) : null;
  const compose = composeThreads?.compose ?? composeMessage;
  const worker = new DeliveryWorker(
    {
      jobs: repositories.jobs,
      messages: repositories.messages,
      suppressions: repositories.suppressions,
      groupCommit: repositories.groupCommit,
      identity: (workspaceId, domain) => domains.sendingIdentity(workspaceId, domain),
      verp,
      tracking: new TrackingLinks(trackingTokens, config.trackingBaseUrl, verp),
      compose,
      routes: {
        sandbox: {
          // The simulator stands for the whole SMTP transaction: its hand-off begins at once.
          deliver: async (recipient, _envelope, _mime, message, begin) => {
            begin();
            return simulateDelivery(recipient, message);
          },
          retryDelayMs: () => config.sandbox.deferSeconds * 1000,
        },
        live: {
          // DELIVERY_CONCURRENCY is the transport's pool's to enforce (SmtpPool.dispatch()): only
          // it knows when a send stops waiting for its destination and its transaction begins.
          deliver: (_recipient, envelope, mime, _message, begin) => liveTransport.send(envelope, mime, { begin }),
          retryDelayMs: (attempt) => retryDelaySeconds(attempt, { minSeconds: config.delivery.retryMinSeconds, maxSeconds: config.delivery.retryMaxSeconds }) * 1000,
        },
      },
      clock,
      metrics,
      log: logger,
    },
    { batchSize: config.worker.batchSize, pollMs: config.worker.pollMs, leaseSeconds: config.worker.leaseSeconds, lifetimeMs: config.delivery.lifetimeSeconds * 1000, maxInFlight: Math.max(config.worker.batchSize, config.delivery.concurrency), maxBytesInHand: config.delivery.maxBytesInHand },
  );
  const webhookSecrets = new SealedBox(secret, "webhook-secrets");
  const targetGuard = new TargetGuard({ allowPrivate: config.webhooks.allowPrivateTargets, dnsServers: config.delivery.dnsServers });
  const webhookClient = new WebhookHttpClient(targetGuard, config.webhooks.timeoutMs);
  // Attachment URLs are the API caller's choice too: the same guard, under their own setting.
  const attachmentFetcher = new UrlFetcher(new TargetGuard({ allowPrivate: config.attachments.allowPrivateTargets, dnsServers: config.delivery.dnsServers }), { timeoutMs: config.attachments.fetchTimeoutMs });
  const attachmentUrls = new AttachmentUrls(attachmentFetcher, config.attachments.fetchMaxBytes, config.attachments.fetchMaxBytesInHand);
  const dispatcher = new WebhookDispatcher(
    {
      deliveries: repositories.webhookDeliveries,
      endpoints: repositories.webhookEndpoints,
      events: repositories.events,
      groupCommit: repositories.groupCommit,
      metrics,
      secrets: webhookSecrets,
      post: (url, headers, body) => webhookClient.post(url, headers, body),
      clock,
      wallClock: systemClock,
      log: logger,
    },
    {
      batchSize: config.webhooks.batchSize,
      pollMs: config.webhooks.pollMs,
      leaseMs: config.webhooks.leaseSeconds * 1000,
      concurrency: config.webhooks.concurrency,
      maxInFlightPerEndpoint: config.webhooks.maxInFlightPerEndpoint,
    },
  );
  const apiKeys = new ApiKeysService(repositories.apiKeys, clock);
  const { workers, timeoutMs, workerHeapMb, cacheMs, ...limits } = config.templates;
  const renderPool = new RenderPool({ size: workers, timeoutMs, workerHeapMb, limits: { parseLimit: limits.parseLimit, renderLimitMs: limits.renderLimitMs, memoryLimit: limits.memoryLimit, maxOutputChars: limits.maxOutputChars } });
  const templates = new TemplatesService(repositories.templates, renderPool, clock, { cacheMs });
  const members = new MembersService(repositories, clock);
  const engagement = new EngagementService(repositories.messages, repositories.suppressions, clock);
  const messages = new MessagesService(
    repositories.messages,
    repositories.events,
    repositories.workspaces,
    {
      domainStatus: async (workspaceId, domain) => {
        const identity = await domains.sendingIdentity(workspaceId, domain);
        return identity === null ? "unknown" : identity.sendsLive ? "verified" : "unverified";
      },
      domainTracking: async (workspaceId, domain) => {
        const identity = await domains.sendingIdentity(workspaceId, domain);
        return identity && { opens: identity.trackOpens, clicks: identity.trackClicks };
      },
      assertWithinQuota: (workspaceId, messages, now) => usage.assertWithinQuota(workspaceId, messages, now),
    },
    repositories.groupCommit,
    clock,
    () => worker.notify(),
    { idempotencyRetentionHours: config.idempotency.retentionHours, deliveryLifetimeMs: config.delivery.lifetimeSeconds * 1000 },
    templates,
    attachmentUrls,
  );
  const idempotency = new IdempotencyService(config.idempotency, repositories.idempotency, repositories.groupCommit, idempotentResponses, clock);
  const services: Services = {
    auth: new AuthService(repositories.apiKeys, repositories.sessions, clock),
    rateLimiter: new RateLimiter(config.rateLimit, repositories.rateLimits, repositories.apiKeys, repositories.groupCommit, clock),
    idempotency,
    apiKeys,
    auditLog: new AuditLogService(repositories.auditEvents, clock),
    requestLogs: new RequestLogService(repositories.requestLogs, clock, {
      retentionDays: config.requestLogRetentionDays,
      onLost: (err, entries) => logger.error({ err, entries }, "request log entries were lost"),
      countLost: (entries) => metrics.requestLogEntriesLost.inc(entries),
    }),
    workspace: new WorkspaceService(repositories.workspaces, apiKeys, idempotency, clock),
    messages,
    attachmentUrls,
    // Previews render on the compose threads too: a message near the body cap costs tens of
    // milliseconds of CPU, which must not stall the API's event loop.
    messagePreviews: new MessagePreviewService(messages, repositories.suppressions, (message, now) => compose({ message, now, signers: [] }), attachmentUrls),
    members,
    sessions: new SessionsService(repositories, members, new SignInThrottle(repositories.rateLimits, clock), config.signup, clock),
    domains,
    suppressions: new SuppressionsService(repositories.suppressions, clock),
    usage,
    mailMetrics: new MailMetricsService(repositories.mailMetrics, clock),
    templates,
    webhooks: new WebhooksService(repositories.webhookEndpoints, repositories.webhookDeliveries, repositories.events, webhookSecrets, targetGuard, clock, () => dispatcher.notify()),
    engagement,
    tracking: new TrackingService(trackingTokens, engagement, clock, logger, { recordWaitMs: 2000, baseHost: new URL(config.trackingBaseUrl).host }),
    reseal: new ResealService([
      { name: "dkim_keys", box: dkimKeys, store: repositories.domains },
      { name: "webhook_secrets", box: webhookSecrets, store: repositories.webhookEndpoints },
      { name: "idempotent_responses", box: idempotentResponses, store: repositories.idempotency },
    ]),
    retention: new RetentionService(repositories.workspaces, repositories.messages, repositories.inbound, clock),
    inbound: new InboundService({
      inbound: repositories.inbound,
      engagement,
      verp,
      parseUnsubscribeAddress: (address) => trackingTokens.parseUnsubscribeAddress(address),
      clock,
    }),
  };
  const smtpServers: Array<InboundSmtpServer | SubmissionSmtpServer> = [];
  let stopped: Promise<void> | null = null;
  const stop = () => (stopped ??= Promise.all([...smtpServers.map((server) => server.close()), worker.stop(), dispatcher.stop()]).then(() => undefined));
  const flush = async () => {
    await repositories.groupCommit.drain();
    await services.requestLogs.flush();
  };
  return {
    config,
    clock,
    db,
    repositories,
    services,
    worker,
    dispatcher,
    metrics,
    tracking: trackingTokens,
    checkClock: (bounds = clockBoundsFor(config, new Set(["worker"]))) => checkClockSkew(clock, repositories.serverTime, bounds),
    async startSmtp() {
      const receiver = new InboundReceiver(services.inbound, createResolver(config.delivery.dnsServers), config.delivery.hostname, clock, logger);
      // Half the shutdown grace at most: the rest is for what follows (flush, close the database).
      const closeTimeoutMs = Math.min(config.inbound.timeoutMs, config.shutdownGraceMs / 2);
      const server = await startInboundServer({ config: config.inbound, hostname: config.delivery.hostname, service: services.inbound, receiver, log: logger, metrics, closeTimeoutMs });
      smtpServers.push(server);
      return server;
    },
    async startSubmission() {
      const closeTimeoutMs = Math.min(config.submission.timeoutMs, config.shutdownGraceMs / 2);
      const { auth, rateLimiter, messages } = services;
      const server = await startSubmissionServer({ config: config.submission, hostname: config.delivery.hostname, auth, rateLimiter, messages, log: logger, metrics, closeTimeoutMs });
      smtpServers.push(server);
      return server;
    },
    stop,
    flush,
    async close() {
      await stop();
      webhookClient.close();
      attachmentFetcher.close();
      await liveTransport.close();
      await renderPool.close();
      await composeThreads?.close();
      await flush();
      await db.close();
    },
  };
}

/** SECRET_KEY, or for the embedded database a key generated once into DATA_DIR. */
function secretKey(config: Config): string {
  if (config.secretKey) return config.secretKey;
  const path = join(config.dataDir, "secret.key");
  if (!existsSync(path)) {
    mkdirSync(config.dataDir, { recursive: true });
    writeFileSync(path, randomBytes(32).toString("hex"), { mode: 0o600, flag: "wx" });
  }
  return readFileSync(path, "utf8").trim();
}
