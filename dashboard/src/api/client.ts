import { APIError, AuthenticationError, Mailroom } from "mailroom";
import { exchangeToken } from "../auth/auth-api";
import type { Environment } from "../lib/environment";
import { TokenManager } from "./token-manager";

/** The page's one token store; signing out clears it. */
export const tokens = new TokenManager(exchangeToken);

export interface Scope {
  workspaceId: string;
  environment: Environment;
}

// One client per scope, rebuilt when its token changes (the SDK takes the key at construction).
const clients = new Map<string, { token: string; client: Mailroom }>();

function clientFor(scope: Scope, token: string): Mailroom {
  const key = `${scope.workspaceId}:${scope.environment}`;
  const cached = clients.get(key);
  if (cached?.token === token) return cached.client;
  // The dashboard is served by the API server itself, so /v1 is on this origin (and the CSP's
  // connect-src 'self' allows nothing else).
  const client = new Mailroom({ apiKey: token, baseUrl: window.location.origin, maxRetries: 2 });
  clients.set(key, { token, client });
  return client;
}

// The problems `/v1` answered (not the /auth routes'), by the environment of the call: their
// request ids are in that environment's request log.
const answeredIn = new WeakMap<APIError, Environment>();

/**
 * The environment whose request log holds the request that failed with `error`, if any: a
 * problem `/v1` answered, except a 401 (a credential the server did not recognise belongs to no log).
 */
export function loggedEnvironment(error: unknown): Environment | undefined {
  return error instanceof APIError && error.status !== 401 ? answeredIn.get(error) : undefined;
}

/**
 * Runs `operation` with an SDK client for the scope. A 401 means the token died early (signed out
 * elsewhere, revoked, the server restarted): renew it once and run the operation once more. A
 * request that got a 401 was never carried out, so running it again cannot do anything twice.
 * `onTokenRefused` hears when the session itself can no longer mint tokens: it gets the token
 * exchange's errors only, never a /v1 answer, so that its 404 (no longer a member of the
 * workspace) is not confused with a /v1 resource's.
 */
export async function callApi<T>(scope: Scope, operation: (mr: Mailroom) => PromiseLike<T>, onTokenRefused: (error: unknown) => void): Promise<T> {
  const obtain = (replacing?: string) =>
    tokens.token(scope.workspaceId, scope.environment, { replacing }).catch((error: unknown) => {
      onTokenRefused(error);
      throw error;
    });
  const run = async (token: string) => {
    try {
      return await operation(clientFor(scope, token));
    } catch (error) {
      if (error instanceof APIError) answeredIn.set(error, scope.environment);
      throw error;
    }
  };
  const token = await obtain();
  try {
    return await run(token);
  } catch (error) {
    if (!(error instanceof AuthenticationError)) throw error;
    return await run(await obtain(token));
  }
}
