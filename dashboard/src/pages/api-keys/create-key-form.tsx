import { useState } from "react";
import type { ApiKeyRestrictions, ApiKeyWithSecret, CreateApiKeyParams } from "mailroom";
import { useApi } from "../../api/api-context";
import { useAction } from "../../api/use-request";
import { ActionButton, DialogActions } from "../../components/action-button";
import { ErrorState } from "../../components/error-state";
import { Field } from "../../components/field";
import { useFieldMarks } from "../../components/use-field-marks";
import { givenRestrictions } from "../../lib/api-key-restrictions";
import { isEnvironment, type Environment } from "../../lib/environment";
import { dateInputToInstant, dateInputValue } from "../../lib/format";
import { problemsAt, readForm } from "../../lib/forms";
import { retrySafeRequests } from "../../lib/idempotent-attempt";
import { readRestrictionFields, restrictionPointers, RestrictionFields } from "./restriction-fields";

/** The fields besides the restrictions whose problems (a 422's, at `/<field>`) are shown beside them. */
type KeyField = "name" | "permission" | "expires_at";
const KEY_FIELD_POINTERS = ["/name", "/permission", "/expires_at"];

/**
 * createApiKey: name, environment, permission, optional expiry and restrictions. Below admin
 * (`fullAccess` false) only sending access is offered: the server refuses such a member a
 * full_access key (403 insufficient_role), which would give them every operation.
 */
export function CreateKeyForm({ fullAccess, onCreated, onCancel }: { fullAccess: boolean; onCreated: (key: ApiKeyWithSecret) => void; onCancel: () => void }) {
  const api = useApi();
  const [sendingAccess, setSendingAccess] = useState(!fullAccess);
  const [sent, setSent] = useState<ApiKeyRestrictions>();
  const requests = retrySafeRequests("createApiKey", api);
  // A key is created in the environment of the credential that creates it (the contract's
  // ApiKeys tag), so a key for the other environment needs that environment's token; the same
  // body for the other environment is another key, so the environment is part of the attempt.
  const create = useAction(async (environment: Environment, params: CreateApiKeyParams) => {
    const key = await requests.send({ environment, params }, (idempotencyKey) => api.call((mr) => mr.apiKeys.create(params, { idempotencyKey }), environment));
    onCreated(key);
  });
  // A field changed since the refusal is no longer what was refused: its problems go.
  const changed = useFieldMarks<KeyField>(create.error);
  const problems = (field: KeyField) => (changed.has(field) ? [] : problemsAt(create.error, `/${field}`));
  return (
    <form
      onSubmit={(event) => {
        const form = readForm(event);
        const environmentValue = form.text("environment");
        const expiresAt = dateInputToInstant(form.text("expires_on"));
        const restrictions = readRestrictionFields(form);
        const given = givenRestrictions(restrictions);
        setSent(restrictions);
        void create.run(isEnvironment(environmentValue) ? environmentValue : api.environment, {
          name: form.text("name"),
          permission: sendingAccess ? "sending_access" : "full_access",
          ...(expiresAt ? { expires_at: expiresAt } : {}),
          ...(given ? { restrictions: given } : {}),
        });
      }}
    >
      <div className="dialog__body form">
        <Field label="Name" hint="What the key is for, e.g. “Production web app”." errors={problems("name")}>
          <input name="name" required maxLength={100} autoComplete="off" onChange={() => changed.mark("name")} />
        </Field>
        <Field label="Environment" hint="Live keys send real email; sandbox keys never deliver.">
          <select name="environment" defaultValue={api.environment}>
            <option value="sandbox">Sandbox</option>
            <option value="live">Live</option>
          </select>
        </Field>
        <Field label="Permission" {...(fullAccess ? {} : { hint: "Only admins and owners create full access keys." })} errors={problems("permission")}>
          <select
            name="permission"
            defaultValue={fullAccess ? "full_access" : "sending_access"}
            onChange={(event) => {
              setSendingAccess(event.target.value === "sending_access");
              changed.mark("permission");
            }}
          >
            {fullAccess && <option value="full_access">Full access</option>}
            <option value="sending_access">Sending access (send messages only)</option>
          </select>
        </Field>
        <Field label="Expires on (optional)" hint="Leave empty for a key that does not expire." errors={problems("expires_at")}>
          <input name="expires_on" type="date" min={dateInputValue(1)} onChange={() => changed.mark("expires_at")} />
        </Field>
        <RestrictionFields sendingAccess={sendingAccess} error={create.error} sent={sent} />
      </div>
      {/* Each problem once: those at a field shown beside it, only the others listed here. */}
      {create.error !== undefined && (
        <ErrorState error={create.error} title="Could not create the key" compact shownAtFields={[...KEY_FIELD_POINTERS, ...restrictionPointers(sendingAccess)]} />
      )}
      <DialogActions onCancel={onCancel} pending={create.pending}>
        <ActionButton label="Create key" pendingLabel="Creating…" pending={create.pending} />
      </DialogActions>
    </form>
  );
}
