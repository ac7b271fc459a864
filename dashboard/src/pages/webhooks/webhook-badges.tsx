import type { Webhook, WebhookAttempt } from "mailroom";

/** An endpoint's status: enabled, or disabled (the notice says why). */
export function WebhookStatusBadge({ webhook }: { webhook: Pick<Webhook, "status"> }) {
  return (
    <span className={`badge badge--webhook-${webhook.status}`} data-testid="webhook-status">
      {webhook.status}
    </span>
  );
}

export function AttemptStatusBadge({ attempt }: { attempt: Pick<WebhookAttempt, "status"> }) {
  return <span className={`badge badge--attempt-${attempt.status}`}>{attempt.status}</span>;
}
