import type { Knex } from "knex";
import { toIso } from "../../domain/clock.js";
import type { Environment } from "../../domain/environments.js";
import { batchLoader } from "../batch-loader.js";
import { toNumber, toNumberOrNull } from "../rows.js";
import type { components } from "../../../generated/v1.js";

type Workspace = components["schemas"]["Workspace"];
export type WorkspaceTracking = components["schemas"]["WorkspaceTracking"];

export interface WorkspaceRow {
  id: string;
  name: string;
  default_from: string | null;
  /** Live messages allowed per UTC month; null: no limit. */
  monthly_quota: number | null;
  /** Days a settled message keeps its content; null: for good. */
  content_retention_days: number | null;
  /** Defaults for messages that do not say what they track. */
  tracking: WorkspaceTracking;
  created_at: number;
  updated_at: number;
}

/** A new workspace starts without a quota and tracking nothing unless given otherwise. */
export type NewWorkspace = Omit<WorkspaceRow, "monthly_quota" | "content_retention_days" | "tracking"> & { monthly_quota?: number | null };

export type WorkspacePatch = Partial<Pick<WorkspaceRow, "name" | "default_from" | "monthly_quota" | "content_retention_days">> & { tracking?: Partial<WorkspaceTracking> };

/** The columns of each tracking default. */
const TRACKING_COLUMNS = { opens: "track_opens", clicks: "track_clicks", replies: "track_replies", unsubscribe: "unsubscribe" } as const satisfies Record<keyof WorkspaceTracking, string>;

export class WorkspacesRepository {
  constructor(private readonly knex: Knex) {}

  async insert(row: NewWorkspace, trx: Knex | Knex.Transaction = this.knex): Promise<void> {
    await trx("workspaces").insert(row);
  }

  /** Lookups asked in the same turn of the event loop share one query (every send reads its workspace's defaults). */
  find(id: string): Promise<WorkspaceRow | undefined> {
    return this.byId(id);
  }

  private readonly byId = batchLoader(async (ids: string[]) => {
    const rows = (await this.knex("workspaces").whereIn("id", ids)) as Array<Omit<WorkspaceRow, "tracking"> & Record<(typeof TRACKING_COLUMNS)[keyof WorkspaceTracking], boolean | number>>;
    // BIGINT columns may come back as strings, booleans as 0/1 (src/db/rows.ts).
    return new Map<string, WorkspaceRow>(
      rows.map((row) => [
        row.id,
        {
          id: row.id,
          name: row.name,
          default_from: row.default_from,
          monthly_quota: toNumberOrNull(row.monthly_quota),
          content_retention_days: toNumberOrNull(row.content_retention_days),
          tracking: { opens: Boolean(row.track_opens), clicks: Boolean(row.track_clicks), replies: Boolean(row.track_replies), unsubscribe: Boolean(row.unsubscribe) },
          created_at: toNumber(row.created_at),
          updated_at: toNumber(row.updated_at),
        },
      ]),
    );
  });

  async update(id: string, patch: WorkspacePatch, now: number): Promise<void> {
    const { tracking, ...rest } = patch;
    const columns = Object.fromEntries(Object.entries(tracking ?? {}).map(([key, value]) => [TRACKING_COLUMNS[key as keyof WorkspaceTracking], value]));
    await this.knex("workspaces").where({ id }).update({ ...rest, ...columns, updated_at: now });
  }

  /** The workspaces that keep content for a limited time, with that time in days. */
  async withContentRetention(): Promise<Array<{ id: string; days: number }>> {
    const rows = (await this.knex("workspaces").select("id", "content_retention_days").whereNotNull("content_retention_days")) as Array<{ id: string; content_retention_days: number }>;
    return rows.map((row) => ({ id: row.id, days: Number(row.content_retention_days) }));
  }

  static toWire(row: WorkspaceRow, environment: Environment): Workspace {
    return {
      id: row.id,
      object: "workspace",
      name: row.name,
      environment,
      default_from: row.default_from,
      monthly_quota: row.monthly_quota,
      content_retention_days: row.content_retention_days,
      tracking: row.tracking,
      created_at: toIso(Number(row.created_at)),
      updated_at: toIso(Number(row.updated_at)),
    };
  }
}
