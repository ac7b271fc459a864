export { Mailroom, newIdempotencyKey, isSendableApiKey, readEnvVar, DEFAULT_BASE_URL, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS } from "./client.js";
export type { ClientOptions, RequestOptions } from "./client.js";
export { USER_AGENT, VERSION } from "./version.js";
export { APIPromise } from "./api-promise.js";
export type { WithResponse } from "./api-promise.js";
export {
  MailroomError,
  MailroomConfigurationError,
  APIError,
  BadRequestError,
  AuthenticationError,
  PermissionDeniedError,
  NotFoundError,
  ConflictError,
  GoneError,
  UnprocessableEntityError,
  RateLimitError,
  InternalServerError,
  RedirectError,
  APIConnectionError,
  APITimeoutError,
  retryAfterMs,
} from "./errors.js";
export type { Problem, FieldError } from "./errors.js";
export { Page, PagePromise } from "./pagination.js";
export type { PageBody } from "./pagination.js";
export { WebhookVerificationError } from "./webhooks.js";
export { MESSAGE_BATCH_LIMIT, SUPPRESSION_BATCH_LIMIT } from "./limits.js";
export { readSuppressionList, SuppressionListError } from "./suppression-list.js";
export type { SuppressionListFormat, SuppressionListRow, ReadSuppressionListOptions, GivenSuppressionReason } from "./suppression-list.js";
export type { WebhookHeaders, VerifyOptions, SignOptions } from "./webhooks.js";
export type * from "./types.js";
export { Messages } from "./resources/messages.js";
export { Events } from "./resources/events.js";
export { AuditEvents } from "./resources/audit-events.js";
export { RequestLogs } from "./resources/request-logs.js";
export { ApiKeys } from "./resources/api-keys.js";
export { WorkspaceResource } from "./resources/workspace.js";
export { Domains } from "./resources/domains.js";
export { Suppressions } from "./resources/suppressions.js";
export { Templates } from "./resources/templates.js";
export { Webhooks } from "./resources/webhooks.js";
export { UsageResource } from "./resources/usage.js";
export { MetricsResource } from "./resources/metrics.js";
export { Inbound } from "./resources/inbound.js";
export { System } from "./resources/system.js";
export { Accounts } from "./resources/accounts.js";

