import type { APIPromise } from "../api-promise.js";
import type { RequestOptions } from "../client.js";
import type { QueryParams, Usage } from "../types.js";
import { Resource } from "./resource.js";

/** Live messages and recipients per day and month, and the monthly quota (tag `Usage`). */
export class UsageResource extends Resource {
  /** `getUsage`: `from` and `to` are UTC days (`YYYY-MM-DD`); default this month up to today. */
  get(query: QueryParams<"getUsage"> = {}, options?: RequestOptions): APIPromise<Usage> {
    return this.client.unwrap(this.client.http.GET("/v1/usage", { params: { query }, ...this.client.init(options) }));
  }
}
