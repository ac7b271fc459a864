import type { Role } from "mailroom";

/** Every role, most powerful first (docs/dashboard.md, Roles). */
export const ROLES = ["owner", "admin", "developer", "viewer"] as const satisfies readonly Role[];

export const ROLE_HINT =
  "Viewers read; developers also send and manage API keys; admins also manage settings and members; owners also manage owners.";

/** A role picker; the field around it gives it its name. */
export function RoleOptions() {
  return ROLES.map((role) => (
    <option key={role} value={role}>
      {role}
    </option>
  ));
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}
