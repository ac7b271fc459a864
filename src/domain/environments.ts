import type { KeyRestrictions } from "./key-restrictions.js";
import type { Role } from "./roles.js";

export const ENVIRONMENTS = ["live", "sandbox"] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

export const PERMISSIONS = ["full_access", "sending_access"] as const;
export type Permission = (typeof PERMISSIONS)[number];

/**
 * What an operation's security requirement asks of the credential (the contract's bearerAuth
 * scope): a key permission, or `user` for operations only a person's access token may call.
 */
export type CredentialScope = Permission | "user";

/** Whether a key with `has` may call an operation that needs `needs`. */
export function permits(has: Permission, needs: CredentialScope): boolean {
  if (needs === "user") return false;
  return has === "full_access" || needs === "sending_access";
}

/** The credential behind a call: an API key with its permission and limits (none when absent), or a member's access token. */
export type Credential = { kind: "api_key"; id: string; permission: Permission; restrictions?: KeyRestrictions } | { kind: "user_token"; id: string; userId: string; role: Role };

/** Who did something, as the API shows it (the contract's Actor): an API key, or a member. */
export interface Actor {
  type: "api_key" | "user";
  id: string;
}

/** The actor behind a credential: the key itself, or the member whose access token it is. */
export function actorOf(credential: Credential): Actor {
  return credential.kind === "api_key" ? { type: "api_key", id: credential.id } : { type: "user", id: credential.userId };
}

/** Who is calling: one workspace, one environment, one credential. */
export interface Principal {
  workspaceId: string;
  environment: Environment;
  credential: Credential;
}

/** The tenant scope every repository query takes first. */
export interface Scope {
  workspaceId: string;
  environment: Environment;
}
