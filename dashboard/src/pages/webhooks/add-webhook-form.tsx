import type { Webhook } from "mailroom";
import { useApi } from "../../api/api-context";
import { useAction } from "../../api/use-request";
import { ActionButton, DialogActions } from "../../components/action-button";
import { ErrorState } from "../../components/error-state";
import { retrySafeRequests } from "../../lib/idempotent-attempt";
import { useWebhookFields, WEBHOOK_FIELD_POINTERS, WebhookFields, type WebhookFieldValues } from "./webhook-fields";

/** createWebhook: the answer carries the endpoint's signing secret, shown once by the caller. */
export function AddWebhookForm({ onAdded, onCancel }: { onAdded: (webhook: Webhook) => void; onCancel: () => void }) {
  const api = useApi();
  const requests = retrySafeRequests("createWebhook", api);
  const add = useAction(async (values: WebhookFieldValues) => {
    onAdded(await requests.send(values, (idempotencyKey) => api.call((mr) => mr.webhooks.create(values, { idempotencyKey }))));
  });
  const fields = useWebhookFields(add.error);
  return (
    <form
      onSubmit={(event) => {
        const values = fields.read(event);
        if (values) void add.run(values);
      }}
    >
      <div className="dialog__body form">
        <p>The {api.environment} environment's events will be sent to this endpoint as they happen, and retried when it fails.</p>
        <WebhookFields state={fields.state} />
      </div>
      {add.error !== undefined && <ErrorState error={add.error} title="Could not add the endpoint" compact shownAtFields={WEBHOOK_FIELD_POINTERS} />}
      <DialogActions onCancel={onCancel} pending={add.pending}>
        <ActionButton label="Add endpoint" pendingLabel="Adding…" pending={add.pending} />
      </DialogActions>
    </form>
  );
}
