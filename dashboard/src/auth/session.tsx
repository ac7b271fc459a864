import { createContext, use, useCallback, useMemo, useState, type ReactNode } from "react";
import { tokens } from "../api/client";
import { useRequest } from "../api/use-request";
import { ErrorState } from "../components/error-state";
import { Loading } from "../components/loading";
import { getSession, signOut as signOutRoute, type Session } from "./auth-api";

export interface SessionContextValue {
  session: Session;
  /** Takes the session an /auth route answered (sign-in, sign-up, accepting an invitation). */
  setSession: (session: Session) => void;
  /** Asks the server again, e.g. after a workspace was created or a token was refused. */
  refresh: () => void;
  signOut: () => Promise<void>;
  /** The session ended by "Sign out" (not expiry): sign-in then starts afresh, with no `next`. */
  signedOutByUser: boolean;
}

const SessionContext = createContext<SessionContextValue | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const request = useRequest(() => getSession(), []);
  const { update, reload } = request;
  const [signedOutByUser, setSignedOutByUser] = useState(false);
  const setSession = useCallback(
    (session: Session) => {
      setSignedOutByUser(false);
      update(() => session);
    },
    [update],
  );
  const signOut = useCallback(async () => {
    await signOutRoute();
    tokens.clear();
    setSignedOutByUser(true);
    reload();
  }, [reload]);
  const session = request.data;
  const value = useMemo(
    () => (session ? { session, setSession, refresh: reload, signOut, signedOutByUser } : null),
    [session, setSession, reload, signOut, signedOutByUser],
  );

  if (!value) {
    if (request.error) return <ErrorState error={request.error} title="Could not load your session" onRetry={reload} />;
    return <Loading label="Loading Mailroom…" fullPage />;
  }
  return <SessionContext value={value}>{children}</SessionContext>;
}

export function useSession(): SessionContextValue {
  const value = use(SessionContext);
  if (!value) throw new Error("useSession() needs a <SessionProvider> above it.");
  return value;
}
