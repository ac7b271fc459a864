import type { APIPromise } from "../api-promise.js";
import type { RequestOptions } from "../client.js";
import type { ResponseBody } from "../types.js";
import { Resource } from "./resource.js";

/** Liveness and readiness probes (tag `System`; they need no key, but the client sends it). */
export class System extends Resource {
  /** `getHealth`: the process is up. */
  getHealth(options?: RequestOptions): APIPromise<ResponseBody<"getHealth">> {
    return this.client.unwrap(this.client.http.GET("/health", this.client.init(options)));
  }

  /** `getReadiness`: the server can take traffic (its database answers). */
  getReadiness(options?: RequestOptions): APIPromise<ResponseBody<"getReadiness">> {
    return this.client.unwrap(this.client.http.GET("/ready", this.client.init(options)));
  }
}
