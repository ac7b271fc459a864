import type { Knex } from "knex";
import { toIso } from "../../domain/clock.js";
import { isUniqueViolation } from "../driver-errors.js";
import type { Role } from "../../domain/roles.js";
import type { components } from "../../../generated/v1.js";
import { paginate, type Page, type PageRequest } from "../pagination.js";
import { toNumber, toNumberOrNull } from "../rows.js";

type Invitation = components["schemas"]["Invitation"];

export interface InvitationRow {
  id: string;
  workspace_id: string;
  email: string;
  email_normalized: string;
  role: Role;
  digest: string;
  invited_by: string | null;
  created_at: number;
  expires_at: number;
  closed_at: number | null;
}

/**
 * Pending invitations are the ones neither closed (accepted, revoked, replaced) nor expired. An
 * open one (not closed, maybe expired) carries its address in pending_email, which is unique per
 * workspace (migration 028): every update that closes one clears it.
 */
export class InvitationsRepository {
  constructor(private readonly knex: Knex) {}

  /**
   * Inserts an invitation and closes the open one to the same address, atomically, unless
   * `mayClose` refuses to close it: then nothing is written and that invitation is returned.
   */
  async replace(row: InvitationRow, mayClose: (open: InvitationRow) => boolean): Promise<InvitationRow | null> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.knex.transaction(async (trx) => {
          const open = (await trx("invitations").where({ workspace_id: row.workspace_id, email_normalized: row.email_normalized }).whereNull("closed_at")).map((found: InvitationRow) => normalise(found));
          const kept = open.find((found) => !mayClose(found));
          if (kept) return kept;
          // Only the rows read and judged above: one inserted since conflicts below, and is judged
          // on the next attempt.
          if (open.length > 0) await trx("invitations").whereIn("id", open.map((found) => found.id)).whereNull("closed_at").update(closing(row.created_at));
          await trx("invitations").insert({ ...row, pending_email: row.email_normalized });
          return null;
        });
      } catch (error) {
        // Another invitation to the address was inserted meanwhile (the key waited for it to
        // commit): replace again, closing it, as if this one had come second. The id and the
        // digest are fresh, so the pending key is the one that conflicted.
        if (!isUniqueViolation(error) || attempt === 3) throw error;
      }
    }
  }

  async find(workspaceId: string, id: string): Promise<InvitationRow | undefined> {
    return normalise(await this.knex("invitations").where({ workspace_id: workspaceId, id }).first());
  }

  /** A pending invitation by its link's digest, with its workspace's name. */
  async findPendingByDigest(digest: string, now: number, trx: Knex | Knex.Transaction = this.knex): Promise<(InvitationRow & { workspace_name: string }) | undefined> {
    const row = (await trx("invitations as i")
      .join("workspaces as w", "w.id", "i.workspace_id")
      .where("i.digest", digest)
      .whereNull("i.closed_at")
      .where("i.expires_at", ">", now)
      .select("i.*", "w.name as workspace_name")
      .first()) as (InvitationRow & { workspace_name: string }) | undefined;
    const invitation = normalise(row);
    return invitation && row && { ...invitation, workspace_name: row.workspace_name };
  }

  async listPending(workspaceId: string, now: number, page: PageRequest): Promise<Page<Invitation>> {
    const query = this.knex("invitations").where({ workspace_id: workspaceId }).whereNull("closed_at").where("expires_at", ">", now);
    return paginate<InvitationRow, Invitation>(query, "id", (row) => row.id, page, "desc", (row) => InvitationsRepository.toWire(normalise(row)!));
  }

  /** Closes a pending invitation; false when it was not pending any more (a race lost). */
  async close(id: string, now: number, trx: Knex | Knex.Transaction = this.knex): Promise<boolean> {
    return (await trx("invitations").where({ id }).whereNull("closed_at").update(closing(now))) === 1;
  }

  /**
   * Closes the pending invitations `invitedBy` sent in the workspace for any of `roles` (those
   * they may no longer grant: all of them once removed); returns how many.
   */
  async closePendingBy(workspaceId: string, invitedBy: string, roles: readonly Role[], now: number, trx: Knex | Knex.Transaction = this.knex): Promise<number> {
    if (roles.length === 0) return 0;
    return trx("invitations").where({ workspace_id: workspaceId, invited_by: invitedBy }).whereIn("role", roles).whereNull("closed_at").where("expires_at", ">", now).update(closing(now));
  }

  static toWire(row: InvitationRow): Invitation {
    return { id: row.id, object: "invitation", email: row.email, role: row.role, invited_by: row.invited_by, created_at: toIso(row.created_at), expires_at: toIso(row.expires_at) };
  }
}

/** The update that closes an invitation, freeing its address for the next one. */
const closing = (now: number) => ({ closed_at: now, pending_email: null });

function normalise(row: InvitationRow): InvitationRow;
function normalise(row: InvitationRow | undefined): InvitationRow | undefined;
function normalise(row: InvitationRow | undefined): InvitationRow | undefined {
  return row && { ...row, created_at: toNumber(row.created_at), expires_at: toNumber(row.expires_at), closed_at: toNumberOrNull(row.closed_at) };
}
