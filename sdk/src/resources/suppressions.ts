import type { APIPromise } from "../api-promise.js";
import type { RequestOptions } from "../client.js";
import type { PagePromise } from "../pagination.js";
import type { DeletedObject, QueryParams, RequestBody, Suppression, SuppressionBatch } from "../types.js";
import { Resource } from "./resource.js";

/** Addresses the environment no longer sends to (tag `Suppressions`). */
export class Suppressions extends Resource {
  /** `listSuppressions`: newest first; filter by `reason` or look one address up with `email`. */
  list(query: QueryParams<"listSuppressions"> = {}, options?: RequestOptions): PagePromise<Suppression> {
    return this.client.paginate(query, (query) => this.client.http.GET("/v1/suppressions", { params: { query }, ...this.client.init(options) }));
  }

  /**
   * `createSuppression`: stop sending to an address. An address already suppressed resolves to
   * its existing suppression (the API answers 200 rather than 201; both resolve the same way, and
   * `withResponse()` tells them apart).
   */
  create(params: RequestBody<"createSuppression">, options?: RequestOptions): APIPromise<Suppression> {
    return this.client.unwrap(this.client.http.POST("/v1/suppressions", { body: params, ...this.client.init(options, "POST") }));
  }

  /**
   * `createSuppressionBatch`: suppress up to 1,000 addresses in one call, as when moving from
   * another provider. Resolves whatever becomes of each: `data[i]` answers `suppressions[i]`
   * with 201 (added), 200 (already suppressed, or earlier in this batch) or 422 and its problem,
   * so check every item's `status`; only a malformed batch as a whole throws. One
   * Idempotency-Key covers the batch, so a retry replays its answer rather than running it again.
   */
  createBatch(params: RequestBody<"createSuppressionBatch">, options?: RequestOptions): APIPromise<SuppressionBatch> {
    return this.client.unwrap(this.client.http.POST("/v1/suppressions/batch", { body: params, ...this.client.init(options, "POST") }));
  }

  /** `getSuppression`: the address, why, and the message that caused it. */
  get(suppressionId: string, options?: RequestOptions): APIPromise<Suppression> {
    return this.client.unwrap(
      this.client.http.GET("/v1/suppressions/{suppression_id}", { params: { path: { suppression_id: suppressionId } }, ...this.client.init(options) }),
    );
  }

  /** `deleteSuppression`: take the address off the list; later messages are sent to it again. */
  delete(suppressionId: string, options?: RequestOptions): APIPromise<DeletedObject> {
    return this.client.unwrapDeleted(
      this.client.http.DELETE("/v1/suppressions/{suppression_id}", { params: { path: { suppression_id: suppressionId } }, ...this.client.initRepeatedDelete(options) }),
      { id: suppressionId, object: "suppression", deleted: true },
    );
  }
}
