import { isEnvironment, type Environment } from "./environment";

// Only choices live here, never secrets: the access token stays in memory (docs/dashboard.md).
const WORKSPACE_KEY = "mailroom.workspace_id";
const ENVIRONMENT_KEY = "mailroom.environment";

// Storage can be unavailable (private windows, disabled storage): the dashboard then simply
// forgets the choice between visits.
function read(key: string): string | null {
  try {
    return window.localStorage.getItem(key);
  } catch {
    return null;
  }
}

function write(key: string, value: string): void {
  try {
    window.localStorage.setItem(key, value);
  } catch {
    // See read().
  }
}

export function loadWorkspaceId(): string | null {
  return read(WORKSPACE_KEY);
}

export function saveWorkspaceId(workspaceId: string): void {
  write(WORKSPACE_KEY, workspaceId);
}

/** The last environment chosen; sandbox by default, so nobody lands in live by surprise. */
export function loadEnvironment(): Environment {
  const stored = read(ENVIRONMENT_KEY);
  return isEnvironment(stored) ? stored : "sandbox";
}

export function saveEnvironment(environment: Environment): void {
  write(ENVIRONMENT_KEY, environment);
}
