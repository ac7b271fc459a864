import { Link, useSearch } from "wouter";
import type { Session } from "../auth/auth-api";
import { useSession } from "../auth/session";
import { AuthLayout } from "../components/auth-layout";
import { SignUpForm } from "../components/sign-up-form";

export function SignUpPage() {
  const { session, setSession } = useSession();
  const search = useSearch();
  const signInLink = <Link href={`/sign-in${search ? `?${search}` : ""}`}>Sign in</Link>;

  if (session.signup === "invitation_only") {
    return (
      <AuthLayout title="Sign-up needs an invitation">
        <p>This Mailroom server only accepts new accounts through an invitation. Ask an admin of your workspace for an invitation link.</p>
        <p className="auth__footer">Already have an account? {signInLink}</p>
      </AuthLayout>
    );
  }
  const firstUser = session.signup === "first_user";
  return (
    <AuthLayout
      title={firstUser ? "Set up Mailroom" : "Create your account"}
      description={
        firstUser ? "You are the first user of this server: create your account and your first workspace. You will be its owner." : undefined
      }
    >
      <SignUpForm withWorkspace onSignedUp={(next: Session) => setSession(next)} />
      {!firstUser && <p className="auth__footer">Already have an account? {signInLink}</p>}
    </AuthLayout>
  );
}
