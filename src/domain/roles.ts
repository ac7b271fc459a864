/**
 * Members' roles, least to most (docs/dashboard.md#roles). Each /v1 operation names the least
 * role that may call it in the contract (`x-mailroom-role`); the rules about who may hand out or
 * take away which role live here.
 */
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
