import { APIError } from "mailroom";
import { Link, useLocation } from "wouter";
import { useAction, useRequest } from "../api/use-request";
import { acceptInvitation, getInvitation, type InvitationPreview, type Session } from "../auth/auth-api";
import { signInPath } from "../auth/next-path";
import { useSession } from "../auth/session";
import { AuthLayout } from "../components/auth-layout";
import { ErrorState } from "../components/error-state";
import { Loading } from "../components/loading";
import { SignUpForm } from "../components/sign-up-form";
import { formatDate } from "../lib/format";
import { saveWorkspaceId } from "../lib/preferences";

/**
 * The workspace just joined, picked out of the new session by name: the newest membership of
 * that name, since /auth answers the session rather than the membership.
 */
function joinedWorkspace(session: Session, invitation: InvitationPreview): string | undefined {
  const named = session.workspaces.filter((membership) => membership.name === invitation.workspace_name);
  return named.sort((a, b) => b.joined_at.localeCompare(a.joined_at))[0]?.id;
}

/** `/invitations/:token`: what the invitation offers, then accept it (signed in) or sign up with it. */
export function InvitationPage({ token }: { token: string }) {
  const { session, setSession } = useSession();
  const [, navigate] = useLocation();
  const invitation = useRequest(() => getInvitation(token), [token]);

  // Rendered outside the signed-in shell, so the shell mounts afresh on "/" and picks up the
  // workspace chosen here.
  const enter = (next: Session, preview: InvitationPreview) => {
    const workspaceId = joinedWorkspace(next, preview);
    if (workspaceId) saveWorkspaceId(workspaceId);
    setSession(next);
    navigate("/", { replace: true });
  };
  const accept = useAction(async (preview: InvitationPreview) => enter(await acceptInvitation(token), preview));

  if (invitation.loading) {
    return (
      <AuthLayout title="Invitation">
        <Loading label="Loading the invitation…" />
      </AuthLayout>
    );
  }
  if (!invitation.data) {
    const gone = invitation.error instanceof APIError && invitation.error.status === 404;
    return (
      <AuthLayout title={gone ? "This invitation is no longer valid" : "Invitation"}>
        {gone ? (
          <p>The link is wrong, has expired, was revoked or was already used. Ask the person who invited you for a new one.</p>
        ) : (
          <ErrorState error={invitation.error} title="Could not load the invitation" onRetry={invitation.reload} />
        )}
      </AuthLayout>
    );
  }

  const preview = invitation.data;
  const summary = (
    <p>
      <strong>{preview.email}</strong> is invited to join <strong>{preview.workspace_name}</strong> as <strong>{preview.role}</strong>. The invitation
      expires on {formatDate(preview.expires_at)}.
    </p>
  );

  if (session.signed_in) {
    const otherAddress = session.user && session.user.email.toLowerCase() !== preview.email.toLowerCase();
    return (
      <AuthLayout title={`Join ${preview.workspace_name}`}>
        {summary}
        {otherAddress && (
          <p className="notice notice--warning">
            You are signed in as {session.user?.email}, but the invitation is for {preview.email}. Sign in with that address to accept it.
          </p>
        )}
        {accept.error !== undefined && <ErrorState error={accept.error} title="Could not accept the invitation" compact inWords />}
        <button type="button" className="button button--primary button--block" disabled={accept.pending} onClick={() => void accept.run(preview)}>
          {accept.pending ? "Joining…" : "Accept invitation"}
        </button>
        <p className="auth__footer">
          <Link href="/">Not now</Link>
        </p>
      </AuthLayout>
    );
  }

  return (
    <AuthLayout title={`Join ${preview.workspace_name}`}>
      {summary}
      <h2 className="auth__subtitle">Create your account</h2>
      <SignUpForm invitation={{ token, email: preview.email }} onSignedUp={(next) => enter(next, preview)} />
      <p className="auth__footer">
        Already have an account? <Link href={signInPath(`/invitations/${token}`)}>Sign in to accept</Link>
      </p>
    </AuthLayout>
  );
}
