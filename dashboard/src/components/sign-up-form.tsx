import { useAction } from "../api/use-request";
import { signUp, type Session } from "../auth/auth-api";
import { readForm } from "../lib/forms";
import { ErrorState } from "./error-state";
import { Field } from "./field";

interface SignUpFormProps {
  /** Ask for the first workspace's name (a fresh install, or open sign-up). */
  withWorkspace?: boolean;
  /** Sign up through an invitation: its token, and the address it was sent to. */
  invitation?: { token: string; email: string };
  onSignedUp: (session: Session) => void;
}

/** The account fields of POST /auth/sign-up, shared by the sign-up and invitation pages. */
export function SignUpForm({ withWorkspace = false, invitation, onSignedUp }: SignUpFormProps) {
  const action = useAction(async (params: Parameters<typeof signUp>[0]) => onSignedUp(await signUp(params)));
  return (
    <form
      className="form"
      onSubmit={(event) => {
        const form = readForm(event);
        const name = form.text("name");
        const workspaceName = form.text("workspace_name");
        void action.run({
          email: invitation?.email ?? form.text("email"),
          password: form.raw("password"),
          ...(name ? { name } : {}),
          ...(withWorkspace && workspaceName ? { workspace_name: workspaceName } : {}),
          ...(invitation ? { invitation_token: invitation.token } : {}),
        });
      }}
    >
      <Field label="Your name">
        <input name="name" autoComplete="name" maxLength={100} />
      </Field>
      <Field label="Email" hint={invitation ? "The invitation is for this address." : undefined}>
        <input name="email" type="email" required autoComplete="username" defaultValue={invitation?.email} readOnly={invitation !== undefined} />
      </Field>
      <Field label="Password" hint="10 to 200 characters.">
        <input name="password" type="password" required minLength={10} maxLength={200} autoComplete="new-password" />
      </Field>
      {withWorkspace && (
        <Field label="Workspace name" hint="Your company or project. You can rename it later.">
          <input name="workspace_name" maxLength={100} placeholder="My workspace" autoComplete="organization" />
        </Field>
      )}
      {action.error !== undefined && <ErrorState error={action.error} title="Could not create your account" compact />}
      <button type="submit" className="button button--primary button--block" disabled={action.pending}>
        {action.pending ? "Creating your account…" : "Create account"}
      </button>
    </form>
  );
}
