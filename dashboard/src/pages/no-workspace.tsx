import { useAction } from "../api/use-request";
import { useSession } from "../auth/session";
import { AuthLayout } from "../components/auth-layout";
import { ErrorState } from "../components/error-state";

/**
 * Signed in, but a member of no workspace (removed from the last one). A token is always scoped
 * to a workspace, so nothing else can be shown: an invitation link is the way back in.
 */
export function NoWorkspacePage() {
  const { session, signOut } = useSession();
  const action = useAction(signOut);
  return (
    <AuthLayout title="No workspace">
      <p>
        You are signed in as {session.user?.email}, but you are not a member of any workspace. Ask an admin of your workspace for an invitation link.
      </p>
      {action.error !== undefined && <ErrorState error={action.error} title="Could not sign out" compact />}
      <button type="button" className="button button--block" onClick={() => void action.run()} disabled={action.pending}>
        Sign out
      </button>
    </AuthLayout>
  );
}
