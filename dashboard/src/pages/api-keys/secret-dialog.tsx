import type { ApiKeyWithSecret } from "mailroom";
import { CopyButton } from "../../components/copy-button";
import { Dialog } from "../../components/dialog";
import { ENVIRONMENT_LABELS, type Environment } from "../../lib/environment";
import { PERMISSION_LABELS, formatDateTime } from "../../lib/format";

export interface Revealed {
  key: ApiKeyWithSecret;
  currentEnvironment: Environment;
}

/** The one showing of a secret (create and rotate): copy it now, it is never shown again. */
export function SecretDialog({ revealed, onClose }: { revealed: Revealed | null; onClose: () => void }) {
  const key = revealed?.key;
  return (
    <Dialog open={revealed !== null} title="Save your API key" onClose={onClose} testId="secret-dialog">
      {key && revealed && (
        <div className="dialog__body">
          <p className="notice notice--warning" role="note">
            This is the only time the secret is shown. Copy it now and store it somewhere safe: it cannot be shown again. If you lose it, rotate the
            key.
          </p>
          <p>
            <strong>{key.name}</strong> · {ENVIRONMENT_LABELS[key.environment]} · {PERMISSION_LABELS[key.permission]}
          </p>
          <div className="secret">
            <code data-testid="api-key-secret">{key.secret}</code>
            <CopyButton text={key.secret} />
          </div>
          {key.previous_secret_expires_at && <p>The previous secret keeps working until {formatDateTime(key.previous_secret_expires_at)}.</p>}
          {key.environment !== revealed.currentEnvironment && (
            <p className="muted">
              This is a {key.environment} key: switch to {key.environment} to see it in the list.
            </p>
          )}
        </div>
      )}
      <div className="dialog__actions">
        <button type="button" className="button button--primary" onClick={onClose}>
          Done
        </button>
      </div>
    </Dialog>
  );
}
