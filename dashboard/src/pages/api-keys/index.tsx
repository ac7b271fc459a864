import { useState } from "react";
import type { ApiKey, ApiKeyWithSecret } from "mailroom";
import { useApi } from "../../api/api-context";
import { usePaged } from "../../api/use-request";
import { ConfirmDialog } from "../../components/confirm-dialog";
import { Dialog } from "../../components/dialog";
import { Loaded } from "../../components/loaded";
import { PageHeader } from "../../components/page-header";
import { Pager } from "../../components/pager";
import { Table } from "../../components/table";
import { PERMISSION_LABELS, formatDate, formatDateTime } from "../../lib/format";
import { CreateKeyForm } from "./create-key-form";
import { RotateKeyForm } from "./rotate-key-form";
import { ApiKeySecretDialog, type Revealed } from "./secret-dialog";

type KeyStatus = "active" | "expired" | "revoked";

function statusOf(key: ApiKey, now = Date.now()): KeyStatus {
  if (key.revoked_at) return "revoked";
  if (key.expires_at && Date.parse(key.expires_at) <= now) return "expired";
  return "active";
}

function KeyTable({ keys, onRotate, onRevoke }: { keys: ApiKey[]; onRotate: (key: ApiKey) => void; onRevoke: (key: ApiKey) => void }) {
  return (
    <Table columns={["Name", "Key", "Permission", "Created", "Last used", "Expires", "Status"]} actions>
      {keys.map((key) => {
        const status = statusOf(key);
        return (
          <tr key={key.id} data-testid="api-key-row">
            <td>{key.name}</td>
            <td className="mono nowrap">{key.redacted_key}</td>
            <td className="nowrap">{PERMISSION_LABELS[key.permission]}</td>
            <td className="nowrap">{formatDate(key.created_at)}</td>
            <td className="nowrap">{formatDateTime(key.last_used_at, "Never")}</td>
            <td className="nowrap">{formatDate(key.expires_at, "Never")}</td>
            <td>
              <span className={`badge badge--key-${status}`}>{status}</span>
            </td>
            <td className="table__actions">
              {status !== "revoked" && (
                <>
                  <button type="button" className="button button--small" aria-label={`Rotate ${key.name}`} onClick={() => onRotate(key)}>
                    Rotate
                  </button>
                  <button
                    type="button"
                    className="button button--small button--danger"
                    aria-label={`Revoke ${key.name}`}
                    onClick={() => onRevoke(key)}
                  >
                    Revoke
                  </button>
                </>
              )}
            </td>
          </tr>
        );
      })}
    </Table>
  );
}

/** `/developers/api-keys`: create, list, rotate and revoke the environment's API keys. */
export function ApiKeysPage() {
  const api = useApi();
  const keys = usePaged((after, signal) => api.call((mr) => mr.apiKeys.list({ limit: 50, ...(after ? { after } : {}) }, { signal })), [api]);
  const [creating, setCreating] = useState(false);
  const [rotating, setRotating] = useState<ApiKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const [revealed, setRevealed] = useState<Revealed | null>(null);

  const reveal = (key: ApiKeyWithSecret) => {
    setCreating(false);
    setRotating(null);
    setRevealed({ key, currentEnvironment: api.environment });
    keys.reload();
  };

  return (
    <>
      <PageHeader
        title="API keys"
        description={`Keys for the ${api.environment} environment. A secret is shown once, when the key is created or rotated.`}
        actions={
          <button type="button" className="button button--primary" onClick={() => setCreating(true)}>
            Create API key
          </button>
        }
      />
      <section className="card card--flush" aria-label="API keys">
        <Loaded state={keys} what="API keys">
          {(page) =>
            page.data.length === 0 && keys.pageNumber === 1 ? (
              <p className="empty">No {api.environment} API keys yet. Create one to send email from your code.</p>
            ) : (
              <KeyTable keys={page.data} onRotate={setRotating} onRevoke={setRevoking} />
            )
          }
        </Loaded>
      </section>
      <Pager paged={keys} label="API keys" />

      <Dialog open={creating} title="Create API key" onClose={() => setCreating(false)}>
        <CreateKeyForm onCreated={reveal} onCancel={() => setCreating(false)} />
      </Dialog>
      <Dialog open={rotating !== null} title="Rotate API key" onClose={() => setRotating(null)}>
        {rotating && <RotateKeyForm apiKey={rotating} onRotated={reveal} onCancel={() => setRotating(null)} />}
      </Dialog>
      <ConfirmDialog
        target={revoking}
        title="Revoke API key?"
        confirmLabel="Revoke key"
        onClose={() => setRevoking(null)}
        onConfirm={async (key) => {
          await api.call((mr) => mr.apiKeys.revoke(key.id));
          keys.reload();
        }}
      >
        {(key) => (
          <p>
            Requests that use <strong>{key.name}</strong> will fail at once. This cannot be undone.
          </p>
        )}
      </ConfirmDialog>
      <ApiKeySecretDialog revealed={revealed} onClose={() => setRevealed(null)} />
    </>
  );
}
