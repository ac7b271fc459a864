import type { ReactNode } from "react";
import { CopyButton } from "./copy-button";
import { Dialog } from "./dialog";

interface SecretDialogProps {
  /** The secret to show; the dialog is open while there is one. */
  secret: string | null;
  title: string;
  /** Said first: that the secret is shown once, and what to do when it is lost. */
  warning: string;
  /** Names the secret's element for tests ("api-key-secret"). */
  secretTestId: string;
  onClose: () => void;
  /** What the secret belongs to, above it. */
  summary: ReactNode;
  /** Anything else to know, below it. */
  children?: ReactNode;
}

/**
 * The showing of a new secret (an API key's, a webhook endpoint's) right after it was made or
 * rotated: copy it now.
 */
export function SecretDialog({ secret, title, warning, secretTestId, onClose, summary, children }: SecretDialogProps) {
  return (
    <Dialog open={secret !== null} title={title} onClose={onClose} testId="secret-dialog">
      {secret !== null && (
        <div className="dialog__body">
          <p className="notice notice--warning" role="note">
            {warning}
          </p>
          <p>{summary}</p>
          <div className="secret">
            <code data-testid={secretTestId}>{secret}</code>
            <CopyButton text={secret} />
          </div>
          {children}
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
