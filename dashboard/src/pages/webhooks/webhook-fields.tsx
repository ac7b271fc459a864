import { useState, type FormEvent } from "react";
import type { Webhook, WebhookEventType } from "mailroom";
import { Field } from "../../components/field";
import { readForm } from "../../lib/forms";
import { EVENT_TYPE_GROUPS, isWebhookEventType } from "../../lib/webhooks";

export interface WebhookFieldValues {
  url: string;
  description: string | null;
  /** Null: every event type, including types added later. */
  event_types: WebhookEventType[] | null;
}

/** Reads the fields below from their submitted form (and stops the browser's own submission). */
export function readWebhookFields(event: FormEvent<HTMLFormElement>): WebhookFieldValues {
  const form = readForm(event);
  const chosen = new FormData(event.currentTarget)
    .getAll("event_types")
    .filter((value): value is WebhookEventType => typeof value === "string" && isWebhookEventType(value));
  return { url: form.text("url"), description: form.text("description") || null, event_types: form.text("scope") === "all" ? null : chosen };
}

/** An endpoint's URL, note and event types: the fields of createWebhook and updateWebhook. */
export function WebhookFields({ webhook }: { webhook?: Webhook }) {
  const [all, setAll] = useState(webhook ? webhook.event_types === null : true);
  const subscribed = new Set<string>(webhook?.event_types ?? []);
  return (
    <>
      <Field label="Endpoint URL" hint="Mailroom POSTs each event here, signed (Standard Webhooks). Use https in production.">
        <input name="url" type="url" required maxLength={2048} placeholder="https://example.com/webhooks/mailroom" defaultValue={webhook?.url} autoComplete="off" spellCheck={false} />
      </Field>
      <Field label="Description (optional)">
        <input name="description" maxLength={500} defaultValue={webhook?.description ?? ""} autoComplete="off" />
      </Field>
      <fieldset className="radio-group">
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
      </fieldset>
    </>
  );
}
