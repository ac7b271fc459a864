import type { Knex } from "knex";
import { toIso } from "../../domain/clock.js";
import type { Environment } from "../../domain/environments.js";
import type { components } from "../../../generated/v1.js";

type Workspace = components["schemas"]["Workspace"];

interface WorkspaceRow {
  id: string;
  name: string;
  default_from: string | null;
  created_at: number;
  updated_at: number;
}

export class WorkspacesRepository {
  constructor(private readonly knex: Knex) {}

  async insert(row: WorkspaceRow, trx: Knex | Knex.Transaction = this.knex): Promise<void> {
    await trx("workspaces").insert(row);
  }

  async find(id: string): Promise<WorkspaceRow | undefined> {
    return (await this.knex("workspaces").where({ id }).first()) as WorkspaceRow | undefined;
  }

  async update(id: string, patch: Partial<Pick<WorkspaceRow, "name" | "default_from">>, now: number): Promise<void> {
    await this.knex("workspaces").where({ id }).update({ ...patch, updated_at: now });
  }

  static toWire(row: WorkspaceRow, environment: Environment): Workspace {
    return {
      id: row.id,
      object: "workspace",
      name: row.name,
      environment,
      default_from: row.default_from,
      created_at: toIso(Number(row.created_at)),
      updated_at: toIso(Number(row.updated_at)),
    };
  }
}
