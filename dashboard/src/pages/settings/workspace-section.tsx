import { useState } from "react";
import { useApi } from "../../api/api-context";
import { useAction, useRequest } from "../../api/use-request";
import { useSession } from "../../auth/session";
import { ActionButton } from "../../components/action-button";
import { Card } from "../../components/card";
import { ErrorState } from "../../components/error-state";
import { Field } from "../../components/field";
import { Loaded } from "../../components/loaded";
import { readForm } from "../../lib/forms";

/** The workspace's name and default sender (getWorkspace, updateWorkspace). */
export function WorkspaceSection() {
  const api = useApi();
  const { refresh } = useSession();
  const workspace = useRequest((signal) => api.call((mr) => mr.workspace.get({ signal })), [api]);
  const [saved, setSaved] = useState(false);
  const save = useAction(async (name: string, defaultFrom: string) => {
    setSaved(false);
    const updated = await api.call((mr) => mr.workspace.update({ name, default_from: defaultFrom === "" ? null : defaultFrom }));
    workspace.update(() => updated);
    setSaved(true);
    // The name is also in the session's list of workspaces, which the top bar shows.
    refresh();
  });

  return (
    <Card title="Workspace">
      <Loaded state={workspace} what="the workspace" compact>
        {(data) => (
          <form
            className="form form--narrow"
            onSubmit={(event) => {
              const form = readForm(event);
              void save.run(form.text("name"), form.text("default_from"));
            }}
          >
            <Field label="Workspace name">
              <input name="name" required maxLength={100} defaultValue={data.name} />
            </Field>
            <Field label="Default sender" hint="Used when a message has no “from”. Leave empty to require one on every message.">
              <input name="default_from" maxLength={512} defaultValue={data.default_from ?? ""} placeholder="Acme <hello@acme.example>" />
            </Field>
            {save.error !== undefined && <ErrorState error={save.error} title="Could not save the workspace" compact />}
            <div className="form__actions">
              <ActionButton label="Save changes" pendingLabel="Saving…" pending={save.pending} />
              <span role="status" className="form__status">
                {saved && !save.pending ? "Saved." : ""}
              </span>
            </div>
          </form>
        )}
      </Loaded>
    </Card>
  );
}
