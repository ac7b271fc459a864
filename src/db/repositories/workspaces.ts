import type { Knex } from "knex";
import { toIso } from "../../domain/clock.js";
import type { Environment } from "../../domain/environments.js";
import { toNumber, toNumberOrNull } from "../rows.js";
import type { components } from "../../../generated/v1.js";

type Workspace = components["schemas"]["Workspace"];

export interface WorkspaceRow {
  id: string;
  name: string;
  default_from: string | null;
  /** Live messages allowed per UTC month; null: no limit. */
  monthly_quota: number | null;
  created_at: number;
  updated_at: number;
}

/** A new workspace starts without a quota unless given one. */
export type NewWorkspace = Omit<WorkspaceRow, "monthly_quota"> & { monthly_quota?: number | null };

export class WorkspacesRepository {
  constructor(private readonly knex: Knex) {}

  async insert(row: NewWorkspace, trx: Knex | Knex.Transaction = this.knex): Promise<void> {
    await trx("workspaces").insert(row);
  }

  async find(id: string): Promise<WorkspaceRow | undefined> {
    const row = (await this.knex("workspaces").where({ id }).first()) as WorkspaceRow | undefined;
    // BIGINT columns may come back as strings (src/db/rows.ts).
    return row && { ...row, monthly_quota: toNumberOrNull(row.monthly_quota), created_at: toNumber(row.created_at), updated_at: toNumber(row.updated_at) };
  }

  async update(id: string, patch: Partial<Pick<WorkspaceRow, "name" | "default_from" | "monthly_quota">>, now: number): Promise<void> {
    await this.knex("workspaces").where({ id }).update({ ...patch, updated_at: now });
  }

  static toWire(row: WorkspaceRow, environment: Environment): Workspace {
    return {
      id: row.id,
      object: "workspace",
      name: row.name,
      environment,
      default_from: row.default_from,
      monthly_quota: row.monthly_quota,
      created_at: toIso(Number(row.created_at)),
      updated_at: toIso(Number(row.updated_at)),
    };
  }
}
