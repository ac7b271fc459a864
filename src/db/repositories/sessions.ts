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

/**
 * A token found by its digest, with the member's role as it is now (null: no longer a member) and
 * when its session ends (the earlier of its idle and absolute expiry, as they are now).
 */
export interface TokenWithRole {
  token: AccessTokenRow;
  role: Role | null;
  sessionExpiresAt: number;
}

/** Dashboard sessions and the access tokens exchanged for them; both found by digest only. */
export class SessionsRepository {
  constructor(private readonly knex: Knex) {}

  async insert(row: SessionRow, trx: Knex | Knex.Transaction = this.knex): Promise<void> {
    await trx("sessions").insert(row);
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
    await this.knex.transaction((trx) => deleteWithTokens(trx, id));
  }

  /** Ends the session whose secret has this digest, if there is one, with its tokens. */
  async deleteByDigest(digest: string, trx: Knex.Transaction): Promise<void> {
    const row = (await trx("sessions").where({ digest }).first("id")) as { id: string } | undefined;
    if (row) await deleteWithTokens(trx, row.id);
  }

  /** Ends every session of a user (a password change), with their tokens. */
  async deleteAllOfUser(userId: string, trx: Knex | Knex.Transaction = this.knex): Promise<void> {
    await trx("access_tokens").where({ user_id: userId }).delete();
    await trx("sessions").where({ user_id: userId }).delete();
  }

  async insertToken(row: AccessTokenRow): Promise<void> {
    await this.knex("access_tokens").insert(row);
  }

  /**
   * The token, the member's current role (a demotion or removal applies to the next call), and
   * its session, which must still exist: an exchange that read its session just before a sign-out
   * or password change deleted the session's tokens inserts its own after them, and only the
   * missing session then tells that token apart (access_tokens.session_id has no foreign key).
   */
  async findToken(digest: string): Promise<TokenWithRole | undefined> {
    const row = (await this.knex("access_tokens as t")
      .join("sessions as s", "s.id", "t.session_id")
      .leftJoin("memberships as m", (join) => join.on("m.workspace_id", "t.workspace_id").andOn("m.user_id", "t.user_id"))
      .where("t.digest", digest)
      .select("t.*", "m.role as member_role", "s.expires_at as session_expires_at", "s.absolute_expires_at as session_absolute_expires_at")
      .first()) as (AccessTokenRow & { member_role: Role | null; session_expires_at: number | string; session_absolute_expires_at: number | string }) | undefined;
    if (!row) return undefined;
    const { member_role, session_expires_at, session_absolute_expires_at, ...token } = row;
    return {
      token: { ...token, created_at: toNumber(token.created_at), expires_at: toNumber(token.expires_at) },
      role: member_role ?? null,
      sessionExpiresAt: Math.min(toNumber(session_expires_at), toNumber(session_absolute_expires_at)),
    };
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

async function deleteWithTokens(trx: Knex.Transaction, sessionId: string): Promise<void> {
  await trx("access_tokens").where({ session_id: sessionId }).delete();
  await trx("sessions").where({ id: sessionId }).delete();
}
