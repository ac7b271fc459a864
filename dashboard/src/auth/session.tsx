import { createContext, use, useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { tokens } from "../api/client";
import { ErrorState } from "../components/error-state";
import { Loading } from "../components/loading";
import { afterFailedReload, signedOutSession, type SessionState } from "../lib/session-refresh";
import { getSession, signOut as signOutRoute, type Session } from "./auth-api";

export interface SessionContextValue {
  session: Session;
  /** Takes the session an /auth route answered (sign-in, sign-up, accepting an invitation). */
  setSession: (session: Session) => void;
  /**
   * Asks the server again, e.g. after a workspace was created or a token was refused. Resolves
   * with the server's answer once the page holds it (undefined when the reload failed: the page
   * then keeps the session it had and says so), and never rejects.
   */
  refresh: () => Promise<Session | undefined>;
  signOut: () => Promise<void>;
  /** The session ended by "Sign out" (not expiry): sign-in then starts afresh, with no `next`. */
  signedOutByUser: boolean;
}

const SessionContext = createContext<SessionContextValue | null>(null);

/**
 * The signed-in session, loaded once at start and again on `refresh`. A reload that fails keeps the
 * session the page had (lib/session-refresh.ts) and shows a notice with a Retry above the page;
 * only while there has never been a session is the failure the whole page.
 */
export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<SessionState>({ session: undefined, failure: undefined });
  const [signedOutByUser, setSignedOutByUser] = useState(false);
  // Reloads can overlap (several calls refused at once); only the latest one's answer is taken,
  // and a session an /auth route gave supersedes the reloads begun before it.
  const latest = useRef(0);

  const refresh = useCallback(async (): Promise<Session | undefined> => {
    const attempt = ++latest.current;
    // Retrying after a failure with nothing to keep shows the loading page again.
    setState((current) => (current.session === undefined && current.failure !== undefined ? { session: undefined, failure: undefined } : current));
    try {
      const session = await getSession();
      if (attempt === latest.current) setState({ session, failure: undefined });
      return session;
    } catch (error) {
      if (attempt === latest.current) setState((current) => afterFailedReload(current, error));
      return undefined;
    }
  }, []);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  const setSession = useCallback((session: Session) => {
    latest.current += 1;
    setSignedOutByUser(false);
    setState({ session, failure: undefined });
  }, []);
  const signOut = useCallback(async () => {
    await signOutRoute();
    tokens.clear();
    // Signed out is known from the route's answer: no reload (which may fail) is needed to leave.
    latest.current += 1;
    setSignedOutByUser(true);
    setState((current) => ({ session: current.session && signedOutSession(current.session), failure: undefined }));
  }, []);
  const { session, failure } = state;
  const value = useMemo(
    () => (session ? { session, setSession, refresh, signOut, signedOutByUser } : null),
    [session, setSession, refresh, signOut, signedOutByUser],
  );
  const retry = useCallback(() => void refresh(), [refresh]);

  if (!value) {
    if (failure !== undefined) return <ErrorState error={failure} title="Could not load your session" onRetry={retry} />;
    return <Loading label="Loading Mailroom…" fullPage />;
  }
  return (
    <SessionContext value={value}>
      {/* Kept in its place in the tree whether shown or not, so the page below never remounts. */}
      {failure !== undefined && (
        <div className="session-notice">
          <ErrorState error={failure} title="Could not refresh your session" compact onRetry={retry} />
        </div>
      )}
      {children}
    </SessionContext>
  );
}

export function useSession(): SessionContextValue {
  const value = use(SessionContext);
  if (!value) throw new Error("useSession() needs a <SessionProvider> above it.");
  return value;
}
