import type { ApiKeyRestrictions } from "mailroom";
import { Field } from "../../components/field";
import { useFieldMarks } from "../../components/use-field-marks";
import { isRestrictionField, listOrNull, listText, restrictionProblems, type RestrictionField } from "../../lib/api-key-restrictions";
import type { FormValues } from "../../lib/forms";

/** The fields below as the form gives them: a field left empty, or not shown, is null (no limit). */
export function readRestrictionFields(form: FormValues): ApiKeyRestrictions {
  return {
    allowed_ips: listOrNull(form.raw("allowed_ips")),
    sender_domains: listOrNull(form.raw("sender_domains")),
    recipient_domains: listOrNull(form.raw("recipient_domains")),
  };
}

/**
 * The pointers whose problems the fields below show beside themselves (an entry's too:
 * `/restrictions/allowed_ips/1`), for the form's error box to leave out; the domain fields only
 * when shown, so that a problem with a limit the form does not offer is still said in the box.
 */
export function restrictionPointers(sendingAccess: boolean): string[] {
  const shown: RestrictionField[] = sendingAccess ? ["allowed_ips", "sender_domains", "recipient_domains"] : ["allowed_ips"];
  return shown.map((field) => `/restrictions/${field}`);
}

interface RestrictionFieldsProps {
  /** The key's limits now, when it is being edited. */
  current?: ApiKeyRestrictions;
  /** Only a sending_access key takes domain limits: a full_access key could lift its own. */
  sendingAccess: boolean;
  /** The form's last failure and the restrictions it sent, for the server's problems beside each field. */
  error: unknown;
  sent: ApiKeyRestrictions | undefined;
}

/** A key's restrictions (createApiKey and updateApiKey): where it may be used from and, for sending, which domains. */
export function RestrictionFields({ current, sendingAccess, error, sent }: RestrictionFieldsProps) {
  // A field changed since the refusal is no longer what was refused: its problems go (the others
  // stay until their field changes too, or the next press answers anew).
  const changed = useFieldMarks<RestrictionField>(error);
  const problems = (field: RestrictionField) => (changed.has(field) ? [] : restrictionProblems(error, field, sent?.[field]));
  const text = (field: RestrictionField) => listText(current?.[field] ?? null);
  return (
    <fieldset
      className="fieldset-plain"
      onChange={(event) => {
        // The event of the textarea that changed, bubbled up to the fieldset.
        const { target } = event;
        if (target instanceof HTMLTextAreaElement && isRestrictionField(target.name)) changed.mark(target.name);
      }}
    >
      <legend>Restrictions (optional)</legend>
      <p className="field__hint">One a line, or separated by commas. Leave a field empty for no limit.</p>
      <Field label="Allowed IP addresses" hint="Addresses or CIDR ranges, IPv4 or IPv6, such as 203.0.113.0/24." errors={problems("allowed_ips")}>
        <textarea name="allowed_ips" rows={2} defaultValue={text("allowed_ips")} spellCheck={false} autoComplete="off" />
      </Field>
      {sendingAccess && (
        <>
          <Field label="Sender domains" hint="The key sends only from these domains, exactly: acme.example does not cover eu.acme.example." errors={problems("sender_domains")}>
            <textarea name="sender_domains" rows={2} defaultValue={text("sender_domains")} spellCheck={false} autoComplete="off" />
          </Field>
          <Field label="Recipient domains" hint="The key sends only to addresses at these domains (to, cc and bcc)." errors={problems("recipient_domains")}>
            <textarea name="recipient_domains" rows={2} defaultValue={text("recipient_domains")} spellCheck={false} autoComplete="off" />
          </Field>
        </>
      )}
    </fieldset>
  );
}
