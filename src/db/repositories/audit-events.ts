import type { Knex } from "knex";
import { toIso } from "../../domain/clock.js";
import type { Environment, Scope } from "../../domain/environments.js";
import { paginate, type Page, type PageRequest } from "../pagination.js";
import { toNumber } from "../rows.js";
import type { components } from "../../../generated/v1.js";

type AuditEvent = components["schemas"]["AuditEvent"];

export interface AuditEventRow {
  id: string;
  workspace_id: string;
  environment: Environment;
  operation: string;
  actor_type: "api_key" | "user";
  actor_id: string;
  target_type: string;
  target_id: string | null;
  fields: string[];
  ip_address: string | null;
  request_id: string;
  created_at: number;
}

export interface AuditEventFilters {
  operation?: string | undefined;
  actorId?: string | undefined;
  targetId?: string | undefined;
  createdAfter?: number | undefined;
  createdBefore?: number | undefined;
}

type StoredRow = Omit<AuditEventRow, "fields"> & { fields: string };

export class AuditEventsRepository {
  constructor(private readonly knex: Knex) {}

  async insert(rows: readonly AuditEventRow[], trx: Knex | Knex.Transaction = this.knex): Promise<void> {
    await trx("audit_events").insert(rows.map((row): StoredRow => ({ ...row, fields: JSON.stringify(row.fields) })));
  }

  async list(scope: Scope, filters: AuditEventFilters, page: PageRequest): Promise<Page<AuditEvent>> {
    const query = this.knex("audit_events").where({ workspace_id: scope.workspaceId, environment: scope.environment });
    if (filters.operation !== undefined) query.andWhere("operation", filters.operation);
    if (filters.actorId !== undefined) query.andWhere("actor_id", filters.actorId);
    if (filters.targetId !== undefined) query.andWhere("target_id", filters.targetId);
    if (filters.createdAfter !== undefined) query.andWhere("created_at", ">=", filters.createdAfter);
    if (filters.createdBefore !== undefined) query.andWhere("created_at", "<", filters.createdBefore);
    return paginate<StoredRow, AuditEvent>(query, "id", (row) => row.id, page, "desc", toWire);
  }
}

function toWire(row: StoredRow): AuditEvent {
  return {
    id: row.id,
    object: "audit_event",
    environment: row.environment,
    operation: row.operation,
    actor: { type: row.actor_type, id: row.actor_id },
    target: { type: row.target_type, id: row.target_id },
    fields: JSON.parse(row.fields) as string[],
    ip_address: row.ip_address,
    request_id: row.request_id,
    created_at: toIso(toNumber(row.created_at)),
  };
}
