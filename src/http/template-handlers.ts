import type { Services } from "../runtime.js";
import { auditChangedFields, auditNothingChanged } from "./audit.js";
import type { HandlerMap } from "./handler-types.js";
import { pageOf, principalOf } from "./request-parts.js";

type TemplateOperation =
  | "createTemplate"
  | "listTemplates"
  | "getTemplate"
  | "updateTemplate"
  | "deleteTemplate"
  | "publishTemplate"
  | "listTemplateVersions"
  | "getTemplateVersion"
  | "renderTemplate";

/** Templates: thin translations to their service, like createHandlers. */
export function createTemplateHandlers(services: Pick<Services, "templates">): Pick<HandlerMap, TemplateOperation> {
  return {
    createTemplate: async (req, reply) => {
      const template = await services.templates.create(principalOf(req), req.body);
      reply.code(201).header("location", `/v1/templates/${template.slug}`);
      return template;
    },

    listTemplates: async (req) => services.templates.list(principalOf(req), pageOf(req.query), { kind: req.query.kind, layout: req.query.layout }),

    getTemplate: async (req) => services.templates.get(principalOf(req), req.params.template),

    updateTemplate: async (req) => {
      const { template, changed } = await services.templates.update(principalOf(req), req.params.template, req.body);
      auditChangedFields(req, changed);
      return template;
    },

    deleteTemplate: async (req) => services.templates.delete(principalOf(req), req.params.template),

    publishTemplate: async (req) => {
      const { template, changed } = await services.templates.publish(principalOf(req), req.params.template, req.body ?? {});
      if (!changed) auditNothingChanged(req);
      return template;
    },

    listTemplateVersions: async (req) => services.templates.listVersions(principalOf(req), req.params.template, pageOf(req.query)),

    getTemplateVersion: async (req) => services.templates.getVersion(principalOf(req), req.params.template, req.params.version),

    renderTemplate: async (req) => services.templates.render(principalOf(req), req.params.template, req.body ?? {}),
  };
}
