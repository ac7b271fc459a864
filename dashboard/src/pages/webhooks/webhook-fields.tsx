import { useId, useState, type FormEvent } from "react";
import type { Webhook, WebhookEventType } from "mailroom";
import { Field } from "../../components/field";
import { useFieldMarks, type FieldMarks } from "../../components/use-field-marks";
import { problemsAt, readForm } from "../../lib/forms";
import { EVENT_TYPE_GROUPS, isWebhookEventType } from "../../lib/webhooks";

export interface WebhookFieldValues {
  url: string;
  description: string | null;
  /** Null: every event type, including types added later. */
  event_types: WebhookEventType[] | null;
}

/** The pointers of the fields below whose problems are shown under them, not in the form's error box. */
export const WEBHOOK_FIELD_POINTERS = ["/url", "/description", "/event_types"] as const;

type WebhookField = "url" | "description";

/** Reads the fields below from their submitted form (and stops the browser's own submission). */
function readWebhookFields(event: FormEvent<HTMLFormElement>): WebhookFieldValues {
  const form = readForm(event);
  const chosen = new FormData(event.currentTarget)
    .getAll("event_types")
    .filter((value): value is WebhookEventType => typeof value === "string" && isWebhookEventType(value));
  return { url: form.text("url"), description: form.text("description") || null, event_types: form.text("scope") === "all" ? null : chosen };
}

export interface WebhookFieldsState {
  /** The form's last failure: the server's problems beside each field. */
  error: unknown;
  /** Only chosen types, and none chosen: refused here, since the server would refuse it. */
  noTypes: boolean;
  clearNoTypes: () => void;
  changed: FieldMarks<WebhookField>;
}

/**
 * The state of a form of WebhookFields (createWebhook, updateWebhook): `read` gives the values to
 * send, or null when the form refuses them itself ("Only the types chosen below" with none ticked,
 * which the contract refuses: `minItems: 1`), moving the keyboard's focus to the first type.
 */
export function useWebhookFields(error: unknown): { read: (event: FormEvent<HTMLFormElement>) => WebhookFieldValues | null; state: WebhookFieldsState } {
  const [noTypes, setNoTypes] = useState(false);
  const changed = useFieldMarks<WebhookField>(error);
  return {
    read(event) {
      const values = readWebhookFields(event);
      const none = values.event_types !== null && values.event_types.length === 0;
      setNoTypes(none);
      if (!none) return values;
      event.currentTarget.querySelector<HTMLInputElement>('input[name="event_types"]')?.focus();
      return null;
    },
    state: { error, noTypes, clearNoTypes: () => setNoTypes(false), changed },
  };
}

/** An endpoint's URL, note and event types: the fields of createWebhook and updateWebhook. */
export function WebhookFields({ webhook, state }: { webhook?: Webhook; state: WebhookFieldsState }) {
  const [all, setAll] = useState(webhook ? webhook.event_types === null : true);
  const subscribed = new Set<string>(webhook?.event_types ?? []);
  const typesErrorId = useId();
  const { error, noTypes, clearNoTypes, changed } = state;
  // A field changed since the refusal is no longer what was refused: its problems go.
  const problems = (field: WebhookField) => (changed.has(field) ? [] : problemsAt(error, `/${field}`));
  const typeProblems = noTypes ? ["Choose at least one event type"] : all ? [] : problemsAt(error, "/event_types");
  return (
    <>
      <Field label="Endpoint URL" hint="Mailroom POSTs each event here, signed (Standard Webhooks). Use https in production." errors={problems("url")}>
        <input
          name="url"
          type="url"
          required
          maxLength={2048}
          placeholder="https://example.com/webhooks/mailroom"
          defaultValue={webhook?.url}
          autoComplete="off"
          spellCheck={false}
          onChange={() => changed.mark("url")}
        />
      </Field>
      <Field label="Description (optional)" errors={problems("description")}>
        <input name="description" maxLength={500} defaultValue={webhook?.description ?? ""} autoComplete="off" onChange={() => changed.mark("description")} />
      </Field>
      <fieldset
        className="radio-group"
        {...(typeProblems.length > 0 ? { "aria-invalid": true, "aria-describedby": typesErrorId } : {})}
        onChange={(event) => {
          const { target } = event;
          if (target instanceof HTMLInputElement && (target.name === "scope" || (target.name === "event_types" && target.checked))) clearNoTypes();
        }}
      >
        <legend>Events to send</legend>
        <label className="radio">
          <input type="radio" name="scope" value="all" checked={all} onChange={() => setAll(true)} />
          All event types, including types added later
        </label>
        <label className="radio">
          <input type="radio" name="scope" value="some" checked={!all} onChange={() => setAll(false)} />
          Only the types chosen below
        </label>
        {EVENT_TYPE_GROUPS.map((group) => (
          <fieldset key={group.label} className="event-types">
            <legend>{group.label}</legend>
            {group.types.map((type) => (
              <label key={type} className="radio">
                <input type="checkbox" name="event_types" value={type} defaultChecked={subscribed.has(type)} disabled={all} />
                <code>{type}</code>
              </label>
            ))}
          </fieldset>
        ))}
        {typeProblems.length > 0 && (
          <ul id={typesErrorId} className="plain-list field__errors">
            {typeProblems.map((problem) => (
              <li key={problem}>{problem}</li>
            ))}
          </ul>
        )}
      </fieldset>
    </>
  );
}
