export const ENVIRONMENTS = ["live", "sandbox"] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

export const PERMISSIONS = ["full_access", "sending_access"] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** Whether a key with `has` may call an operation that needs `needs`. */
export function permits(has: Permission, needs: Permission): boolean {
  return has === "full_access" || needs === "sending_access";
}

/** Who is calling: one workspace, one environment, one permission. */
export interface Principal {
  workspaceId: string;
  environment: Environment;
  permission: Permission;
  /** The API key behind the call (dashboard session tokens will add their own kind). */
  credential: { kind: "api_key"; id: string };
}

/** The tenant scope every repository query takes first. */
export interface Scope {
  workspaceId: string;
  environment: Environment;
}
