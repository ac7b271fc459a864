import { useState } from "react";
import type { Domain, RequestBody } from "mailroom";
import { useApi } from "../../api/api-context";
import { useAction } from "../../api/use-request";
import { ActionButton } from "../../components/action-button";
import { Card } from "../../components/card";
import { ErrorState } from "../../components/error-state";
import { Field } from "../../components/field";
import { TRACKING_CHOICES, trackingChoice, trackingValue } from "../../lib/domains";
import { changedFields, typedText } from "../../lib/changes";
import { readForm } from "../../lib/forms";

/** updateDomain's body: only the fields changed against the loaded domain (changedFields). */
type TrackingChanges = RequestBody<"updateDomain">;

/**
 * The domain's tracking defaults and tracking domain (updateDomain). Shown to everyone;
 * below admin the fields are read-only, as the workspace settings are.
 */
export function TrackingSettings({ domain, canEdit, onChange }: { domain: Domain; canEdit: boolean; onChange: (domain: Domain) => void }) {
  const api = useApi();
  // "unchanged": Save pressed with every field as loaded, so nothing was sent.
  const [status, setStatus] = useState<"saved" | "unchanged" | null>(null);
  const save = useAction(async (changes: TrackingChanges) => {
    setStatus(null);
    onChange(await api.call((mr) => mr.domains.update(domain.id, changes)));
    setStatus("saved");
  });

  return (
    <Card title="Tracking">
      <form
        className="form form--narrow"
        aria-label="Tracking settings"
        onSubmit={(event) => {
          const form = readForm(event);
          // Only what was changed: a field left as loaded keeps whatever the server has now.
          const changes = changedFields(
            { track_opens: domain.track_opens, track_clicks: domain.track_clicks, tracking_domain: domain.tracking_domain },
            {
              track_opens: trackingValue(form.text("track_opens")),
              track_clicks: trackingValue(form.text("track_clicks")),
              tracking_domain: typedText(form.raw("tracking_domain"), domain.tracking_domain)?.toLowerCase() ?? null,
            },
          );
          if (Object.keys(changes).length === 0) setStatus("unchanged");
          else void save.run(changes);
        }}
      >
        <p className="muted">
          Defaults for mail from {domain.name} that does not say itself; a message&apos;s own <code>track_opens</code> and <code>track_clicks</code>{" "}
          come first, and the workspace&apos;s defaults (in Settings) apply when these follow it.
        </p>
        <fieldset className="fieldset-plain" disabled={!canEdit}>
          <Field label="Open tracking" hint="A 1×1 image at the end of the HTML records opens.">
            <TrackingSelect name="track_opens" value={domain.track_opens} />
          </Field>
          <Field label="Click tracking" hint="http(s) links are rewritten to signed redirects that record clicks; mailto:, tel: and anchors never are.">
            <TrackingSelect name="track_clicks" value={domain.track_clicks} />
          </Field>
          <Field
            label="Tracking domain"
            hint={
              <>
                A host name under {domain.name} (such as <code>track.{domain.name}</code>) that serves the tracking image and links, so they carry your
                name rather than this server&apos;s. Publish the <strong>Tracking domain</strong> CNAME record it adds below. Leave empty to use this
                server&apos;s own URL.
              </>
            }
          >
            <input name="tracking_domain" maxLength={253} defaultValue={domain.tracking_domain ?? ""} placeholder={`track.${domain.name}`} spellCheck={false} />
          </Field>
        </fieldset>
        {save.error !== undefined && <ErrorState error={save.error} title="Could not save the tracking settings" compact />}
        {canEdit && (
          <div className="form__actions">
            <ActionButton label="Save tracking settings" pendingLabel="Saving…" pending={save.pending} />
            <span role="status" className="form__status">
              {save.pending ? "" : status === "saved" ? "Saved." : status === "unchanged" ? "Nothing changed." : ""}
            </span>
          </div>
        )}
      </form>
    </Card>
  );
}

/**
 * Workspace default, On or Off: a domain's setting may defer to the workspace (null). Passes on
 * the id and description Field gives it, so its label names it.
 */
function TrackingSelect({ name, value, ...labelling }: { name: string; value: boolean | null; id?: string; "aria-describedby"?: string }) {
  return (
    <select name={name} defaultValue={trackingChoice(value)} {...labelling}>
      {TRACKING_CHOICES.map((choice) => (
        <option key={choice.value} value={choice.value}>
          {choice.label}
        </option>
      ))}
    </select>
  );
}
