import type { APIPromise } from "../api-promise.js";
import type { RequestOptions } from "../client.js";
import type { RequestBody, ResponseBody } from "../types.js";
import { Resource } from "./resource.js";

/** The workspace and environment of the calling key (tag `Workspace`). */
export class WorkspaceResource extends Resource {
  /** `getWorkspace`. */
  get(options?: RequestOptions): APIPromise<ResponseBody<"getWorkspace">> {
    return this.client.unwrap(this.client.http.GET("/v1/workspace", this.client.init(options)));
  }

  /** `updateWorkspace`: change the name, the default sender, the monthly quota or the tracking defaults. */
  update(params: RequestBody<"updateWorkspace">, options?: RequestOptions): APIPromise<ResponseBody<"updateWorkspace">> {
    return this.client.unwrap(this.client.http.PATCH("/v1/workspace", { body: params, ...this.client.init(options, "PATCH") }));
  }
}
