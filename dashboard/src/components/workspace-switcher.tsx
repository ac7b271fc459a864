import { useId, useState } from "react";
import { useApi, useWorkspace } from "../api/api-context";
import { useAction } from "../api/use-request";
import { useSession } from "../auth/session";
import { readForm } from "../lib/forms";
import { retrySafeRequests } from "../lib/idempotent-attempt";
import { ActionButton, DialogActions } from "./action-button";
import { Dialog } from "./dialog";
import { ErrorState } from "./error-state";
import { Field } from "./field";

/** Chooses the workspace every page shows, from the session's memberships; creates new ones. */
export function WorkspaceSwitcher() {
  const { workspace, workspaces, setWorkspace } = useWorkspace();
  const [creating, setCreating] = useState(false);
  const selectId = useId();
  return (
    <div className="workspace-switcher">
      <label htmlFor={selectId} className="visually-hidden">
        Workspace
      </label>
      <select id={selectId} value={workspace.id} onChange={(event) => setWorkspace(event.target.value)}>
        {workspaces.map((membership) => (
          <option key={membership.id} value={membership.id}>
            {membership.name}
          </option>
        ))}
      </select>
      <button type="button" className="button button--small" onClick={() => setCreating(true)}>
        New workspace
      </button>
      <Dialog open={creating} title="Create workspace" onClose={() => setCreating(false)}>
        <CreateWorkspaceForm onDone={() => setCreating(false)} />
      </Dialog>
    </div>
  );
}

function CreateWorkspaceForm({ onDone }: { onDone: () => void }) {
  const api = useApi();
  const { setWorkspace } = useWorkspace();
  const { refresh } = useSession();
  // Keyed by the scope of the token it is sent with (the workspace and environment shown), as the
  // server keeps Idempotency-Keys: after a switch, a press is a new request there.
  const requests = retrySafeRequests("createWorkspace", api);
  const create = useAction(async (name: string) => {
    const membership = await requests.send({ name }, (idempotencyKey) => api.call((mr) => mr.accounts.createWorkspace({ name }, { idempotencyKey })));
    // The new workspace reaches the switcher through the session's list of memberships, so it is
    // chosen once the page holds a session that lists it: chosen before, it would not be found and
    // the page would fall back to the first workspace meanwhile, loading its pages there. Should the
    // reload fail, the page says so above itself and the new workspace is listed after its Retry.
    const session = await refresh();
    if (session?.workspaces.some((workspace) => workspace.id === membership.id)) setWorkspace(membership.id);
    onDone();
  });
  return (
    <form onSubmit={(event) => void create.run(readForm(event).text("name"))}>
      <div className="dialog__body">
        <p>You will be its owner. Each workspace has its own messages, API keys and members, in live and in the sandbox.</p>
        <Field label="Workspace name">
          <input name="name" required maxLength={100} autoComplete="organization" />
        </Field>
      </div>
      {create.error !== undefined && <ErrorState error={create.error} compact />}
      <DialogActions onCancel={onDone} pending={create.pending}>
        <ActionButton label="Create workspace" pendingLabel="Creating…" pending={create.pending} />
      </DialogActions>
    </form>
  );
}
