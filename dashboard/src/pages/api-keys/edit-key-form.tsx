import { useState } from "react";
import type { ApiKey, ApiKeyRestrictions, UpdateApiKeyParams } from "mailroom";
import { useApi } from "../../api/api-context";
import { useAction } from "../../api/use-request";
import { ActionButton, DialogActions } from "../../components/action-button";
import { ErrorState } from "../../components/error-state";
import { Field } from "../../components/field";
import { useFieldMarks } from "../../components/use-field-marks";
import { problemsAt, readForm } from "../../lib/forms";
import { readRestrictionFields, restrictionPointers, RestrictionFields } from "./restriction-fields";

/**
 * updateApiKey: the key's name and all three restrictions, each sent (an empty field as null,
 * lifting that limit), so that what the form shows is what the key has. Its secret, permission
 * and expiry stay.
 */
export function EditKeyForm({ apiKey, onSaved, onCancel }: { apiKey: ApiKey; onSaved: (key: ApiKey) => void; onCancel: () => void }) {
  const api = useApi();
  const [sent, setSent] = useState<ApiKeyRestrictions>();
  const save = useAction(async (params: UpdateApiKeyParams) => {
    onSaved(await api.call((mr) => mr.apiKeys.update(apiKey.id, params)));
  });
  const sendingAccess = apiKey.permission === "sending_access";
  // The name changed since the refusal is no longer what was refused: its problems go.
  const changed = useFieldMarks<"name">(save.error);
  const nameProblems = changed.has("name") ? [] : problemsAt(save.error, "/name");
  return (
    <form
      onSubmit={(event) => {
        const form = readForm(event);
        const restrictions = readRestrictionFields(form);
        setSent(restrictions);
        void save.run({ name: form.text("name"), restrictions });
      }}
    >
      <div className="dialog__body form">
        <Field label="Name" hint="What the key is for, e.g. “Production web app”." errors={nameProblems}>
          <input name="name" required maxLength={100} defaultValue={apiKey.name} autoComplete="off" onChange={() => changed.mark("name")} />
        </Field>
        <RestrictionFields current={apiKey.restrictions} sendingAccess={sendingAccess} error={save.error} sent={sent} />
      </div>
      {/* Each problem once: those at a field shown beside it, only the others listed here. */}
      {save.error !== undefined && <ErrorState error={save.error} title="Could not save the key" compact shownAtFields={["/name", ...restrictionPointers(sendingAccess)]} />}
      <DialogActions onCancel={onCancel} pending={save.pending}>
        <ActionButton label="Save changes" pendingLabel="Saving…" pending={save.pending} />
      </DialogActions>
    </form>
  );
}
