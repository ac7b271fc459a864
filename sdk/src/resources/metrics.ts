import type { APIPromise } from "../api-promise.js";
import type { RequestOptions } from "../client.js";
import type { Metrics, QueryParams } from "../types.js";
import { Resource } from "./resource.js";

/** What happened to this environment's mail per UTC hour or day, with rates (tag `Metrics`). */
export class MetricsResource extends Resource {
  /**
   * `getMetrics`: `from` and `to` are RFC 3339 instants, rounded out to whole buckets; default the
   * last 7 days (`granularity: "day"`) or 24 hours (`"hour"`). Filter by `tag` or `template` slug.
   */
  get(query: QueryParams<"getMetrics"> = {}, options?: RequestOptions): APIPromise<Metrics> {
    return this.client.unwrap(this.client.http.GET("/v1/metrics", { params: { query }, ...this.client.init(options) }));
  }
}
