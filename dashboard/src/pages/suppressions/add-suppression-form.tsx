import type { Suppression } from "mailroom";
import { useApi } from "../../api/api-context";
import { useAction } from "../../api/use-request";
import { ActionButton, DialogActions } from "../../components/action-button";
import { ErrorState } from "../../components/error-state";
import { Field } from "../../components/field";
import { readForm } from "../../lib/forms";
import { isAddableReason, type AddableReason } from "../../lib/suppressions";
import { ReasonSelect } from "./reason-select";

/** createSuppression: an address, why, and a note. Hard bounces are only recorded by Mailroom. */
export function AddSuppressionForm({ onAdded, onCancel }: { onAdded: (suppression: Suppression) => void; onCancel: () => void }) {
  const api = useApi();
  const add = useAction(async (email: string, reason: AddableReason, detail: string) => {
    onAdded(await api.call((mr) => mr.suppressions.create({ email, reason, ...(detail ? { detail } : {}) })));
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
