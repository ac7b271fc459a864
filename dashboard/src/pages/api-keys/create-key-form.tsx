import type { ApiKeyWithSecret, CreateApiKeyParams } from "mailroom";
import { useApi } from "../../api/api-context";
import { useAction } from "../../api/use-request";
import { ActionButton, DialogActions } from "../../components/action-button";
import { ErrorState } from "../../components/error-state";
import { Field } from "../../components/field";
import { isEnvironment, type Environment } from "../../lib/environment";
import { dateInputToInstant, dateInputValue } from "../../lib/format";
import { readForm } from "../../lib/forms";

/** createApiKey: name, environment, permission, optional expiry. */
export function CreateKeyForm({ onCreated, onCancel }: { onCreated: (key: ApiKeyWithSecret) => void; onCancel: () => void }) {
  const api = useApi();
  // A key is created in the environment of the credential that creates it (the contract's
  // ApiKeys tag), so a key for the other environment needs that environment's token.
  const create = useAction(async (environment: Environment, params: CreateApiKeyParams) => {
    onCreated(await api.call((mr) => mr.apiKeys.create(params), environment));
  });
  return (
    <form
      onSubmit={(event) => {
        const form = readForm(event);
        const environmentValue = form.text("environment");
        const expiresAt = dateInputToInstant(form.text("expires_on"));
        const permission = form.text("permission") === "sending_access" ? "sending_access" : "full_access";
        void create.run(isEnvironment(environmentValue) ? environmentValue : api.environment, {
          name: form.text("name"),
          permission,
          ...(expiresAt ? { expires_at: expiresAt } : {}),
        });
      }}
    >
      <div className="dialog__body form">
        <Field label="Name" hint="What the key is for, e.g. “Production web app”.">
          <input name="name" required maxLength={100} autoComplete="off" />
        </Field>
        <Field label="Environment" hint="Live keys send real email; sandbox keys never deliver.">
          <select name="environment" defaultValue={api.environment}>
            <option value="sandbox">Sandbox</option>
            <option value="live">Live</option>
          </select>
        </Field>
        <Field label="Permission">
          <select name="permission" defaultValue="full_access">
            <option value="full_access">Full access</option>
            <option value="sending_access">Sending access (send messages only)</option>
          </select>
        </Field>
        <Field label="Expires on (optional)" hint="Leave empty for a key that does not expire.">
          <input name="expires_on" type="date" min={dateInputValue(1)} />
        </Field>
      </div>
      {create.error !== undefined && <ErrorState error={create.error} title="Could not create the key" compact />}
      <DialogActions onCancel={onCancel} pending={create.pending}>
        <ActionButton label="Create key" pendingLabel="Creating…" pending={create.pending} />
      </DialogActions>
    </form>
  );
}
