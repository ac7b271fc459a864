import type { Member, Role } from "mailroom";
import { hasRole } from "./roles.js";

/** Every role, most powerful first, as the pickers list them (docs/dashboard.md, Roles). */
export const ROLES = ["owner", "admin", "developer", "viewer"] as const satisfies readonly Role[];

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

/**
 * Whether `actor` may move a member from `from` to `to` (`from` null: an invitation; `to` null: a
 * removal): the server's rule (mayAssign in src/domain/roles.ts), so that the Settings page offers
 * no change it would refuse. Admins manage everyone below owner; only owners touch the owner role.
 */
export function mayAssignRole(actor: Role, from: Role | null, to: Role | null): boolean {
  if (!hasRole(actor, "admin")) return false;
  if (actor === "owner") return true;
  return from !== "owner" && to !== "owner";
}

/** The roles `actor` may give a member who is `from` (null: someone invited), most powerful first; none below admin. */
export function assignableRoles(actor: Role, from: Role | null): Role[] {
  // An admin may not change an owner at all, so not even to the role they have.
  if (from !== null && !mayAssignRole(actor, from, from)) return [];
  return ROLES.filter((role) => mayAssignRole(actor, from, role));
}

export function mayRemoveMember(actor: Role, member: Role): boolean {
  return mayAssignRole(actor, member, null);
}

/**
 * The role changes asked about before they are sent, as the one making them cannot take them
 * back: a new owner (who may then demote or remove every other owner, the one making them
 * included), and demoting yourself (only someone else can give the role back).
 */
export function roleChangeToConfirm({ from, to, self }: { from: Role; to: Role; self: boolean }): "grant_owner" | "demote_self" | null {
  if (to === "owner" && from !== "owner") return "grant_owner";
  if (self && !hasRole(to, from)) return "demote_self";
  return null;
}

/** A first page of the workspace's owners (`listMembers` with `role=owner`). */
export interface OwnersPage<M extends Pick<Member, "user_id" | "role">> {
  data: readonly M[];
  has_more: boolean;
}

/**
 * The workspace's only owner, whom the server will neither demote nor remove nor let leave
 * (409 last_owner): the one owner of a first page of owners with no more after it; null when
 * there are others, wherever the whole list of members would put them.
 */
export function soleOwnerId(owners: OwnersPage<Pick<Member, "user_id" | "role">>): string | null {
  const [owner, ...others] = owners.data;
  return owner !== undefined && others.length === 0 && !owners.has_more ? owner.user_id : null;
}

/** The page of owners once `changed` has its new role: made owner, it joins; no longer one, it leaves. */
export function ownersAfter<M extends Pick<Member, "user_id" | "role">>(owners: OwnersPage<M>, changed: M): OwnersPage<M> {
  const others = owners.data.filter((owner) => owner.user_id !== changed.user_id);
  if (changed.role === "owner") return { ...owners, data: [...others, changed] };
  return others.length === owners.data.length ? owners : { ...owners, data: others };
}
