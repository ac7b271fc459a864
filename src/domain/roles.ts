/**
 * Members' roles, least to most (docs/dashboard.md#roles). Each /v1 operation names the least
 * role that may call it in the contract (`x-mailroom-role`); the rules about who may hand out or
 * take away which role live here.
 */
import type { Permission } from "./environments.js";

export const ROLES = ["viewer", "developer", "admin", "owner"] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value);
}

export function roleAtLeast(has: Role, needs: Role): boolean {
  return ROLES.indexOf(has) >= ROLES.indexOf(needs);
}

/**
 * Whether `actor` may change a member from `from` to `to` (or invite someone as `to`, with
 * `from` null). Admins manage everyone below owner; only owners touch the owner role.
 */
export function mayAssign(actor: Role, from: Role | null, to: Role | null): boolean {
  if (!roleAtLeast(actor, "admin")) return false;
  if (actor === "owner") return true;
  return from !== "owner" && to !== "owner";
}

/**
 * The least role that may create, change or rotate a key of each permission (revoking takes
 * power away, so the operation's own role suffices for any key). An API key is not a member and
 * is never role-checked: a full_access key reaches every operation, admin-only ones included. So
 * handing one out, or receiving a new secret for one, is itself an admin's act; otherwise a
 * developer could mint a key and through it change settings, reveal webhook secrets or read the
 * audit log. Developers manage sending_access keys.
 */
export const KEY_PERMISSION_ROLES: Readonly<Record<Permission, Role>> = { full_access: "admin", sending_access: "developer" };
