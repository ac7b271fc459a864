import type { Knex } from "knex";
import type { Database } from "../connection.js";
import { GroupCommit } from "../group-commit.js";
import { ApiKeysRepository } from "./api-keys.js";
import { AuditEventsRepository } from "./audit-events.js";
import { DomainsRepository } from "./domains.js";
import { EventsRepository } from "./events.js";
import { IdempotencyRepository } from "./idempotency.js";
import { InboundRepository } from "./inbound.js";
import { InvitationsRepository } from "./invitations.js";
import { JobsRepository } from "./jobs.js";
import { MailMetricsRepository } from "./mail-metrics.js";
import { MembersRepository } from "./members.js";
import { MessagesRepository } from "./messages.js";
import { RateLimitsRepository } from "./rate-limits.js";
import { RequestLogsRepository } from "./request-logs.js";
import { SessionsRepository } from "./sessions.js";
import { SuppressionsRepository } from "./suppressions.js";
import { TemplatesRepository } from "./templates.js";
import { UsageRepository } from "./usage.js";
import { UsersRepository } from "./users.js";
import { WebhookDeliveriesRepository } from "./webhook-deliveries.js";
import { WebhookEndpointsRepository } from "./webhook-endpoints.js";
import { WorkspacesRepository } from "./workspaces.js";

/** A transaction handle services pass back to repositories; only repositories use it. */
export type Transaction = Knex.Transaction;

export interface Repositories {
  workspaces: WorkspacesRepository;
  apiKeys: ApiKeysRepository;
  auditEvents: AuditEventsRepository;
  requestLogs: RequestLogsRepository;
  messages: MessagesRepository;
  events: EventsRepository;
  mailMetrics: MailMetricsRepository;
  jobs: JobsRepository;
  idempotency: IdempotencyRepository;
  rateLimits: RateLimitsRepository;
  users: UsersRepository;
  members: MembersRepository;
  sessions: SessionsRepository;
  invitations: InvitationsRepository;
  domains: DomainsRepository;
  suppressions: SuppressionsRepository;
  usage: UsageRepository;
  templates: TemplatesRepository;
  webhookEndpoints: WebhookEndpointsRepository;
  webhookDeliveries: WebhookDeliveriesRepository;
  inbound: InboundRepository;
  groupCommit: GroupCommit;
  /** Runs work in one transaction (services that write several repositories at once). */
  transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T>;
  /** Whether the database answers (readiness). */
  ping(): Promise<void>;
  /** The database server's clock (src/clock-skew.ts); null on SQLite, which has none of its own. */
  serverTime(): Promise<number | null>;
}

export function createRepositories(db: Database): Repositories {
  const suppressions = new SuppressionsRepository(db.knex);
  const usage = new UsageRepository(db.knex);
  const webhookDeliveries = new WebhookDeliveriesRepository(db.knex, db.dialect);
  const inbound = new InboundRepository(db.knex);
  return {
    workspaces: new WorkspacesRepository(db.knex),
    apiKeys: new ApiKeysRepository(db.knex),
    auditEvents: new AuditEventsRepository(db.knex),
    requestLogs: new RequestLogsRepository(db.knex),
    messages: new MessagesRepository(db.knex, suppressions, usage, webhookDeliveries, inbound),
    events: new EventsRepository(db.knex),
    mailMetrics: new MailMetricsRepository(db.knex, db.reports),
    jobs: new JobsRepository(db.knex, db.dialect),
    idempotency: new IdempotencyRepository(db.knex),
    rateLimits: new RateLimitsRepository(db.knex, db.dialect),
    users: new UsersRepository(db.knex),
    members: new MembersRepository(db.knex),
    sessions: new SessionsRepository(db.knex),
    invitations: new InvitationsRepository(db.knex),
    domains: new DomainsRepository(db.knex, webhookDeliveries),
    suppressions,
    usage,
    templates: new TemplatesRepository(db.knex),
    webhookEndpoints: new WebhookEndpointsRepository(db.knex),
    webhookDeliveries,
    inbound,
    groupCommit: new GroupCommit(db.knex, db.dialect),
    transaction: (work) => db.knex.transaction(work),
    ping: async () => {
      await db.knex.raw("select 1");
    },
    serverTime: () => db.dialect.serverTime(db.knex),
  };
}
