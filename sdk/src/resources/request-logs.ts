import type { APIPromise } from "../api-promise.js";
import type { RequestOptions } from "../client.js";
import type { PagePromise } from "../pagination.js";
import type { QueryParams, RequestLog } from "../types.js";
import { Resource } from "./resource.js";

/** Every request this environment's credentials made to `/v1`, and how it was answered (tag `RequestLogs`). */
export class RequestLogs extends Resource {
  /** `listRequestLogs`: newest first; filter by `status` (`422` or `4xx`), `method`, `operation`, `credential_id`, time. */
  list(query: QueryParams<"listRequestLogs"> = {}, options?: RequestOptions): PagePromise<RequestLog> {
    return this.client.paginate(query, (query) =>
      this.client.http.GET("/v1/request-logs", { params: { query }, ...this.client.init(options) }),
    );
  }

  /** `getRequestLog`: one request, by the `Request-Id` its answer carried (an `APIError`'s `request_id`). */
  get(requestId: string, options?: RequestOptions): APIPromise<RequestLog> {
    return this.client.unwrap(this.client.http.GET("/v1/request-logs/{request_id}", { params: { path: { request_id: requestId } }, ...this.client.init(options) }));
  }
}
