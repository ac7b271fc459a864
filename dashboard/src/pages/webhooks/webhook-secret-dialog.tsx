import type { Webhook } from "mailroom";
import { Link } from "wouter";
import { SecretDialog } from "../../components/secret-dialog";

/** The one showing of an endpoint's signing secret, after createWebhook and rotateWebhookSecret. */
export function WebhookSecretDialog({ webhook, onClose, rotated = false }: { webhook: Webhook | null; onClose: () => void; rotated?: boolean }) {
  return (
    <SecretDialog
      secret={webhook?.secret ?? null}
      title="Save your signing secret"
      warning="Copy the secret now and store it with your receiver's configuration: it is shown once here. Later, only admins can reveal it, on the endpoint's page."
      secretTestId="webhook-secret"
      onClose={onClose}
      summary={
        webhook && (
          <>
            Verify each delivery to <code className="break">{webhook.url}</code> with this secret (the <code>webhook-signature</code> header, Standard
            Webhooks).
          </>
        )
      }
    >
      {rotated && <p>Until the overlap you chose ends, each delivery is signed with the previous secret too.</p>}
      {webhook && !rotated && (
        <p>
          <Link href={`/webhooks/${webhook.id}`} onClick={onClose}>
            Open the endpoint
          </Link>{" "}
          to send it a test event.
        </p>
      )}
    </SecretDialog>
  );
}
