import type { Webhook } from "mailroom";
import { Link } from "wouter";
import { useApi } from "../../api/api-context";
import { useAction } from "../../api/use-request";
import { ActionButton } from "../../components/action-button";
import { ErrorState } from "../../components/error-state";
import { formatDateTime } from "../../lib/format";
import { DISABLED_REASONS } from "../../lib/webhooks";

interface DisabledNoticeProps {
  webhook: Webhook;
  /** Re-enabling needs a developer; others read the notice without the button. */
  canManage: boolean;
  onEnabled: (webhook: Webhook) => void;
  /** On the list: name the endpoint and link to it. */
  linked?: boolean;
}

/**
 * A disabled endpoint, why, since when, and Re-enable (updateWebhook `enabled: true`, which
 * resumes its waiting deliveries). With reason `failing`, this is the `webhook_endpoint.disabled`
 * notice of the contract.
 */
export function DisabledNotice({ webhook, canManage, onEnabled, linked = false }: DisabledNoticeProps) {
  const api = useApi();
  const enable = useAction(async () => {
    onEnabled(await api.call((mr) => mr.webhooks.update(webhook.id, { enabled: true })));
  });
  const reason = DISABLED_REASONS[webhook.disabled_reason ?? "manual"];
  return (
    <div className={`notice ${webhook.disabled_reason === "manual" ? "" : "notice--danger"} webhook-notice`} role="alert" data-testid="webhook-disabled-notice">
      <div className="webhook-notice__text">
        <p>
          <strong>{reason.title}</strong>
          {webhook.disabled_at && <> since {formatDateTime(webhook.disabled_at)}</>}
          {linked && (
            <>
              {": "}
              <Link href={`/webhooks/${webhook.id}`} className="mono break">
                {webhook.url}
              </Link>
            </>
          )}
        </p>
        <p>{reason.detail}</p>
        {enable.error !== undefined && <ErrorState error={enable.error} title="Could not re-enable the endpoint" compact />}
      </div>
      {canManage && (
        <ActionButton
          label={webhook.disabled_reason === "manual" ? "Enable" : "Re-enable"}
          pendingLabel="Enabling…"
          pending={enable.pending}
          onClick={() => void enable.run()}
        />
      )}
    </div>
  );
}
