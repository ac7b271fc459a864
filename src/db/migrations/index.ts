import type { Knex } from "knex";
import * as initial from "./001-initial.js";
import * as accounts from "./002-accounts.js";
import * as delivery from "./003-delivery.js";
import * as templates from "./004-templates.js";
import * as webhooks from "./005-webhooks.js";
import * as engagement from "./006-engagement.js";
import * as inbound from "./007-inbound.js";
import * as jobSizes from "./008-job-sizes.js";
import * as domainChecks from "./009-domain-checks.js";
import * as contentRetention from "./010-content-retention.js";
import * as replyRetention from "./011-reply-retention.js";
import * as keyRestrictions from "./012-key-restrictions.js";
import * as auditEvents from "./013-audit-events.js";
import * as automatedEvents from "./014-automated-events.js";
import * as requestLogs from "./015-request-logs.js";
import * as keyLastUsedIp from "./016-key-last-used-ip.js";
import * as templateLayouts from "./017-template-layouts.js";
import * as eventBounceTypes from "./018-event-bounce-types.js";
import * as webhookEndpointPurges from "./019-webhook-endpoint-purges.js";
import * as firstUserClaims from "./020-first-user-claims.js";
import * as batchedIdempotencyKeys from "./021-batched-idempotency-keys.js";
import * as domainVersions from "./022-domain-versions.js";
import * as keyCreators from "./023-key-creators.js";
import * as parkedWebhookDeliveries from "./024-parked-webhook-deliveries.js";
import * as inboundReplyDigests from "./025-inbound-reply-digests.js";
import * as templateVariablesSize from "./026-template-variables-size.js";
import * as pendingInvitations from "./028-pending-invitations.js";
import * as templateRevisions from "./030-template-revisions.js";
import * as idempotencyClaimants from "./031-idempotency-claimants.js";
import * as idempotencyAnswerRetention from "./032-idempotency-answer-retention.js";

/**
 * Migrations are modules imported here, not files discovered at run time, so they run the same
 * under tsx, vitest and a bundled build. Append new ones; never edit one that has shipped.
 */
const MIGRATIONS: Record<string, Knex.Migration> = {
  "001-initial": initial,
  "002-accounts": accounts,
  "003-delivery": delivery,
  "004-templates": templates,
  "005-webhooks": webhooks,
  "006-engagement": engagement,
  "007-inbound": inbound,
  "008-job-sizes": jobSizes,
  "009-domain-checks": domainChecks,
  "010-content-retention": contentRetention,
  "011-reply-retention": replyRetention,
  "012-key-restrictions": keyRestrictions,
  "013-audit-events": auditEvents,
  "014-automated-events": automatedEvents,
  "015-request-logs": requestLogs,
  "016-key-last-used-ip": keyLastUsedIp,
  "017-template-layouts": templateLayouts,
  "018-event-bounce-types": eventBounceTypes,
  "019-webhook-endpoint-purges": webhookEndpointPurges,
  "020-first-user-claims": firstUserClaims,
  "021-batched-idempotency-keys": batchedIdempotencyKeys,
  "022-domain-versions": domainVersions,
  "023-key-creators": keyCreators,
  "024-parked-webhook-deliveries": parkedWebhookDeliveries,
  "025-inbound-reply-digests": inboundReplyDigests,
  "026-template-variables-size": templateVariablesSize,
  "028-pending-invitations": pendingInvitations,
  "030-template-revisions": templateRevisions,
  "031-idempotency-claimants": idempotencyClaimants,
  "032-idempotency-answer-retention": idempotencyAnswerRetention,
};

export const migrationSource: Knex.MigrationSource<string> = {
  // By number, whatever order the entries above were added in.
  getMigrations: async () => Object.keys(MIGRATIONS).sort(),
  getMigrationName: (name) => name,
  getMigration: async (name) => MIGRATIONS[name]!,
};
