import { useState } from "react";
import type { Webhook, WebhookEventType, WebhookSecret } from "mailroom";
import { useLocation } from "wouter";
import { useApi, useWorkspace } from "../../api/api-context";
import { useAction, useRequest } from "../../api/use-request";
import { ActionButton, DialogActions } from "../../components/action-button";
import { Card } from "../../components/card";
import { ConfirmDialog } from "../../components/confirm-dialog";
import { CopyButton } from "../../components/copy-button";
import { Dialog } from "../../components/dialog";
import { ErrorState } from "../../components/error-state";
import { Field } from "../../components/field";
import { OverlapFieldset } from "../../components/overlap-fieldset";
import { PageHeader } from "../../components/page-header";
import { ResourcePage } from "../../components/resource-page";
import { SummaryList, SummaryRow } from "../../components/summary-list";
import { changedFields } from "../../lib/changes";
import { ENVIRONMENT_LABELS } from "../../lib/environment";
import { formatDateTime } from "../../lib/format";
import { readForm } from "../../lib/forms";
import { hasRole } from "../../lib/roles";
import { WEBHOOK_SECRET_OVERLAP_MAX } from "../../lib/rotation-overlaps";
import { EVENT_TYPE_GROUPS, isWebhookEventType, withoutSecret } from "../../lib/webhooks";
import { Attempts } from "./attempts";
import { DisabledNotice } from "./disabled-notice";
import { WebhookStatusBadge } from "./webhook-badges";
import { useWebhookFields, WEBHOOK_FIELD_POINTERS, WebhookFields, type WebhookFieldValues } from "./webhook-fields";
import { WebhookSecretDialog } from "./webhook-secret-dialog";

/**
 * updateWebhook's body: only the fields changed against the endpoint as loaded (changedFields),
 * so a save leaves alone a URL a script changed meanwhile (its Basic password rotated), and an
 * unchanged URL is not checked again against today's target rules.
 */
function EditWebhookForm({ webhook, onSaved, onCancel }: { webhook: Webhook; onSaved: (webhook: Webhook) => void; onCancel: () => void }) {
  const api = useApi();
  const loaded: WebhookFieldValues = { url: webhook.url, description: webhook.description, event_types: webhook.event_types };
  const save = useAction(async (values: WebhookFieldValues) => {
    onSaved(await api.call((mr) => mr.webhooks.update(webhook.id, changedFields(loaded, values))));
  });
  const fields = useWebhookFields(save.error);
  return (
    <form
      onSubmit={(event) => {
        const values = fields.read(event);
        if (values) void save.run(values);
      }}
    >
      <div className="dialog__body form">
        <WebhookFields webhook={webhook} state={fields.state} />
      </div>
      {save.error !== undefined && <ErrorState error={save.error} title="Could not save the endpoint" compact shownAtFields={WEBHOOK_FIELD_POINTERS} />}
      <DialogActions onCancel={onCancel} pending={save.pending}>
        <ActionButton label="Save changes" pendingLabel="Saving…" pending={save.pending} />
      </DialogActions>
    </form>
  );
}

function RotateSecretForm({ webhook, onRotated, onCancel }: { webhook: Webhook; onRotated: (webhook: Webhook) => void; onCancel: () => void }) {
  const api = useApi();
  const rotate = useAction(async (overlapSeconds: number) => {
    onRotated(await api.call((mr) => mr.webhooks.rotateSecret(webhook.id, { overlap_seconds: overlapSeconds })));
  });
  return (
    <form onSubmit={(event) => void rotate.run(Number(readForm(event).text("overlap_seconds")))}>
      <div className="dialog__body">
        <p>The endpoint gets a new signing secret. While the overlap lasts, each delivery carries a signature with each secret, so your receiver accepts it whichever it has.</p>
        <OverlapFieldset maxSeconds={WEBHOOK_SECRET_OVERLAP_MAX} legend="Keep signing with the old secret too for" />
      </div>
      {rotate.error !== undefined && <ErrorState error={rotate.error} title="Could not rotate the secret" compact />}
      <DialogActions onCancel={onCancel} pending={rotate.pending}>
        <ActionButton label="Rotate secret" pendingLabel="Rotating…" pending={rotate.pending} />
      </DialogActions>
    </form>
  );
}

/** getWebhookSecret (admins): the current secret, and the previous one while its overlap lasts. */
function RevealedSecret({ secret }: { secret: WebhookSecret }) {
  return (
    <div className="dialog__body">
      <div className="secret">
        <code data-testid="revealed-secret">{secret.secret}</code>
        <CopyButton text={secret.secret} />
      </div>
      {secret.previous_secret && (
        <>
          <p>The previous secret still signs deliveries until {formatDateTime(secret.previous_secret_expires_at)}:</p>
          <div className="secret">
            <code>{secret.previous_secret}</code>
            <CopyButton text={secret.previous_secret} accessibleName="Copy previous secret" />
          </div>
        </>
      )}
    </div>
  );
}

function SigningSecret({ webhook, canRotate, canReveal, onRotated }: { webhook: Webhook; canRotate: boolean; canReveal: boolean; onRotated: (webhook: Webhook) => void }) {
  const api = useApi();
  const [revealed, setRevealed] = useState<WebhookSecret | null>(null);
  const [rotating, setRotating] = useState(false);
  const [rotated, setRotated] = useState<Webhook | null>(null);
  const reveal = useAction(async () => setRevealed(await api.call((mr) => mr.webhooks.getSecret(webhook.id))));
  return (
    <Card title="Signing secret">
      <p>
        Every delivery is signed with this endpoint's secret (<code>webhook-signature</code>, Standard Webhooks): verify it with{" "}
        <code>mr.webhooks.verify(body, headers, secret)</code> or any Standard Webhooks library before trusting the event.
      </p>
      {!canReveal && <p className="muted">Admins and owners can reveal the secret.</p>}
      <div className="form__actions">
        {canReveal && <ActionButton label="Reveal secret" pendingLabel="Revealing…" pending={reveal.pending} variant="plain" onClick={() => void reveal.run()} />}
        {canRotate && (
          <button type="button" className="button" onClick={() => setRotating(true)}>
            Rotate secret
          </button>
        )}
      </div>
      {reveal.error !== undefined && <ErrorState error={reveal.error} title="Could not reveal the secret" compact />}
      <Dialog open={revealed !== null} title="Signing secret" onClose={() => setRevealed(null)}>
        {revealed && <RevealedSecret secret={revealed} />}
        <div className="dialog__actions">
          <button type="button" className="button button--primary" onClick={() => setRevealed(null)}>
            Done
          </button>
        </div>
      </Dialog>
      <Dialog open={rotating} title="Rotate signing secret" onClose={() => setRotating(false)}>
        <RotateSecretForm
          webhook={webhook}
          onCancel={() => setRotating(false)}
          onRotated={(next) => {
            setRotating(false);
            setRotated(next);
            onRotated(withoutSecret(next));
          }}
        />
      </Dialog>
      <WebhookSecretDialog webhook={rotated} rotated onClose={() => setRotated(null)} />
    </Card>
  );
}

/** testWebhook: a sample event of a chosen type, signed and retried like any other. */
function TestEvent({ webhook, onSent }: { webhook: Webhook; onSent: () => void }) {
  const api = useApi();
  const [sent, setSent] = useState<string | null>(null);
  const send = useAction(async (type: WebhookEventType) => {
    setSent(null);
    const delivery = await api.call((mr) => mr.webhooks.test(webhook.id, { type }));
    setSent(`A test ${type} event (${delivery.event_id}) is queued for this endpoint.`);
    onSent();
  });
  return (
    <Card title="Send a test event">
      <form
        className="inline-form inline-form--flush"
        onSubmit={(event) => {
          const type = readForm(event).text("type");
          if (isWebhookEventType(type)) void send.run(type);
        }}
      >
        <Field label="Event type" hint="Sent whether or not the endpoint subscribes to it; its data says test: true.">
          <select name="type" defaultValue={webhook.event_types?.[0] ?? "message.delivered"}>
            {EVENT_TYPE_GROUPS.map((group) => (
              <optgroup key={group.label} label={group.label}>
                {group.types.map((type) => (
                  <option key={type} value={type}>
                    {type}
                  </option>
                ))}
              </optgroup>
            ))}
          </select>
        </Field>
        <ActionButton label="Send test event" pendingLabel="Sending…" pending={send.pending} />
      </form>
      {sent && (
        <p className="notice notice--success" role="status" data-testid="test-event-result">
          {sent} Its attempts appear below.
        </p>
      )}
      {send.error !== undefined && <ErrorState error={send.error} title="Could not send a test event" compact />}
    </Card>
  );
}

function WebhookView({ webhook, onChange }: { webhook: Webhook; onChange: (webhook: Webhook) => void }) {
  const api = useApi();
  const { workspace } = useWorkspace();
  const [, navigate] = useLocation();
  const canManage = hasRole(workspace.role, "developer");
  const canReveal = hasRole(workspace.role, "admin");
  // A disabled endpoint is sent nothing, so the API refuses a test, redelivery or replay for it
  // (409 webhook_disabled): they are offered again once it is enabled.
  const canSend = canManage && webhook.status === "enabled";
  const [editing, setEditing] = useState(false);
  const [deleting, setDeleting] = useState<Webhook | null>(null);
  const [attemptsKey, setAttemptsKey] = useState(0);
  const disable = useAction(async () => onChange(await api.call((mr) => mr.webhooks.update(webhook.id, { enabled: false }))));

  return (
    <>
      <PageHeader
        title={webhook.description || "Webhook endpoint"}
        description={<span className="mono break">{webhook.url}</span>}
        actions={
          canManage && (
            <>
              <button type="button" className="button" onClick={() => setEditing(true)}>
                Edit
              </button>
              {webhook.status === "enabled" && (
                <ActionButton label="Disable" pendingLabel="Disabling…" pending={disable.pending} variant="plain" onClick={() => void disable.run()} />
              )}
              <button type="button" className="button button--danger" onClick={() => setDeleting(webhook)}>
                Delete endpoint
              </button>
            </>
          )
        }
      />
      {!canManage && (
        <p className="notice" role="note" data-testid="read-only-note">
          You can see this endpoint and its delivery attempts. Developers, admins and owners change, test and re-enable endpoints.
        </p>
      )}
      {disable.error !== undefined && <ErrorState error={disable.error} title="Could not disable the endpoint" />}
      {webhook.status === "disabled" && <DisabledNotice webhook={webhook} canManage={canManage} onEnabled={onChange} />}
      <SummaryList>
        <SummaryRow label="Status">
          <WebhookStatusBadge webhook={webhook} />
        </SummaryRow>
        <SummaryRow label="Events">
          {webhook.event_types === null ? (
            "All event types, including types added later"
          ) : (
            <ul className="plain-list" data-testid="webhook-event-types">
              {webhook.event_types.map((type) => (
                <li key={type}>
                  <code>{type}</code>
                </li>
              ))}
            </ul>
          )}
        </SummaryRow>
        <SummaryRow label="Environment">{ENVIRONMENT_LABELS[webhook.environment]}</SummaryRow>
        {webhook.failing_since && <SummaryRow label="Failing since">{formatDateTime(webhook.failing_since)}</SummaryRow>}
        <SummaryRow label="Added">{formatDateTime(webhook.created_at)}</SummaryRow>
        <SummaryRow label="Endpoint ID">
          <code>{webhook.id}</code>
        </SummaryRow>
      </SummaryList>
      <SigningSecret webhook={webhook} canRotate={canManage} canReveal={canReveal} onRotated={onChange} />
      {canSend && <TestEvent webhook={webhook} onSent={() => setAttemptsKey((value) => value + 1)} />}
      {/* Shown afresh after a test event, which queued a delivery. */}
      <Attempts key={attemptsKey} webhook={webhook} canResend={canSend} />

      <Dialog open={editing} title="Edit endpoint" onClose={() => setEditing(false)}>
        <EditWebhookForm
          webhook={webhook}
          onCancel={() => setEditing(false)}
          onSaved={(next) => {
            setEditing(false);
            onChange(next);
          }}
        />
      </Dialog>
      <ConfirmDialog
        target={deleting}
        title="Delete endpoint?"
        confirmLabel="Delete endpoint"
        onClose={() => setDeleting(null)}
        onConfirm={async (target) => {
          await api.call((mr) => mr.webhooks.delete(target.id));
          navigate("/webhooks");
        }}
      >
        {(target) => (
          <p>
            Nothing more is sent to <code className="break">{target.url}</code>; its pending deliveries and recorded attempts are deleted. This cannot be
            undone.
          </p>
        )}
      </ConfirmDialog>
    </>
  );
}

/** `/webhooks/:id`: one endpoint, its secret, a test event, its attempts, redelivery and replay. */
export function WebhookPage({ id }: { id: string }) {
  const api = useApi();
  const webhook = useRequest((signal) => api.call((mr) => mr.webhooks.get(id, { signal })), [api, id]);
  return (
    <ResourcePage back={{ href: "/webhooks", label: "Webhooks" }} title="Webhook endpoint" state={webhook} what="this endpoint">
      {(data) => <WebhookView key={data.id} webhook={data} onChange={(next) => webhook.update(() => next)} />}
    </ResourcePage>
  );
}
