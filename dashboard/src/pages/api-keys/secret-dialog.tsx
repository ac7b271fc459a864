import type { ApiKeyWithSecret } from "mailroom";
import { SecretDialog } from "../../components/secret-dialog";
import { ENVIRONMENT_LABELS, type Environment } from "../../lib/environment";
import { PERMISSION_LABELS, formatDateTime } from "../../lib/format";

export interface Revealed {
  key: ApiKeyWithSecret;
  currentEnvironment: Environment;
}

/** The one showing of a key's secret (create and rotate). */
export function ApiKeySecretDialog({ revealed, onClose }: { revealed: Revealed | null; onClose: () => void }) {
  const key = revealed?.key;
  return (
    <SecretDialog
      secret={key?.secret ?? null}
      title="Save your API key"
      warning="This is the only time the secret is shown. Copy it now and store it somewhere safe: it cannot be shown again. If you lose it, rotate the key."
      secretTestId="api-key-secret"
      onClose={onClose}
      summary={
        key && (
          <>
            <strong>{key.name}</strong> · {ENVIRONMENT_LABELS[key.environment]} · {PERMISSION_LABELS[key.permission]}
          </>
        )
      }
    >
      {key?.previous_secret_expires_at && <p>The previous secret keeps working until {formatDateTime(key.previous_secret_expires_at)}.</p>}
      {key && revealed && key.environment !== revealed.currentEnvironment && (
        <p className="muted">
          This is a {key.environment} key: switch to {key.environment} to see it in the list.
        </p>
      )}
    </SecretDialog>
  );
}
