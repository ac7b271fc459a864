import { randomBytes } from "node:crypto";
import { digestSecret } from "../domain/api-key-secret.js";
import type { Clock } from "../domain/clock.js";
import { displayName } from "../domain/display-name.js";
import { AuthenticationError, ConflictError, DomainError, InsufficientRoleError, NotFoundError, UserTokenRequiredError } from "../domain/errors.js";
import type { Principal } from "../domain/environments.js";
import { newId } from "../domain/ids.js";
import { mayAssign, roleAtLeast, ROLES, type Role } from "../domain/roles.js";
import type { Repositories, Transaction } from "../db/repositories/index.js";
import { InvitationsRepository } from "../db/repositories/invitations.js";
import type { Page, PageRequest } from "../db/pagination.js";
import { UsersRepository } from "../db/repositories/users.js";
import { auditRows } from "./audit-log.js";
import type { components } from "../../generated/v1.js";

type Schemas = components["schemas"];

/** An updateMember's answer, and the fields it changed (none: the member had that role already). */
export interface UpdatedMember {
  member: Schemas["Member"];
  changed: string[];
}

/** Invitation links work for a week (Slack, GitHub and Stripe use days, not months). */
export const INVITATION_LIFETIME_MS = 7 * 24 * 3600 * 1000;

export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

/** The acting member behind a principal; account operations are for people only. */
function memberOf(principal: Principal): { userId: string; role: Role } {
  if (principal.credential.kind !== "user_token") throw new UserTokenRequiredError();
  return { userId: principal.credential.userId, role: principal.credential.role };
}

const ownerRoleError = () => new InsufficientRoleError("owner", "admin");
/** The roles a member with `role` (null: no longer a member) may not invite anyone as. */
const ungrantable = (role: Role | null): Role[] => ROLES.filter((invited) => role === null || !mayAssign(role, null, invited));
const lastOwnerError = () => new ConflictError("last_owner", "Last owner", "A workspace needs at least one owner: make someone else an owner first.");

/** Accounts, workspaces, members and invitations: who belongs where, with which role. */
export class MembersService {
  constructor(
    private readonly repositories: Pick<Repositories, "users" | "members" | "workspaces" | "invitations" | "sessions" | "auditEvents" | "transaction">,
    private readonly clock: Clock,
  ) {}

  async getAccount(principal: Principal): Promise<Schemas["Account"]> {
    const { userId } = memberOf(principal);
    return this.accountOf(userId);
  }

  /** The caller's own display name: theirs alone, so no role is needed and no workspace audits it. */
  async updateAccount(principal: Principal, input: Schemas["UpdateAccountRequest"]): Promise<Schemas["Account"]> {
    const { userId } = memberOf(principal);
    const user = await this.repositories.users.find(userId);
    if (!user) throw new NotFoundError("user", userId);
    // A name given as it is changes nothing, `updated_at` included.
    if (input.name !== undefined && displayName(input.name) !== user.name) await this.repositories.users.updateName(userId, displayName(input.name), this.clock.now());
    return this.accountOf(userId);
  }

  async accountOf(userId: string): Promise<Schemas["Account"]> {
    const user = await this.repositories.users.find(userId);
    if (!user) throw new NotFoundError("user", userId);
    return { user: UsersRepository.toWire(user), workspaces: await this.repositories.members.workspacesOf(userId) };
  }

  async createWorkspace(principal: Principal, input: Schemas["CreateWorkspaceRequest"]): Promise<Schemas["WorkspaceMembership"]> {
    const { userId } = memberOf(principal);
    // The contract refuses a name of only spaces; the spaces around one are not part of it.
    return this.repositories.transaction((trx) => this.createOwnedWorkspace(userId, input.name.trim(), trx));
  }

  /** A new workspace owned by `userId`, inside the caller's transaction (sign-up uses it too). */
  async createOwnedWorkspace(userId: string, name: string, trx: Transaction): Promise<Schemas["WorkspaceMembership"]> {
    const now = this.clock.now();
    const id = newId("workspace", now);
    await this.repositories.workspaces.insert({ id, name, default_from: null, created_at: now, updated_at: now }, trx);
    await this.repositories.members.insert({ workspace_id: id, user_id: userId, role: "owner", created_at: now }, trx);
    return { id, object: "workspace_membership", name, role: "owner", joined_at: new Date(now).toISOString() };
  }

  async listMembers(principal: Principal, filters: { role?: Role | undefined }, page: PageRequest): Promise<Page<Schemas["Member"]>> {
    memberOf(principal);
    return this.repositories.members.list(principal.workspaceId, filters, page);
  }

  /**
   * Gives the member `input.role`. Giving the role they have is still decided (the caller must
   * be allowed to), but changes nothing: `changed` is empty and nothing is written.
   */
  async updateMember(principal: Principal, userId: string, input: Schemas["UpdateMemberRequest"]): Promise<UpdatedMember> {
    const actor = memberOf(principal);
    const target = await this.findMember(principal.workspaceId, userId);
    const changed = await this.repositories.transaction(async (trx) => {
      const from = await this.decideUnderLock(principal.workspaceId, actor.userId, userId, input.role, trx);
      if (from === input.role) return [];
      await this.repositories.members.updateRole(principal.workspaceId, userId, input.role, trx);
      // An invitation is only as good as its sender's role: one they may no longer send goes too.
      await this.repositories.invitations.closePendingBy(principal.workspaceId, userId, ungrantable(input.role), this.clock.now(), trx);
      return ["role"];
    });
    return { member: { ...target, role: input.role }, changed };
  }

  async removeMember(principal: Principal, userId: string): Promise<Schemas["Member"]> {
    const actor = memberOf(principal);
    return this.takeOut(principal.workspaceId, actor.userId, userId);
  }

  /** Any member, whatever their role, may take themselves out: leaving is a removal of oneself. */
  async leaveWorkspace(principal: Principal): Promise<Schemas["Member"]> {
    const { userId } = memberOf(principal);
    return this.takeOut(principal.workspaceId, userId, userId);
  }

  /** Takes `userId` out of the workspace, by `actorId`'s decision (themselves: leaving). */
  private async takeOut(workspaceId: string, actorId: string, userId: string): Promise<Schemas["Member"]> {
    const target = await this.repositories.members.findMember(workspaceId, userId);
    // One who left or was removed meanwhile lost this token with the membership.
    if (!target) throw actorId === userId ? new AuthenticationError() : new NotFoundError("member", userId);
    const role = await this.repositories.transaction(async (trx) => {
      const from = await this.decideUnderLock(workspaceId, actorId, userId, null, trx);
      await this.repositories.members.delete(workspaceId, userId, trx);
      // Removal takes effect now: the member's tokens end, not at their expiry, and so do the
      // invitations they sent, whose links would otherwise still let people in at their word.
      await this.repositories.sessions.deleteTokensOfMember(workspaceId, userId, trx);
      await this.repositories.invitations.closePendingBy(workspaceId, userId, ungrantable(null), this.clock.now(), trx);
      return from;
    });
    return { ...target, role };
  }

  /**
   * Whether the actor may move the target from their current role to `to` (null: removal),
   * decided on roles read under the workspace's membership lock: the principal's role and the
   * target's read before it may be stale by then (two owners demoting each other at once).
   * Anyone may remove themselves (leave); the last owner may not, whoever asks. Returns the
   * target's role.
   */
  private async decideUnderLock(workspaceId: string, actorId: string, targetId: string, to: Role | null, trx: Transaction): Promise<Role> {
    const roles = await this.repositories.members.lockRoles(workspaceId, trx);
    const actorRole = roles.get(actorId);
    const from = roles.get(targetId);
    // Removed meanwhile: their token was revoked with the membership, as the next call would find.
    if (actorRole === undefined) throw new AuthenticationError();
    if (from === undefined) throw new NotFoundError("member", targetId);
    const leaving = actorId === targetId && to === null;
    if (!leaving && !mayAssign(actorRole, from, to)) throw roleAtLeast(actorRole, "admin") ? ownerRoleError() : new InsufficientRoleError("admin", actorRole);
    const owners = [...roles.values()].filter((role) => role === "owner").length;
    if (from === "owner" && to !== "owner" && owners <= 1) throw lastOwnerError();
    return from;
  }

  /** `baseUrl` is where the dashboard is reached; the link is `<baseUrl>/invitations/<secret>`. */
  async createInvitation(principal: Principal, input: Schemas["CreateInvitationRequest"], baseUrl: string): Promise<Schemas["InvitationWithUrl"]> {
    const actor = memberOf(principal);
    const role = input.role ?? "developer";
    if (!mayAssign(actor.role, null, role)) throw ownerRoleError();
    const emailNormalized = normaliseEmail(input.email);
    const existing = await this.repositories.users.findByEmail(emailNormalized);
    if (existing && (await this.repositories.members.find(principal.workspaceId, existing.id))) {
      throw new ConflictError("already_a_member", "Already a member", `${input.email} is already a member of this workspace.`);
    }
    const now = this.clock.now();
    const secret = randomBytes(32).toString("base64url");
    const row = {
      id: newId("invitation", now),
      workspace_id: principal.workspaceId,
      email: input.email.trim(),
      email_normalized: emailNormalized,
      role,
      digest: digestSecret(secret),
      invited_by: actor.userId,
      created_at: now,
      expires_at: now + INVITATION_LIFETIME_MS,
      closed_at: null,
    };
    // A new invitation withdraws the address's pending one, so it needs what withdrawing takes
    // (revokeInvitation): an admin may not undo an owner's offer of the owner role by re-inviting.
    const kept = await this.repositories.invitations.replace(row, (open) => open.expires_at <= now || mayAssign(actor.role, open.role, null));
    if (kept) throw ownerRoleError();
    return { ...InvitationsRepository.toWire(row), accept_url: `${baseUrl.replace(/\/+$/, "")}/invitations/${secret}` };
  }

  async listInvitations(principal: Principal, page: PageRequest): Promise<Page<Schemas["Invitation"]>> {
    memberOf(principal);
    return this.repositories.invitations.listPending(principal.workspaceId, this.clock.now(), page);
  }

  async revokeInvitation(principal: Principal, invitationId: string): Promise<Schemas["Invitation"]> {
    const actor = memberOf(principal);
    const now = this.clock.now();
    const row = await this.repositories.invitations.find(principal.workspaceId, invitationId);
    const pending = row !== undefined && row.closed_at === null && row.expires_at > now;
    // Withdrawing an offer of the owner role touches that role, which only owners do (mayAssign):
    // an admin could otherwise keep an owner from bringing in another owner.
    if (pending && !mayAssign(actor.role, row.role, null)) throw ownerRoleError();
    if (!pending || !(await this.repositories.invitations.close(row.id, now))) throw new NotFoundError("pending invitation", invitationId);
    return InvitationsRepository.toWire(row);
  }

  /** What an invitation link offers, for the page that accepts it. */
  async previewInvitation(secret: string): Promise<{ email: string; role: Role; workspace_name: string; expires_at: string }> {
    const row = await this.pendingInvitation(secret);
    return { email: row.email, role: row.role, workspace_name: row.workspace_name, expires_at: new Date(row.expires_at).toISOString() };
  }

  /**
   * Makes a user a member through an invitation addressed to their email. Inside the caller's
   * transaction when given (sign-up with an invitation creates the user in the same one).
   * `request` names the request that did it, for the audit event written in the same
   * transaction: a member never joins without the log saying so (docs/audit-log.md).
   */
  async acceptInvitation(user: { id: string; email_normalized: string }, secret: string, request: { id: string; ipAddress: string | null }, trx?: Transaction): Promise<void> {
    // Every query inside the transaction goes through it: SQLite has one connection.
    const accept = async (tx: Transaction) => {
      const row = await this.pendingInvitation(secret, tx);
      // Removing or demoting the sender closes their invitations; this also refuses one they sent
      // while that happened, so a link never grants more than its sender may grant now.
      if (row.invited_by !== null) {
        const sender = await this.repositories.members.find(row.workspace_id, row.invited_by, tx);
        if (!sender || !mayAssign(sender.role, null, row.role)) throw invitationNotFound();
      }
      if (row.email_normalized !== user.email_normalized) {
        throw invitationEmailMismatch(row.email);
      }
      if (!(await this.repositories.invitations.close(row.id, this.clock.now(), tx))) throw invitationNotFound();
      const already = await this.repositories.members.find(row.workspace_id, user.id, tx);
      if (already) return;
      const now = this.clock.now();
      await this.repositories.members.insert({ workspace_id: row.workspace_id, user_id: user.id, role: row.role, created_at: now }, tx);
      // Written here, in the joining's transaction: the /v1 audit hook never sees the /auth routes.
      const joined = { operation: "acceptInvitation" as const, targetId: user.id, fields: [], ipAddress: request.ipAddress, requestId: request.id };
      await this.repositories.auditEvents.insert(auditRows({ workspaceId: row.workspace_id }, { type: "user", id: user.id }, joined, now), tx);
    };
    await (trx ? accept(trx) : this.repositories.transaction(accept));
  }

  /**
   * The pending (open, unexpired) invitation a link's secret names, or 404 invitation_not_found.
   * Sign-up with an invitation calls it first, before it hashes the password or looks up the
   * address: a made-up token costs nothing and tells nothing.
   */
  async pendingInvitation(secret: string, trx?: Transaction) {
    const row = await this.repositories.invitations.findPendingByDigest(digestSecret(secret), this.clock.now(), trx);
    if (!row) throw invitationNotFound();
    return row;
  }

  private async findMember(workspaceId: string, userId: string): Promise<Schemas["Member"]> {
    const member = await this.repositories.members.findMember(workspaceId, userId);
    if (!member) throw new NotFoundError("member", userId);
    return member;
  }
}

export const invitationEmailMismatch = (email: string) => new DomainError("forbidden", "invitation_email_mismatch", "Invitation for another address", `This invitation is for ${email}; sign in with that address to accept it.`);
const invitationNotFound = () => new DomainError("not_found", "invitation_not_found", "Invitation not found", "This invitation link is not valid: it was used, revoked, replaced or has expired. Ask for a new one.");
