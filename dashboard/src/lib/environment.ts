import type { components } from "mailroom";

/** A workspace's two environments (DESIGN §6): `live` sends real mail, `sandbox` never does. */
export type Environment = components["schemas"]["Environment"];

export const ENVIRONMENT_LABELS: Record<Environment, string> = { live: "Live", sandbox: "Sandbox" };

export function isEnvironment(value: unknown): value is Environment {
  return value === "live" || value === "sandbox";
}

// The pages of one record that belongs to one environment, and the list of its kind. The other
// environment has no such record ("Not found"), so a switch goes to that list there, as Stripe's
// dashboard does. Templates and domains belong to the workspace and keep their page; the sandbox
// inbox reads the sandbox whatever the switch shows.
const RECORD_LISTS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^\/messages\/[^/]+\/?$/, "/messages"],
  [/^\/webhooks\/[^/]+\/?$/, "/webhooks"],
  [/^\/developers\/request-log\/[^/]+\/?$/, "/developers/request-log"],
];

/** Where a switch of environment goes from `path`: the list of its record's kind, or null to stay. */
export function pathAfterEnvironmentSwitch(path: string): string | null {
  return RECORD_LISTS.find(([page]) => page.test(path))?.[1] ?? null;
}
