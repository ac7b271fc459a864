import type { Services } from "../runtime.js";
import { auditChangedFields } from "./audit.js";
import type { HandlerMap } from "./handler-types.js";
import { pageOf, principalOf } from "./request-parts.js";

type WebhookOperation =
  | "createWebhook"
  | "listWebhooks"
  | "getWebhook"
  | "updateWebhook"
  | "deleteWebhook"
  | "getWebhookSecret"
  | "rotateWebhookSecret"
  | "testWebhook"
  | "redeliverWebhookEvent"
  | "replayWebhookEvents"
  | "listWebhookAttempts";

/** Webhook endpoints: thin translations to the webhooks service, like createDeliveryHandlers. */
export function createWebhookHandlers(services: Pick<Services, "webhooks">): Pick<HandlerMap, WebhookOperation> {
  const { webhooks } = services;
  return {
    createWebhook: async (req, reply) => {
      const webhook = await webhooks.create(principalOf(req), req.body);
      reply.code(201).header("location", `/v1/webhooks/${webhook.id}`);
      return webhook;
    },

    listWebhooks: async (req) => webhooks.list(principalOf(req), pageOf(req.query)),

    getWebhook: async (req) => webhooks.get(principalOf(req), req.params.webhook_id),

    updateWebhook: async (req) => {
      const { webhook, changed } = await webhooks.update(principalOf(req), req.params.webhook_id, req.body);
      auditChangedFields(req, changed);
      return webhook;
    },

    deleteWebhook: async (req) => webhooks.delete(principalOf(req), req.params.webhook_id),

    getWebhookSecret: async (req) => webhooks.getSecret(principalOf(req), req.params.webhook_id),

    rotateWebhookSecret: async (req) => webhooks.rotateSecret(principalOf(req), req.params.webhook_id, req.body),

    testWebhook: async (req, reply) => {
      reply.code(202);
      return webhooks.test(principalOf(req), req.params.webhook_id, req.body.type);
    },

    redeliverWebhookEvent: async (req, reply) => {
      reply.code(202);
      return webhooks.redeliver(principalOf(req), req.params.webhook_id, req.body.event_id);
    },

    replayWebhookEvents: async (req, reply) => {
      reply.code(202);
      return webhooks.replay(principalOf(req), req.params.webhook_id, req.body.since);
    },

    listWebhookAttempts: async (req) =>
      webhooks.listAttempts(principalOf(req), req.params.webhook_id, { eventId: req.query.event_id, status: req.query.status }, pageOf(req.query)),
  };
}
