import type { APIPromise } from "../api-promise.js";
import type { RequestOptions } from "../client.js";
import type { PagePromise } from "../pagination.js";
import type { DeletedObject, Domain, QueryParams, RequestBody } from "../types.js";
import { Resource } from "./resource.js";

/**
 * The domains the workspace sends from (tag `Domains`): their DKIM keys, the DNS records to
 * publish, and their verification. Domains belong to the workspace and serve both environments.
 */
export class Domains extends Resource {
  /** `createDomain`: add a domain; the answer lists the DNS records to publish, then `verify`. */
  create(params: RequestBody<"createDomain">, options?: RequestOptions): APIPromise<Domain> {
    return this.client.unwrap(this.client.http.POST("/v1/domains", { body: params, ...this.client.init(options, "POST") }));
  }

  /** `listDomains`: the workspace's domains, newest first; `status` keeps those in one status. */
  list(query: QueryParams<"listDomains"> = {}, options?: RequestOptions): PagePromise<Domain> {
    return this.client.paginate(query, (query) => this.client.http.GET("/v1/domains", { params: { query }, ...this.client.init(options) }));
  }

  /** `getDomain`: the domain and its records, as of the last verification. */
  get(domainId: string, options?: RequestOptions): APIPromise<Domain> {
    return this.client.unwrap(this.client.http.GET("/v1/domains/{domain_id}", { params: { path: { domain_id: domainId } }, ...this.client.init(options) }));
  }

  /**
   * `updateDomain`: its open and click tracking defaults (null follows the workspace) and its
   * tracking domain (publish the `tracking` CNAME record it adds); fields left out keep their value.
   */
  update(domainId: string, params: RequestBody<"updateDomain">, options?: RequestOptions): APIPromise<Domain> {
    return this.client.unwrap(
      this.client.http.PATCH("/v1/domains/{domain_id}", { params: { path: { domain_id: domainId } }, body: params, ...this.client.init(options, "PATCH") }),
    );
  }

  /** `deleteDomain`: remove the domain and its keys; live mail from it is refused from now on. */
  delete(domainId: string, options?: RequestOptions): APIPromise<DeletedObject> {
    return this.client.unwrapDeleted(
      this.client.http.DELETE("/v1/domains/{domain_id}", { params: { path: { domain_id: domainId } }, ...this.client.initRepeatedDelete(options) }),
      { id: domainId, object: "domain", deleted: true },
    );
  }

  /** `verifyDomain`: look every record up in DNS now; `status` is `verified` once every required one is found. */
  verify(domainId: string, options?: RequestOptions): APIPromise<Domain> {
    return this.client.unwrap(
      this.client.http.POST("/v1/domains/{domain_id}/verify", { params: { path: { domain_id: domainId } }, ...this.client.init(options, "POST") }),
    );
  }

  /** `rotateDomainDkim`: new DKIM keys, in `dkim_rotation`; publish their `dkim_next` records, then `verify`, and they take over. */
  rotateDkim(domainId: string, options?: RequestOptions): APIPromise<Domain> {
    return this.client.unwrap(
      this.client.http.POST("/v1/domains/{domain_id}/rotate-dkim", { params: { path: { domain_id: domainId } }, ...this.client.init(options, "POST") }),
    );
  }
}
