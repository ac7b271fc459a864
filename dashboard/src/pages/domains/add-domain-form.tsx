import type { Domain } from "mailroom";
import { useApi } from "../../api/api-context";
import { useAction } from "../../api/use-request";
import { ActionButton, DialogActions } from "../../components/action-button";
import { ErrorState } from "../../components/error-state";
import { Field } from "../../components/field";
import { useFieldMarks } from "../../components/use-field-marks";
import { problemsAt, readForm } from "../../lib/forms";

type DomainField = "name" | "return_path_subdomain";
const DOMAIN_FIELD_POINTERS = ["/name", "/return_path_subdomain"];

/** createDomain: the domain's name and, optionally, the label of its return-path subdomain. */
export function AddDomainForm({ onAdded, onCancel }: { onAdded: (domain: Domain) => void; onCancel: () => void }) {
  const api = useApi();
  const add = useAction(async (name: string, returnPathSubdomain: string) => {
    onAdded(await api.call((mr) => mr.domains.create({ name, ...(returnPathSubdomain ? { return_path_subdomain: returnPathSubdomain } : {}) })));
  });
  // A field changed since the refusal is no longer what was refused: its problems go.
  const changed = useFieldMarks<DomainField>(add.error);
  const problems = (field: DomainField) => (changed.has(field) ? [] : problemsAt(add.error, `/${field}`));
  return (
    <form
      onSubmit={(event) => {
        const form = readForm(event);
        void add.run(form.text("name"), form.text("return_path_subdomain"));
      }}
    >
      <div className="dialog__body form">
        <p>
          The domain you send from: <code>acme.example</code> for <code>hello@acme.example</code>. Mailroom generates its DKIM keys and lists the DNS
          records to publish. It serves both live and sandbox.
        </p>
        <Field label="Domain" errors={problems("name")}>
          <input name="name" onChange={() => changed.mark("name")} required minLength={3} maxLength={253} placeholder="acme.example" autoComplete="off" spellCheck={false} />
        </Field>
        <Field
          label="Return-path subdomain (optional)"
          hint={
            <>
              Where bounces come back: <code>bounces</code> (the default) gives <code>bounces.acme.example</code>. Change it only if that name is
              taken.
            </>
          }
          errors={problems("return_path_subdomain")}
        >
          <input name="return_path_subdomain" onChange={() => changed.mark("return_path_subdomain")} maxLength={63} placeholder="bounces" autoComplete="off" spellCheck={false} />
        </Field>
      </div>
      {add.error !== undefined && <ErrorState error={add.error} title="Could not add the domain" compact shownAtFields={DOMAIN_FIELD_POINTERS} />}
      <DialogActions onCancel={onCancel} pending={add.pending}>
        <ActionButton label="Add domain" pendingLabel="Adding…" pending={add.pending} />
      </DialogActions>
    </form>
  );
}
