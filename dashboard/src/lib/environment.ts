import type { components } from "mailroom";

/** A workspace's two environments (DESIGN §6): `live` sends real mail, `sandbox` never does. */
export type Environment = components["schemas"]["Environment"];

export const ENVIRONMENT_LABELS: Record<Environment, string> = { live: "Live", sandbox: "Sandbox" };

export function isEnvironment(value: unknown): value is Environment {
  return value === "live" || value === "sandbox";
}
