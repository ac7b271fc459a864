import type { Knex } from "knex";
import { toIso } from "../../domain/clock.js";
import type { Environment, Scope } from "../../domain/environments.js";
import { idTimeBound } from "../../domain/ids.js";
import { paginate, type Page, type PageRequest } from "../pagination.js";
import { insertChunked, parseJson, toNumber } from "../rows.js";
import type { components } from "../../../generated/v1.js";

type RequestLog = components["schemas"]["RequestLog"];
type Problem = components["schemas"]["Problem"];

export interface RequestLogRow {
  id: string;
  workspace_id: string;
  environment: Environment;
  method: string;
  path: string;
  operation: string | null;
  status: number;
  error_code: string | null;
  /** The problem answered, as the JSON text that was sent. */
  error: string | null;
  duration_ms: number;
  credential_type: "api_key" | "user";
  credential_id: string;
  ip_address: string | null;
  user_agent: string | null;
  idempotency_key: string | null;
  idempotent_replayed: boolean;
  created_at: number;
}

export interface RequestLogFilters {
  /** Statuses from `min` to `max`, both included: one status, or a class such as 400-499. */
  status?: { min: number; max: number } | undefined;
  method?: string | undefined;
  operation?: string | undefined;
  credentialId?: string | undefined;
  createdAfter?: number | undefined;
  createdBefore?: number | undefined;
}

/** Rows per multi-row insert at most (fewer when their bytes require): 16 columns each, well under SQLite's 32,766 bound variables. */
const INSERT_CHUNK = 500;

export class RequestLogsRepository {
  constructor(private readonly knex: Knex) {}

  async insert(rows: readonly RequestLogRow[]): Promise<void> {
    await insertChunked(this.knex, "request_logs", rows, INSERT_CHUNK);
  }

  async list(scope: Scope, filters: RequestLogFilters, page: PageRequest): Promise<Page<RequestLog>> {
    const query = this.knex("request_logs").where({ workspace_id: scope.workspaceId, environment: scope.environment });
    if (filters.status !== undefined) query.andWhere("status", ">=", filters.status.min).andWhere("status", "<=", filters.status.max);
    if (filters.method !== undefined) query.andWhere("method", filters.method);
    if (filters.operation !== undefined) query.andWhere("operation", filters.operation);
    if (filters.credentialId !== undefined) query.andWhere("credential_id", filters.credentialId);
    // Ids order by time: a time bound is an id bound, which the scope index serves.
    if (filters.createdAfter !== undefined) query.andWhere("id", ">=", idTimeBound("request", filters.createdAfter));
    if (filters.createdBefore !== undefined) query.andWhere("id", "<", idTimeBound("request", filters.createdBefore));
    return paginate<RequestLogRow, RequestLog>(query, "id", (row) => row.id, page, "desc", toWire);
  }

  async find(scope: Scope, id: string): Promise<RequestLog | undefined> {
    const row = (await this.knex("request_logs").where({ workspace_id: scope.workspaceId, environment: scope.environment, id }).first()) as RequestLogRow | undefined;
    return row && toWire(row);
  }

  /** Removes up to `limit` entries of requests made before `before`; returns how many went. */
  async pruneBefore(before: number, limit: number): Promise<number> {
    const ids = (await this.knex("request_logs").where("id", "<", idTimeBound("request", before)).orderBy("id").limit(limit).pluck("id")) as string[];
    let removed = 0;
    for (let i = 0; i < ids.length; i += INSERT_CHUNK) removed += await this.knex("request_logs").whereIn("id", ids.slice(i, i + INSERT_CHUNK)).delete();
    return removed;
  }
}

function toWire(row: RequestLogRow): RequestLog {
  return {
    id: row.id,
    object: "request_log",
    environment: row.environment,
    method: row.method,
    path: row.path,
    operation: row.operation,
    status: toNumber(row.status),
    error_code: row.error_code,
    error: row.error === null ? null : parseJson<Problem>(row.error),
    duration_ms: toNumber(row.duration_ms),
    credential: { type: row.credential_type, id: row.credential_id },
    ip_address: row.ip_address,
    user_agent: row.user_agent,
    idempotency_key: row.idempotency_key,
    idempotent_replayed: Boolean(toNumber(row.idempotent_replayed)),
    created_at: toIso(toNumber(row.created_at)),
  };
}
