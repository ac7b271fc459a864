import { parseInstant } from "../domain/clock.js";
import { UnavailableError, ValidationError } from "../domain/errors.js";
import type { Services } from "../runtime.js";
import { auditChangedFields, auditNothingChanged } from "./audit.js";
import { itemAnswer, type BatchItemValidators } from "./batch.js";
import { createDeliveryHandlers } from "./delivery-handlers.js";
import type { HandlerMap } from "./handler-types.js";
import { createInboundHandlers } from "./inbound-handlers.js";
import { createTemplateHandlers } from "./template-handlers.js";
import { publicOrigin } from "./origin.js";
import { isReady, NOT_READY_DETAIL, type Lifecycle } from "./readiness.js";
import { pageOf, principalOf, statusRange } from "./request-parts.js";
import { createWebhookHandlers } from "./webhook-handlers.js";

/**
 * A date-time query parameter as an instant. The contract's format check admits one form that
 * names no instant (hour 24); it is refused at its parameter rather than reaching SQL as NaN.
 */
const instant = (value: string | undefined, parameter: string): number | undefined => {
  if (value === undefined) return undefined;
  const at = parseInstant(value);
  if (Number.isNaN(at)) throw new ValidationError([{ location: "query", pointer: `/${parameter}`, message: "must be an RFC 3339 date-time" }]);
  return at;
};

/**
 * A list's created_after (inclusive) .. created_before (exclusive) window as instants. A window
 * that holds no instant is a mistake (the two swapped), refused rather than answered with an
 * empty page that reads as "nothing happened".
 */
const createdWindow = (query: { created_after?: string; created_before?: string }): { createdAfter?: number; createdBefore?: number } => {
  const createdAfter = instant(query.created_after, "created_after");
  const createdBefore = instant(query.created_before, "created_before");
  if (createdAfter !== undefined && createdBefore !== undefined && createdAfter >= createdBefore) {
    throw new ValidationError([{ location: "query", pointer: "/created_after", message: "must be before created_before (created_after is inclusive, created_before exclusive)" }]);
  }
  return { createdAfter, createdBefore };
};

/**
 * One method per operationId of openapi/v1.yaml. Handlers only translate between HTTP and the
 * services: no SQL, no business rules.
 */
export function createHandlers(
  services: Services,
  lifecycle: Lifecycle,
  ping: () => Promise<void>,
  site: { publicUrl: string | null },
  validateBatchItems: BatchItemValidators,
): HandlerMap {
  return {
    getHealth: async () => ({ status: "ok" }),

    getReadiness: async () => {
      if (!(await isReady(lifecycle, ping))) throw new UnavailableError(NOT_READY_DETAIL);
      return { status: "ready" };
    },

    createMessage: async (req, reply) => {
      const message = await services.messages.create(principalOf(req), req.body, req.idempotency?.key ?? null, { resumed: req.idempotency?.resumed });
      reply.code(202).header("location", `/v1/messages/${message.id}`);
      return message;
    },

    createMessageBatch: async (req) => {
      const inputs = req.body.messages.map((item) => validateBatchItems.messages(item) ?? item);
      const outcomes = await services.messages.createBatch(principalOf(req), inputs, req.idempotency?.key ?? null, { strict: req.body.validation === "strict", resumed: req.idempotency?.resumed });
      return {
        object: "batch" as const,
        data: outcomes.map(({ index, message, error }) => ({ index, message, ...itemAnswer<202 | 403 | 422 | 429 | 500 | 503>(req, error, 202) })),
      };
    },

    previewMessage: async (req) => services.messagePreviews.preview(principalOf(req), req.body),

    getMessage: async (req) => services.messages.get(principalOf(req), req.params.message_id),

    listMessages: async (req) =>
      services.messages.list(
        principalOf(req),
        { status: req.query.status, recipient: req.query.recipient, tag: req.query.tag, template: req.query.template, ...createdWindow(req.query) },
        pageOf(req.query),
      ),

    cancelMessage: async (req) => services.messages.cancel(principalOf(req), req.params.message_id),

    rescheduleMessage: async (req) => services.messages.reschedule(principalOf(req), req.params.message_id, req.body),

    listMessageEvents: async (req) => services.messages.listEvents(principalOf(req), req.params.message_id, pageOf(req.query)),

    listEvents: async (req) =>
      services.messages.listAllEvents(principalOf(req), { type: req.query.type, recipient: req.query.recipient, ...createdWindow(req.query) }, pageOf(req.query)),

    listAuditEvents: async (req) =>
      services.auditLog.list(
        principalOf(req),
        { operation: req.query.operation, actorId: req.query.actor_id, targetId: req.query.target_id, ...createdWindow(req.query) },
        pageOf(req.query),
      ),

    listRequestLogs: async (req) =>
      services.requestLogs.list(
        principalOf(req),
        {
          status: statusRange(req.query.status),
          method: req.query.method,
          operation: req.query.operation,
          credentialId: req.query.credential_id,
          ...createdWindow(req.query),
        },
        pageOf(req.query),
      ),

    getRequestLog: async (req) => services.requestLogs.get(principalOf(req), req.params.request_id),

    createApiKey: async (req, reply) => {
      const key = await services.apiKeys.create(principalOf(req), req.body);
      reply.code(201).header("location", `/v1/api-keys/${key.id}`);
      return key;
    },

    listApiKeys: async (req) => services.apiKeys.list(principalOf(req), pageOf(req.query)),

    getApiKey: async (req) => services.apiKeys.get(principalOf(req), req.params.api_key_id),

    updateApiKey: async (req) => {
      const { key, changed } = await services.apiKeys.update(principalOf(req), req.params.api_key_id, req.body);
      auditChangedFields(req, changed);
      return key;
    },

    revokeApiKey: async (req) => {
      const { key, revoked } = await services.apiKeys.revoke(principalOf(req), req.params.api_key_id);
      if (!revoked) auditNothingChanged(req);
      return key;
    },

    rotateApiKey: async (req) => services.apiKeys.rotate(principalOf(req), req.params.api_key_id, req.body?.overlap_seconds),

    getWorkspace: async (req) => services.workspace.get(principalOf(req)),

    updateWorkspace: async (req) => {
      const { workspace, changed } = await services.workspace.update(principalOf(req), req.body);
      auditChangedFields(req, changed);
      return workspace;
    },

    getAccount: async (req) => services.members.getAccount(principalOf(req)),

    updateAccount: async (req) => services.members.updateAccount(principalOf(req), req.body),

    createWorkspace: async (req, reply) => {
      const workspace = await services.members.createWorkspace(principalOf(req), req.body);
      reply.code(201);
      return workspace;
    },

    listMembers: async (req) => services.members.listMembers(principalOf(req), { role: req.query.role }, pageOf(req.query)),

    updateMember: async (req) => {
      const { member, changed } = await services.members.updateMember(principalOf(req), req.params.user_id, req.body);
      auditChangedFields(req, changed);
      return member;
    },

    removeMember: async (req) => services.members.removeMember(principalOf(req), req.params.user_id),

    leaveWorkspace: async (req) => services.members.leaveWorkspace(principalOf(req)),

    createInvitation: async (req, reply) => {
      const invitation = await services.members.createInvitation(principalOf(req), req.body, publicOrigin(req, site.publicUrl));
      reply.code(201);
      return invitation;
    },

    listInvitations: async (req) => services.members.listInvitations(principalOf(req), pageOf(req.query)),

    revokeInvitation: async (req) => services.members.revokeInvitation(principalOf(req), req.params.invitation_id),

    ...createDeliveryHandlers(services, validateBatchItems.suppressions),

    ...createTemplateHandlers(services),
    ...createWebhookHandlers(services),
    ...createInboundHandlers(services),
  };
}
