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

/**
 * The workspace's only owner, whom the server will neither demote nor remove nor let leave
 * (409 last_owner), found among every member (an owner may be on any page of the list); null when
 * there are other owners, or when `members` may not be all of them and holds one owner so far
 * (`capped`: the server still has the last word).
 */
export function soleOwnerId(members: { items: readonly Pick<Member, "user_id" | "role">[]; capped: boolean }): string | null {
  const [owner, ...others] = members.items.filter((member) => member.role === "owner");
  return owner !== undefined && others.length === 0 && !members.capped ? owner.user_id : null;
}
