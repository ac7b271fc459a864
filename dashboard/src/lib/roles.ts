import type { Role } from "mailroom";

// viewer < developer < admin < owner (docs/dashboard.md, Roles; each operation's
// x-mailroom-role in the contract names the least role that may call it).
const RANK: Record<Role, number> = { viewer: 0, developer: 1, admin: 2, owner: 3 };

/**
 * Whether a member with `role` may call an operation whose least role is `least`. The page uses
 * it to hide or disable what the server would refuse anyway (403 insufficient_role); the server
 * reads the member's current role on every call, so it has the last word after a demotion.
 */
export function hasRole(role: Role, least: Role): boolean {
  return RANK[role] >= RANK[least];
}
