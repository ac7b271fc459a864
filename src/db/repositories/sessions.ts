import type { Knex } from "knex";
import type { Environment } from "../../domain/environments.js";
import type { Role } from "../../domain/roles.js";
import { toNumber } from "../rows.js";

export interface SessionRow {
  id: string;
  digest: string;
  user_id: string;
  created_at: number;
  expires_at: number;
  absolute_expires_at: number;
}

export interface AccessTokenRow {
  id: string;
  digest: string;
  session_id: string;
  user_id: string;
  workspace_id: string;
  environment: Environment;
  created_at: number;
  expires_at: number;
}

/** A token found by its digest, with the member's role as it is now (null: no longer a member). */
export interface TokenWithRole {
  token: AccessTokenRow;
  role: Role | null;
}

/** Dashboard sessions and the access tokens exchanged for them; both found by digest only. */
export class SessionsRepository {
  constructor(private readonly knex: Knex) {}

  async insert(row: SessionRow): Promise<void> {
    await this.knex("sessions").insert(row);
  }

  async findByDigest(digest: string): Promise<SessionRow | undefined> {
    const row = (await this.knex("sessions").where({ digest }).first()) as SessionRow | undefined;
    return row && { ...row, created_at: toNumber(row.created_at), expires_at: toNumber(row.expires_at), absolute_expires_at: toNumber(row.absolute_expires_at) };
  }

  async extend(id: string, expiresAt: number): Promise<void> {
    await this.knex("sessions").where({ id }).update({ expires_at: expiresAt });
  }

  /** Ends a session and every token exchanged for it. */
  async delete(id: string): Promise<void> {
    await this.knex.transaction(async (trx) => {
      await trx("access_tokens").where({ session_id: id }).delete();
      await trx("sessions").where({ id }).delete();
    });
  }

  /** Ends every session of a user but one (after a password change), with their tokens. */
  async deleteOthers(userId: string, keepSessionId: string): Promise<void> {
    await this.knex.transaction(async (trx) => {
      await trx("access_tokens").where({ user_id: userId }).whereNot({ session_id: keepSessionId }).delete();
      await trx("sessions").where({ user_id: userId }).whereNot({ id: keepSessionId }).delete();
    });
  }

  async insertToken(row: AccessTokenRow): Promise<void> {
    await this.knex("access_tokens").insert(row);
  }

  /** The token and the member's current role: a demotion or removal applies to the next call. */
  async findToken(digest: string): Promise<TokenWithRole | undefined> {
    const row = (await this.knex("access_tokens as t")
      .leftJoin("memberships as m", (join) => join.on("m.workspace_id", "t.workspace_id").andOn("m.user_id", "t.user_id"))
      .where("t.digest", digest)
      .select("t.*", "m.role as member_role")
      .first()) as (AccessTokenRow & { member_role: Role | null }) | undefined;
    if (!row) return undefined;
    const { member_role, ...token } = row;
    return { token: { ...token, created_at: toNumber(token.created_at), expires_at: toNumber(token.expires_at) }, role: member_role ?? null };
  }

  /** Revokes a member's tokens for one workspace (removal from it). */
  async deleteTokensOfMember(workspaceId: string, userId: string, trx: Knex | Knex.Transaction = this.knex): Promise<void> {
    await trx("access_tokens").where({ workspace_id: workspaceId, user_id: userId }).delete();
  }

  async pruneExpired(now: number): Promise<number> {
    const tokens = await this.knex("access_tokens").where("expires_at", "<=", now).delete();
    const sessions = await this.knex("sessions").where("expires_at", "<=", now).orWhere("absolute_expires_at", "<=", now).delete();
    return tokens + sessions;
  }
}
