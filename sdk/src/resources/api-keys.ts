import type { APIPromise } from "../api-promise.js";
import type { RequestOptions } from "../client.js";
import type { PagePromise } from "../pagination.js";
import type { ApiKey, ApiKeyWithSecret, QueryParams, RequestBody } from "../types.js";
import { Resource } from "./resource.js";

/** Credentials for the API (tag `ApiKeys`). Secrets are returned once, by create and rotate. */
export class ApiKeys extends Resource {
  /** `createApiKey`: a new key in the calling key's environment; `secret` is shown only now. */
  create(params: RequestBody<"createApiKey">, options?: RequestOptions): APIPromise<ApiKeyWithSecret> {
    return this.client.unwrap(this.client.http.POST("/v1/api-keys", { body: params, ...this.client.init(options, "POST") }));
  }

  /** `listApiKeys`: the environment's keys, without secrets. */
  list(query: QueryParams<"listApiKeys"> = {}, options?: RequestOptions): PagePromise<ApiKey> {
    return this.client.paginate(query, (query) =>
      this.client.http.GET("/v1/api-keys", { params: { query }, ...this.client.init(options) }),
    );
  }

  /** `getApiKey`. */
  get(apiKeyId: string, options?: RequestOptions): APIPromise<ApiKey> {
    return this.client.unwrap(this.client.http.GET("/v1/api-keys/{api_key_id}", { params: { path: { api_key_id: apiKeyId } }, ...this.client.init(options) }));
  }

  /**
   * `updateApiKey`: rename the key or change its `restrictions` (allowed IPs, sender and
   * recipient domains); each restriction given replaces that one, null lifts it.
   */
  update(apiKeyId: string, params: RequestBody<"updateApiKey">, options?: RequestOptions): APIPromise<ApiKey> {
    return this.client.unwrap(
      this.client.http.PATCH("/v1/api-keys/{api_key_id}", { params: { path: { api_key_id: apiKeyId } }, body: params, ...this.client.init(options, "PATCH") }),
    );
  }

  /** `revokeApiKey`: the key stops working at once; it stays listed as revoked. */
  revoke(apiKeyId: string, options?: RequestOptions): APIPromise<ApiKey> {
    return this.client.unwrap(
      // Sent again after an unknown outcome: the server answers a revoked key's revocation with the key.
      this.client.http.DELETE("/v1/api-keys/{api_key_id}", { params: { path: { api_key_id: apiKeyId } }, ...this.client.initRepeatedDelete(options) }),
    );
  }

  /** `rotateApiKey`: a new secret; the old one keeps working for `overlap_seconds` (default 24 h). */
  rotate(apiKeyId: string, params: RequestBody<"rotateApiKey"> = {}, options?: RequestOptions): APIPromise<ApiKeyWithSecret> {
    return this.client.unwrap(
      this.client.http.POST("/v1/api-keys/{api_key_id}/rotate", {
        params: { path: { api_key_id: apiKeyId } },
        body: params,
        ...this.client.init(options, "POST"),
      }),
    );
  }
}
