import { useState } from "react";
import { tokens } from "../../api/client";
import { useAction } from "../../api/use-request";
import { changePassword } from "../../auth/auth-api";
import { ActionButton } from "../../components/action-button";
import { Card } from "../../components/card";
import { ErrorState } from "../../components/error-state";
import { Field } from "../../components/field";
import { readForm } from "../../lib/forms";

/** POST /auth/password: signs out the user's other sessions and gives this page a new one. */
export function PasswordSection() {
  const [message, setMessage] = useState<string | null>(null);
  const change = useAction(async (current: string, next: string, confirmation: string, form: HTMLFormElement) => {
    setMessage(null);
    if (next !== confirmation) throw new Error("The new password and its confirmation differ.");
    await changePassword(current, next);
    // The server replaced this session, revoking its access tokens; the next call exchanges a
    // new one from the new session.
    tokens.clear();
    form.reset();
    setMessage("Password changed. Your other sessions were signed out.");
  });
  return (
    <Card title="Password">
      <form
        className="form form--narrow"
        onSubmit={(event) => {
          const form = readForm(event);
          void change.run(form.raw("current_password"), form.raw("new_password"), form.raw("confirm_password"), event.currentTarget);
        }}
      >
        <Field label="Current password">
          <input name="current_password" type="password" required autoComplete="current-password" />
        </Field>
        <Field label="New password" hint="10 to 200 characters.">
          <input name="new_password" type="password" required minLength={10} maxLength={200} autoComplete="new-password" />
        </Field>
        <Field label="Confirm new password">
          <input name="confirm_password" type="password" required minLength={10} maxLength={200} autoComplete="new-password" />
        </Field>
        {change.error !== undefined && <ErrorState error={change.error} title="Could not change the password" compact inWords />}
        <div className="form__actions">
          <ActionButton label="Change password" pendingLabel="Changing…" pending={change.pending} />
          <span role="status" className="form__status">
            {message}
          </span>
        </div>
      </form>
    </Card>
  );
}
