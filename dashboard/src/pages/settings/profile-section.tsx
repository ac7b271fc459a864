import { useState } from "react";
import { useApi } from "../../api/api-context";
import { useAction } from "../../api/use-request";
import { useSession } from "../../auth/session";
import { ActionButton } from "../../components/action-button";
import { Card } from "../../components/card";
import { ErrorState } from "../../components/error-state";
import { Field } from "../../components/field";
import { problemsAt, readForm } from "../../lib/forms";

/** The signed-in person's own name (updateAccount), as every workspace they belong to shows it. */
export function ProfileSection({ onNameSaved }: { onNameSaved: () => void }) {
  const api = useApi();
  const { session, refresh } = useSession();
  const [saved, setSaved] = useState(false);
  const save = useAction(async (name: string) => {
    setSaved(false);
    await api.call((mr) => mr.accounts.update({ name }));
    // The top bar shows the name from the session; the members list on this page has its own copy.
    void refresh();
    onNameSaved();
    setSaved(true);
  });
  return (
    <Card title="Your account">
      <form
        className="form form--narrow"
        onSubmit={(event) => {
          const form = readForm(event);
          void save.run(form.raw("name"));
        }}
      >
        <Field label="Email">
          <input name="email" type="email" value={session.user?.email ?? ""} readOnly />
        </Field>
        <Field label="Your name" hint="Shown to the members of every workspace you belong to. Leave it empty for none." errors={problemsAt(save.error, "/name")}>
          <input name="name" defaultValue={session.user?.name ?? ""} maxLength={100} autoComplete="name" />
        </Field>
        {save.error !== undefined && <ErrorState error={save.error} title="Could not save your name" compact shownAtFields={["/name"]} />}
        <div className="form__actions">
          <ActionButton label="Save name" pendingLabel="Saving…" pending={save.pending} />
          <span role="status" className="form__status">
            {saved ? "Saved." : null}
          </span>
        </div>
      </form>
    </Card>
  );
}
