import { Link, useSearch } from "wouter";
import { useAction } from "../api/use-request";
import { signIn } from "../auth/auth-api";
import { useSession } from "../auth/session";
import { AuthLayout } from "../components/auth-layout";
import { ErrorState } from "../components/error-state";
import { Field } from "../components/field";
import { readForm } from "../lib/forms";

export function SignInPage() {
  const { session, setSession } = useSession();
  const search = useSearch();
  // Once signed in, the router sends the page on to `next` (see app.tsx).
  const action = useAction(async (email: string, password: string) => setSession(await signIn(email, password)));
  return (
    <AuthLayout title="Sign in to Mailroom">
      <form
        className="form"
        onSubmit={(event) => {
          const form = readForm(event);
          void action.run(form.text("email"), form.raw("password"));
        }}
      >
        <Field label="Email">
          <input name="email" type="email" required autoComplete="username" autoFocus />
        </Field>
        <Field label="Password">
          <input name="password" type="password" required autoComplete="current-password" />
        </Field>
        {action.error !== undefined && <ErrorState error={action.error} title="Could not sign in" compact inWords />}
        <button type="submit" className="button button--primary button--block" disabled={action.pending}>
          {action.pending ? "Signing in…" : "Sign in"}
        </button>
      </form>
      {session.signup !== "invitation_only" && (
        <p className="auth__footer">
          No account yet? <Link href={`/sign-up${search ? `?${search}` : ""}`}>Create an account</Link>
        </p>
      )}
    </AuthLayout>
  );
}
