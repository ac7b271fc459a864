import { useAction } from "../api/use-request";
import { signUp, type Session } from "../auth/auth-api";
import { problemsAt, readForm } from "../lib/forms";
import { ErrorState } from "./error-state";
import { Field } from "./field";
import { useFieldMarks } from "./use-field-marks";

type SignUpField = "name" | "email" | "password" | "workspace_name";

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
  // A field changed since the refusal is no longer what was refused: its problems go.
  const changed = useFieldMarks<SignUpField>(action.error);
  const problems = (field: SignUpField) => (changed.has(field) ? [] : problemsAt(action.error, `/${field}`));
  const shownAtFields = ["/name", "/email", "/password", ...(withWorkspace ? ["/workspace_name"] : [])];
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
      <Field label="Your name" errors={problems("name")}>
        <input name="name" autoComplete="name" maxLength={100} onChange={() => changed.mark("name")} />
      </Field>
      <Field label="Email" hint={invitation ? "The invitation is for this address." : undefined} errors={problems("email")}>
        <input
          name="email"
          type="email"
          required
          autoComplete="username"
          defaultValue={invitation?.email}
          readOnly={invitation !== undefined}
          onChange={() => changed.mark("email")}
        />
      </Field>
      <Field label="Password" hint="10 to 200 characters." errors={problems("password")}>
        <input name="password" type="password" required minLength={10} maxLength={200} autoComplete="new-password" onChange={() => changed.mark("password")} />
      </Field>
      {withWorkspace && (
        <Field label="Workspace name" hint="Your company or project. You can rename it later." errors={problems("workspace_name")}>
          <input name="workspace_name" maxLength={100} placeholder="My workspace" autoComplete="organization" onChange={() => changed.mark("workspace_name")} />
        </Field>
      )}
      {/* In words for a person (no code or request id, unless the server failed); a field's problem beside it. */}
      {action.error !== undefined && (
        <ErrorState error={action.error} title="Could not create your account" compact inWords shownAtFields={shownAtFields} />
      )}
      <button type="submit" className="button button--primary button--block" disabled={action.pending}>
        {action.pending ? "Creating your account…" : "Create account"}
      </button>
    </form>
  );
}
