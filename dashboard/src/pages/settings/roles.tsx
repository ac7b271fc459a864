import type { Role } from "mailroom";
import { ROLES } from "../../lib/member-roles";

export { isRole } from "../../lib/member-roles";

export const ROLE_HINT =
  "Viewers read; developers also send and manage API keys; admins also manage settings and members; owners also manage owners.";

/** A role picker of `roles` (default: every role); the field around it gives it its name. */
export function RoleOptions({ roles = ROLES }: { roles?: readonly Role[] }) {
  return roles.map((role) => (
    <option key={role} value={role}>
      {role}
    </option>
  ));
}
