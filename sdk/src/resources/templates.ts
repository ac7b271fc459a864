import type { APIPromise } from "../api-promise.js";
import type { RequestOptions } from "../client.js";
import type { PagePromise } from "../pagination.js";
import type { DeletedObject, QueryParams, RenderedTemplate, RequestBody, Template, TemplateVersion } from "../types.js";
import { Resource } from "./resource.js";

/**
 * Reusable messages written in Liquid (tag `Templates`), addressed by slug or `tpl_` id, and
 * versioned: editing makes a draft, publishing makes it the version that sends. Templates belong
 * to the workspace and serve both environments. Send one with
 * `mr.messages.create({ to, template: { slug: "welcome", variables } })`.
 */
export class Templates extends Resource {
  /** `createTemplate`: version 1, a draft unless `publish: true`. A Liquid syntax error is a 422 naming the field and line. */
  create(params: RequestBody<"createTemplate">, options?: RequestOptions): APIPromise<Template> {
    return this.client.unwrap(this.client.http.POST("/v1/templates", { body: params, ...this.client.init(options, "POST") }));
  }

  /** `listTemplates`: newest first, each with its latest version's content. */
  list(query: QueryParams<"listTemplates"> = {}, options?: RequestOptions): PagePromise<Template> {
    return this.client.paginate(query, (query) => this.client.http.GET("/v1/templates", { params: { query }, ...this.client.init(options) }));
  }

  /** `getTemplate`: by slug or id, with its latest version (the draft, when there is one). */
  get(template: string, options?: RequestOptions): APIPromise<Template> {
    return this.client.unwrap(this.client.http.GET("/v1/templates/{template}", { params: { path: { template } }, ...this.client.init(options) }));
  }

  /** `updateTemplate`: change the draft (made from the published version if there is none); nothing sends differently until `publish`. */
  update(template: string, params: RequestBody<"updateTemplate">, options?: RequestOptions): APIPromise<Template> {
    return this.client.unwrap(
      this.client.http.PATCH("/v1/templates/{template}", { params: { path: { template } }, body: params, ...this.client.init(options, "PATCH") }),
    );
  }

  /** `publishTemplate`: the draft becomes the version that sends; `{ version }` re-publishes an earlier one (a rollback). */
  publish(template: string, params: RequestBody<"publishTemplate"> = {}, options?: RequestOptions): APIPromise<Template> {
    return this.client.unwrap(
      this.client.http.POST("/v1/templates/{template}/publish", { params: { path: { template } }, body: params, ...this.client.init(options, "POST") }),
    );
  }

  /** `listTemplateVersions`: every version, newest first: the draft, the published one, the archived ones. */
  listVersions(template: string, query: QueryParams<"listTemplateVersions"> = {}, options?: RequestOptions): PagePromise<TemplateVersion> {
    return this.client.paginate(query, (query) =>
      this.client.http.GET("/v1/templates/{template}/versions", { params: { path: { template }, query }, ...this.client.init(options) }),
    );
  }

  /** `getTemplateVersion`: one version, exactly as it sends when addressed as `slug@version`. */
  getVersion(template: string, version: number, options?: RequestOptions): APIPromise<TemplateVersion> {
    return this.client.unwrap(
      this.client.http.GET("/v1/templates/{template}/versions/{version}", { params: { path: { template, version } }, ...this.client.init(options) }),
    );
  }

  /** `deleteTemplate`: the template and every version; 409 `template_in_use` while a scheduled message still needs it. */
  delete(template: string, options?: RequestOptions): APIPromise<DeletedObject> {
    // By slug, a repeat after an unknown outcome could delete a newer template of that slug, and
    // the id to answer is unknown: only a delete by id (tpl_…, never a slug) is sent again.
    const byId = template.startsWith("tpl_");
    const init = byId ? this.client.initRepeatedDelete(options) : this.client.init(options, "DELETE");
    const call = this.client.http.DELETE("/v1/templates/{template}", { params: { path: { template } }, ...init });
    return byId ? this.client.unwrapDeleted(call, { id: template, object: "template", deleted: true }) : this.client.unwrap(call);
  }

  /**
   * `renderTemplate`: the subject, html and text a send would produce, without sending. Variables
   * are checked against the version's declarations first (one 422 lists every problem).
   */
  render(template: string, params: RequestBody<"renderTemplate"> = {}, options?: RequestOptions): APIPromise<RenderedTemplate> {
    return this.client.unwrap(
      this.client.http.POST("/v1/templates/{template}/render", { params: { path: { template } }, body: params, ...this.client.init(options, "POST") }),
    );
  }
}
