import type { Knex } from "knex";
import { toIso } from "../../domain/clock.js";
import type { Role } from "../../domain/roles.js";
import type { components } from "../../../generated/v1.js";
import { paginate, type Page, type PageRequest } from "../pagination.js";
import { toNumber } from "../rows.js";

type Member = components["schemas"]["Member"];
type WorkspaceMembership = components["schemas"]["WorkspaceMembership"];

export interface MembershipRow {
  workspace_id: string;
  user_id: string;
  role: Role;
  created_at: number;
}

interface MemberRow extends MembershipRow {
  email: string;
  name: string | null;
}

interface WorkspaceMembershipRow extends MembershipRow {
  workspace_name: string;
}

/** Who belongs to which workspace, with which role. Every query names the workspace. */
export class MembersRepository {
  constructor(private readonly knex: Knex) {}

  async insert(row: MembershipRow, trx: Knex | Knex.Transaction = this.knex): Promise<void> {
    await trx("memberships").insert(row);
  }

  async find(workspaceId: string, userId: string, trx: Knex | Knex.Transaction = this.knex): Promise<MembershipRow | undefined> {
    const row = (await trx("memberships").where({ workspace_id: workspaceId, user_id: userId }).first()) as MembershipRow | undefined;
    return row && { ...row, created_at: toNumber(row.created_at) };
  }

  async findMember(workspaceId: string, userId: string): Promise<Member | undefined> {
    const row = (await this.members(workspaceId).where("m.user_id", userId).first()) as MemberRow | undefined;
    return row && MembersRepository.memberToWire(row);
  }

  async list(workspaceId: string, filters: { role?: Role | undefined }, page: PageRequest): Promise<Page<Member>> {
    const query = this.members(workspaceId);
    if (filters.role !== undefined) query.where("m.role", filters.role);
    return paginate<MemberRow, Member>(query, "m.user_id", (row) => row.user_id, page, "asc", MembersRepository.memberToWire);
  }

  /** The workspaces a user belongs to, oldest membership first. */
  async workspacesOf(userId: string): Promise<WorkspaceMembership[]> {
    const rows = (await this.knex("memberships as m")
      .join("workspaces as w", "w.id", "m.workspace_id")
      .where("m.user_id", userId)
      .orderBy([{ column: "m.created_at" }, { column: "m.workspace_id" }])
      .select("m.*", "w.name as workspace_name")) as WorkspaceMembershipRow[];
    return rows.map((row) => ({ id: row.workspace_id, object: "workspace_membership", name: row.workspace_name, role: row.role, joined_at: toIso(toNumber(row.created_at)) }));
  }

  /**
   * Every member's role, read with the workspace's membership rows locked until `trx` ends
   * (FOR UPDATE on MySQL; SQLite has one writer). Role changes and removals decide under it: with
   * plain reads under READ COMMITTED, two owners demoting or removing each other at once each see
   * the other still an owner, and the workspace is left with none. The rows are locked in primary
   * key order, so two such transactions queue instead of deadlocking.
   */
  async lockRoles(workspaceId: string, trx: Knex.Transaction): Promise<Map<string, Role>> {
    const rows = (await trx("memberships").where({ workspace_id: workspaceId }).orderBy("user_id").forUpdate().select("user_id", "role")) as Array<{ user_id: string; role: Role }>;
    return new Map(rows.map((row) => [row.user_id, row.role]));
  }

  async updateRole(workspaceId: string, userId: string, role: Role, trx: Knex | Knex.Transaction = this.knex): Promise<void> {
    await trx("memberships").where({ workspace_id: workspaceId, user_id: userId }).update({ role });
  }

  async delete(workspaceId: string, userId: string, trx: Knex | Knex.Transaction = this.knex): Promise<void> {
    await trx("memberships").where({ workspace_id: workspaceId, user_id: userId }).delete();
  }

  private members(workspaceId: string): Knex.QueryBuilder {
    return this.knex("memberships as m").join("users as u", "u.id", "m.user_id").where("m.workspace_id", workspaceId).select("m.*", "u.email", "u.name");
  }

  private static memberToWire(row: MemberRow): Member {
    return { user_id: row.user_id, object: "member", email: row.email, name: row.name, role: row.role, joined_at: toIso(toNumber(row.created_at)) };
  }
}
