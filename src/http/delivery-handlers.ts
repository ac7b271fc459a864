import type { Services } from "../runtime.js";
import { auditChangedFields } from "./audit.js";
import { itemAnswer, type BatchItemValidator } from "./batch.js";
import type { HandlerMap } from "./handler-types.js";
import { pageOf, principalOf } from "./request-parts.js";

type DeliveryOperation =
  | "createDomain"
  | "listDomains"
  | "getDomain"
  | "updateDomain"
  | "deleteDomain"
  | "verifyDomain"
  | "rotateDomainDkim"
  | "listSuppressions"
  | "createSuppression"
  | "createSuppressionBatch"
  | "getSuppression"
  | "deleteSuppression"
  | "getUsage"
  | "getMetrics";

/** Domains, suppressions, usage and metrics: thin translations to their services, like createHandlers. */
export function createDeliveryHandlers(services: Pick<Services, "domains" | "suppressions" | "usage" | "mailMetrics">, validateSuppression: BatchItemValidator): Pick<HandlerMap, DeliveryOperation> {
  return {
    createDomain: async (req, reply) => {
      const domain = await services.domains.create(principalOf(req), req.body);
      reply.code(201).header("location", `/v1/domains/${domain.id}`);
      return domain;
    },

    listDomains: async (req) => services.domains.list(principalOf(req), { status: req.query.status }, pageOf(req.query)),

    getDomain: async (req) => services.domains.get(principalOf(req), req.params.domain_id),

    updateDomain: async (req) => {
      const { domain, changed } = await services.domains.update(principalOf(req), req.params.domain_id, req.body);
      auditChangedFields(req, changed);
      return domain;
    },

    deleteDomain: async (req) => services.domains.delete(principalOf(req), req.params.domain_id),

    verifyDomain: async (req) => services.domains.verify(principalOf(req), req.params.domain_id),

    rotateDomainDkim: async (req) => services.domains.rotateDkim(principalOf(req), req.params.domain_id),

    listSuppressions: async (req) => services.suppressions.list(principalOf(req), { reason: req.query.reason, email: req.query.email }, pageOf(req.query)),

    createSuppression: async (req, reply) => {
      const { suppression, created } = await services.suppressions.create(principalOf(req), req.body);
      if (created) reply.code(201).header("location", `/v1/suppressions/${suppression.id}`);
      return suppression;
    },

    createSuppressionBatch: async (req) => {
      const inputs = req.body.suppressions.map((item) => validateSuppression(item) ?? item);
      const outcomes = await services.suppressions.createBatch(principalOf(req), inputs);
      return {
        object: "batch" as const,
        data: outcomes.map(({ index, suppression, created, error }) => ({ index, suppression, ...itemAnswer<200 | 201 | 422>(req, error, created ? 201 : 200) })),
      };
    },

    getSuppression: async (req) => services.suppressions.get(principalOf(req), req.params.suppression_id),

    deleteSuppression: async (req) => services.suppressions.delete(principalOf(req), req.params.suppression_id),

    getUsage: async (req) => services.usage.get(principalOf(req), req.query.from, req.query.to),

    getMetrics: async (req) => services.mailMetrics.get(principalOf(req), req.query),
  };
}
