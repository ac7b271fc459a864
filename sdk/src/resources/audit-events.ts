import type { RequestOptions } from "../client.js";
import type { PagePromise } from "../pagination.js";
import type { AuditEvent, QueryParams } from "../types.js";
import { Resource } from "./resource.js";

/** Who changed what: keys, webhook endpoints, domains, templates, members, settings (tag `AuditEvents`). */
export class AuditEvents extends Resource {
  /** `listAuditEvents`: the environment's audit log, newest first; a full_access key or an admin. */
  list(query: QueryParams<"listAuditEvents"> = {}, options?: RequestOptions): PagePromise<AuditEvent> {
    return this.client.paginate(query, (query) =>
      this.client.http.GET("/v1/audit-events", { params: { query }, ...this.client.init(options) }),
    );
  }
}
