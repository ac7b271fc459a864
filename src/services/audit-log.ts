import type { Clock } from "../domain/clock.js";
import { auditedChange, type AuditedOperation } from "../domain/audit.js";
import { actorOf, ENVIRONMENTS, type Actor, type Environment, type Principal } from "../domain/environments.js";
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

/**
 * The rows of one change: one per environment whose log shows it (AUDITED_OPERATIONS' `reach`),
 * each in that environment. `environment` is the caller's, absent for a change made with no
 * environment (on the dashboard's /auth routes), which reaches the whole workspace. Also for
 * changes written inside their own transaction (members.ts).
 */
export function auditRows(at: { workspaceId: string; environment?: Environment }, actor: Actor, change: AuditedChange, now: number): AuditEventRow[] {
  const { target, reach } = auditedChange(change.operation);
  const environments = reach === "workspace" || at.environment === undefined ? ENVIRONMENTS : [at.environment];
  return environments.map(
    (environment): AuditEventRow => ({
      id: newId("auditEvent", now),
      workspace_id: at.workspaceId,
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
}

/** The audit log (docs/audit-log.md): who changed what, when, from where. */
export class AuditLogService {
  constructor(
    private readonly events: AuditEventsRepository,
    private readonly clock: Clock,
  ) {}

  /** Records a change in the log of every environment it reaches (AUDITED_OPERATIONS). */
  async record(principal: Principal, change: AuditedChange): Promise<void> {
    await this.events.insert(auditRows({ workspaceId: principal.workspaceId, environment: principal.environment }, actorOf(principal.credential), change, this.clock.now()));
  }

  async list(principal: Principal, filters: AuditEventFilters, page: PageRequest): Promise<Page<AuditEvent>> {
    return this.events.list(scopeOf(principal), filters, page);
  }
}
