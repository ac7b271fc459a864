import type { RequestOptions } from "../client.js";
import type { PagePromise } from "../pagination.js";
import type { Event, QueryParams } from "../types.js";
import { Resource } from "./resource.js";

/** Every status change and engagement of every message (tag `Events`). */
export class Events extends Resource {
  /** `listEvents`: the environment's events, newest first. */
  list(query: QueryParams<"listEvents"> = {}, options?: RequestOptions): PagePromise<Event> {
    return this.client.paginate(query, (query) =>
      this.client.http.GET("/v1/events", { params: { query }, ...this.client.init(options) }),
    );
  }
}
