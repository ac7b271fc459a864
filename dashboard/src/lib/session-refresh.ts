import { APIError } from "mailroom";
import type { Session } from "../auth/auth-api.js";

/** What the page knows of the session: the last one the server gave, and why a reload since failed. */
export interface SessionState {
  /** Undefined until the server has answered once (or an /auth route has given one). */
  session: Session | undefined;
  /** The last reload's failure, until a reload or an /auth route answers again. */
  failure: unknown;
}

/**
 * The session once it has ended: no user and no workspaces. The CSRF token and the sign-up mode
 * stay as the server last said, since only the session cookie goes with a sign-out (the CSRF
 * cookie stays), which is what `GET /auth/session` would answer.
 */
export function signedOutSession(session: Session): Session {
  return { ...session, signed_in: false, user: null, workspaces: [] };
}

/**
 * The state after a reload of the session failed. A reload runs while the page is in use (a name
 * saved, a workspace created, a token refused), so a failure that may pass (no answer, a 5xx)
 * keeps the last session and the page on it, with the failure to show beside it: dropping it would
 * throw away open dialogs and unsaved edits over a server that is briefly away. A 401 is the
 * server saying the session has ended, which is no reason to keep it: the page goes to sign-in.
 * With no session ever loaded, there is nothing to keep: the failure is the whole page.
 */
export function afterFailedReload(state: SessionState, error: unknown): SessionState {
  if (state.session !== undefined && error instanceof APIError && error.status === 401) return { session: signedOutSession(state.session), failure: undefined };
  return { session: state.session, failure: error };
}
