import type { Suppression } from "mailroom";
import { useApi } from "../../api/api-context";
import { useAction } from "../../api/use-request";
import { ActionButton, DialogActions } from "../../components/action-button";
import { ErrorState } from "../../components/error-state";
import { Field } from "../../components/field";
import { readForm } from "../../lib/forms";
import { ENVIRONMENT_LABELS } from "../../lib/environment";
import { formatDateTime } from "../../lib/format";
import { isAddableReason, reasonLabel, type AddableReason } from "../../lib/suppressions";
import { ReasonSelect } from "./reason-select";

/**
 * What adding an address came to: its suppression, and whether it was already one (the API answers
 * 200 rather than 201, with the suppression as it was: the reason and note given are not applied).
 */
export interface AddedSuppression {
  suppression: Suppression;
  alreadySuppressed: boolean;
}

/** createSuppression: an address, why, and a note. Hard bounces are only recorded by Mailroom. */
export function AddSuppressionForm({ onAdded, onCancel }: { onAdded: (outcome: AddedSuppression) => void; onCancel: () => void }) {
  const api = useApi();
  const add = useAction(async (email: string, reason: AddableReason, detail: string) => {
    const { data, response } = await api.call((mr) => mr.suppressions.create({ email, reason, ...(detail ? { detail } : {}) }).withResponse());
    onAdded({ suppression: data, alreadySuppressed: response.status === 200 });
  });
  return (
    <form
      onSubmit={(event) => {
        const form = readForm(event);
        const reason = form.text("reason");
        void add.run(form.text("email"), isAddableReason(reason) ? reason : "manual", form.text("detail"));
      }}
    >
      <div className="dialog__body form">
        <p>
          Messages from the {api.environment} environment will skip this address: its recipient is marked <code>suppressed</code> while the
          message's other recipients get it.
        </p>
        <Field label="Email address">
          <input name="email" type="email" required minLength={3} maxLength={320} autoComplete="off" />
        </Field>
        <Field label="Reason">
          <ReasonSelect />
        </Field>
        <Field label="Note (optional)" hint="For your colleagues: why, and who asked. At most 500 characters.">
          <textarea name="detail" rows={3} maxLength={500} />
        </Field>
      </div>
      {add.error !== undefined && <ErrorState error={add.error} title="Could not add the address" compact />}
      <DialogActions onCancel={onCancel} pending={add.pending}>
        <ActionButton label="Suppress address" pendingLabel="Adding…" pending={add.pending} />
      </DialogActions>
    </form>
  );
}

/** The line that says what adding did, or that the address was already suppressed and is unchanged. */
export function AddedNotice({ added: { suppression, alreadySuppressed } }: { added: AddedSuppression }) {
  const environment = ENVIRONMENT_LABELS[suppression.environment].toLowerCase();
  const why = `(${reasonLabel(suppression.reason)}, since ${formatDateTime(suppression.created_at)})`;
  return (
    <p className={alreadySuppressed ? "notice" : "notice notice--success"} role="status" data-testid="suppression-added">
      <strong>{suppression.email}</strong>
      {alreadySuppressed ? ` was already suppressed in ${environment} ${why}: nothing was changed.` : ` is suppressed in ${environment} ${why}.`}
    </p>
  );
}
