import type { Clock } from "../domain/clock.js";
import { AUDITED_OPERATIONS, type AuditedOperation } from "../domain/audit.js";
import { actorOf, ENVIRONMENTS, type Principal } from "../domain/environments.js";
import { newId } from "../domain/ids.js";
import type { AuditEventFilters, AuditEventRow, AuditEventsRepository } from "../db/repositories/audit-events.js";
import type { Page, PageRequest } from "../db/pagination.js";
import { scopeOf } from "./api-keys.js";
import type { components } from "../../generated/v1.js";

type AuditEvent = components["schemas"]["AuditEvent"];

/** A change that succeeded, as the audit log keeps it: names of fields, never their values. */
export interface AuditedChange {
  operation: AuditedOperation;
  targetId: string | null;
  fields: string[];
  ipAddress: string | null;
  requestId: string;
}

/** The audit log (docs/audit-log.md): who changed what, when, from where. */
export class AuditLogService {
  constructor(
    private readonly events: AuditEventsRepository,
    private readonly clock: Clock,
  ) {}

  /** Records a change in the log of every environment it reaches (AUDITED_OPERATIONS). */
  async record(principal: Principal, change: AuditedChange): Promise<void> {
    const now = this.clock.now();
    const { target, reach } = AUDITED_OPERATIONS[change.operation];
    const actor = actorOf(principal.credential);
    const environments = reach === "workspace" ? ENVIRONMENTS : [principal.environment];
    const rows = environments.map(
      (environment): AuditEventRow => ({
        id: newId("auditEvent", now),
        workspace_id: principal.workspaceId,
        environment,
        operation: change.operation,
        actor_type: actor.type,
        actor_id: actor.id,
        target_type: target,
        target_id: change.targetId,
        fields: change.fields,
        ip_address: change.ipAddress,
        request_id: change.requestId,
        created_at: now,
      }),
    );
    await this.events.insert(rows);
  }

  async list(principal: Principal, filters: AuditEventFilters, page: PageRequest): Promise<Page<AuditEvent>> {
    return this.events.list(scopeOf(principal), filters, page);
  }
}
