import { useState } from "react";
import { useApi, useWorkspace } from "../../api/api-context";
import { useAction, useRequest } from "../../api/use-request";
import { useSession } from "../../auth/session";
import { ActionButton } from "../../components/action-button";
import type { RequestBody, WorkspaceTracking } from "mailroom";
import { Card } from "../../components/card";
import { ConfirmDialog } from "../../components/confirm-dialog";
import { ErrorState } from "../../components/error-state";
import { Field } from "../../components/field";
import { Loaded } from "../../components/loaded";
import { useFieldMarks } from "../../components/use-field-marks";
import { changedFields, typedText } from "../../lib/changes";
import { numberOrNull, problemsAt, readForm } from "../../lib/forms";
import { formatDays } from "../../lib/format";
import { KEPT_AFTER_REMOVAL, changeShortensRetention } from "../../lib/retention";
import { hasRole } from "../../lib/roles";

/** updateWorkspace's body: only the fields changed against the loaded workspace (changedFields). */
type WorkspaceChanges = RequestBody<"updateWorkspace">;

/** The form's fields whose problems (a 422 at `/<field>`) are shown under them. */
type WorkspaceField = "name" | "default_from" | "monthly_quota" | "content_retention_days";
const WORKSPACE_FIELD_POINTERS = ["/name", "/default_from", "/monthly_quota", "/content_retention_days"];

function isWorkspaceField(name: string): name is WorkspaceField {
  return WORKSPACE_FIELD_POINTERS.includes(`/${name}`);
}

/** The tracking defaults, as the form's checkboxes name and explain them. */
const TRACKING_DEFAULTS: Array<{ key: keyof WorkspaceTracking; label: string; hint: string }> = [
  { key: "opens", label: "Track opens", hint: "a 1×1 image at the end of the HTML" },
  { key: "clicks", label: "Track clicks", hint: "http(s) links rewritten to signed redirects" },
  { key: "replies", label: "Thread replies", hint: "a reply address per message, so replies arrive as events" },
  { key: "unsubscribe", label: "One-click unsubscribe", hint: "List-Unsubscribe headers (RFC 8058)" },
];

/** The workspace's name, default sender, monthly quota, content retention and tracking defaults (getWorkspace, updateWorkspace). */
export function WorkspaceSection() {
  const api = useApi();
  const { workspace: membership } = useWorkspace();
  const { refresh } = useSession();
  // updateWorkspace needs an admin; below that the form is shown read-only rather than refused.
  const canEdit = hasRole(membership.role, "admin");
  const workspace = useRequest((signal) => api.call((mr) => mr.workspace.get({ signal })), [api]);
  // "unchanged": Save pressed with every field as loaded, so nothing was sent.
  const [status, setStatus] = useState<"saved" | "unchanged" | null>(null);
  // Changes that would remove content sooner wait here for the admin to confirm them.
  // keptNow: the retention the workspace had when Save was pressed, which the change shortens.
  const [confirming, setConfirming] = useState<{ changes: WorkspaceChanges; keptNow: number | null } | null>(null);
  const save = useAction(async (changes: WorkspaceChanges, confirmed = false) => {
    setStatus(null);
    // Whether a changed retention removes content sooner is asked of the workspace as it is now,
    // not as the form loaded it: a retention a script lengthened meanwhile would be shortened by
    // this save too, and removed content cannot be brought back.
    if (!confirmed && changes.content_retention_days !== undefined) {
      const now = await api.call((mr) => mr.workspace.get());
      if (changeShortensRetention(now.content_retention_days, changes)) {
        setConfirming({ changes, keptNow: now.content_retention_days });
        return;
      }
    }
    const updated = await api.call((mr) => mr.workspace.update(changes));
    workspace.update(() => updated);
    setStatus("saved");
    // The name is also in the session's list of workspaces, which the top bar shows.
    if (changes.name !== undefined) refresh();
  });
  // A field changed since the refusal is no longer what was refused: its problems go.
  const changed = useFieldMarks<WorkspaceField>(save.error);
  const problems = (field: WorkspaceField) => (changed.has(field) ? [] : problemsAt(save.error, `/${field}`));

  return (
    <Card title="Workspace">
      <Loaded state={workspace} what="the workspace" compact>
        {(data) => (
          <form
            className="form form--narrow"
            onSubmit={(event) => {
              const form = readForm(event);
              const checked = (key: keyof WorkspaceTracking) => form.text(`tracking_${key}`) === "on";
              const tracking = { opens: checked("opens"), clicks: checked("clicks"), replies: checked("replies"), unsubscribe: checked("unsubscribe") };
              // Only what was changed: a field left as loaded keeps whatever the server has now
              // (a quota a script set meanwhile), and the retention check sees only a changed retention.
              const changes: WorkspaceChanges = changedFields(
                { name: data.name, default_from: data.default_from, monthly_quota: data.monthly_quota, content_retention_days: data.content_retention_days, tracking: data.tracking },
                {
                  name: typedText(form.raw("name"), data.name) ?? "",
                  default_from: typedText(form.raw("default_from"), data.default_from),
                  monthly_quota: numberOrNull(form.text("monthly_quota")),
                  content_retention_days: numberOrNull(form.text("content_retention_days")),
                  tracking,
                },
              );
              if (Object.keys(changes).length === 0) setStatus("unchanged");
              else void save.run(changes);
            }}
          >
            {!canEdit && (
              <p className="notice" role="note">
                Only admins and owners change the workspace&apos;s settings.
              </p>
            )}
            <fieldset
              className="fieldset-plain"
              disabled={!canEdit}
              onChange={(event) => {
                // The event of the input that changed, bubbled up to the fieldset.
                const { target } = event;
                if (target instanceof HTMLInputElement && isWorkspaceField(target.name)) changed.mark(target.name);
              }}
            >
              <Field label="Workspace name" errors={problems("name")}>
                <input name="name" required maxLength={100} defaultValue={data.name} />
              </Field>
              <Field
                label="Default sender"
                hint="Used when a message has no “from”. Leave empty to require one on every message. Live mail needs it on a verified domain."
                errors={problems("default_from")}
              >
                <input name="default_from" maxLength={512} defaultValue={data.default_from ?? ""} placeholder="Acme <hello@acme.example>" />
              </Field>
              <Field
                label="Monthly quota"
                hint={
                  <>
                    Live messages the workspace may send per calendar month (UTC), a safety cap against runaway sending: past it, sending is refused
                    with <code>429 monthly_quota_exceeded</code>. Leave empty for no limit. Sandbox messages never count.
                  </>
                }
                errors={problems("monthly_quota")}
              >
                <input
                  name="monthly_quota"
                  type="number"
                  min={1}
                  max={1_000_000_000}
                  step={1}
                  inputMode="numeric"
                  defaultValue={data.monthly_quota ?? ""}
                  placeholder="No limit"
                />
              </Field>
              <Field
                label="Content retention (days)"
                hint={
                  <>
                    Days after it was sent that a finished message (delivered, bounced, failed, suppressed or canceled) keeps its HTML, text,
                    raw source and attachments, in both environments. Then they are removed and <strong>cannot be brought back</strong>;{" "}
                    {KEPT_AFTER_REMOVAL} are kept. Leave empty to keep content for good.
                  </>
                }
                errors={problems("content_retention_days")}
              >
                <input
                  name="content_retention_days"
                  type="number"
                  min={1}
                  max={3650}
                  step={1}
                  inputMode="numeric"
                  defaultValue={data.content_retention_days ?? ""}
                  placeholder="Keep for good"
                />
              </Field>
              <fieldset className="radio-group" data-testid="tracking-defaults">
                <legend>Tracking defaults</legend>
                <p className="field__hint">
                  For messages that do not say themselves. A sending domain&apos;s own open and click defaults come before these (see its page in
                  Domains).
                </p>
                {TRACKING_DEFAULTS.map(({ key, label, hint }) => (
                  <label key={key} className="radio">
                    <input type="checkbox" name={`tracking_${key}`} defaultChecked={data.tracking[key]} />
                    {label} <span className="muted">({hint})</span>
                  </label>
                ))}
              </fieldset>
            </fieldset>
            {save.error !== undefined && <ErrorState error={save.error} title="Could not save the workspace" compact shownAtFields={WORKSPACE_FIELD_POINTERS} />}
            {canEdit && (
              <div className="form__actions">
                <ActionButton label="Save changes" pendingLabel="Saving…" pending={save.pending} />
                <span role="status" className="form__status">
                  {save.pending ? "" : status === "saved" ? "Saved." : status === "unchanged" ? "Nothing changed." : ""}
                </span>
              </div>
            )}
          </form>
        )}
      </Loaded>
      <ConfirmDialog
        target={confirming}
        title="Remove older content?"
        confirmLabel="Save and remove older content"
        onConfirm={async ({ changes }) => {
          await save.run(changes, true);
        }}
        onClose={() => setConfirming(null)}
      >
        {({ changes, keptNow }) => (
          <p>
            Content is kept {keptNow === null ? "for good" : formatDays(keptNow)} now. Within minutes, finished messages sent more than{" "}
            {formatDays(changes.content_retention_days!)} ago, and replies received more than that ago, lose their HTML, text, raw source and
            attachments, in both environments. This cannot be undone; {KEPT_AFTER_REMOVAL} are kept.
          </p>
        )}
      </ConfirmDialog>
    </Card>
  );
}
