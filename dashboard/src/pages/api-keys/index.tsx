import { useEffect, useState } from "react";
import { useLocation, useSearch } from "wouter";
import type { ApiKey, ApiKeyWithSecret } from "mailroom";
import { useApi, useWorkspace } from "../../api/api-context";
import { useMemberEmails } from "../../api/use-member-emails";
import { usePaged } from "../../api/use-request";
import { ConfirmDialog } from "../../components/confirm-dialog";
import { Dialog } from "../../components/dialog";
import { Loaded } from "../../components/loaded";
import { PageHeader } from "../../components/page-header";
import { Pager } from "../../components/pager";
import { hasRole } from "../../lib/roles";
import { CreateKeyForm } from "./create-key-form";
import { EditKeyForm } from "./edit-key-form";
import { KeyTable } from "./key-table";
import { RotateKeyForm } from "./rotate-key-form";
import { ApiKeySecretDialog, type Revealed } from "./secret-dialog";

/** `/developers/api-keys`: create, list, edit, rotate and revoke the environment's API keys. */
export function ApiKeysPage() {
  const api = useApi();
  const { workspace } = useWorkspace();
  const canManage = hasRole(workspace.role, "developer");
  // A full_access key can call every operation, admin-only ones included (keys have no role), so
  // the server lets only admins and owners create, edit or rotate one (docs/api-keys.md).
  const canManageFullAccess = hasRole(workspace.role, "admin");
  const memberEmails = useMemberEmails();
  const keys = usePaged((after, signal) => api.call((mr) => mr.apiKeys.list({ limit: 50, ...(after ? { after } : {}) }, { signal })), [api]);
  const search = useSearch();
  const [, navigate] = useLocation();
  // `?create` opens the Create API key dialog (the overview's "Create an API key" links here so).
  const asked = new URLSearchParams(search).has("create");
  const [creating, setCreating] = useState(() => canManage && asked);
  // Opened once: a reload or Back does not open the dialog again.
  useEffect(() => {
    if (asked) navigate("/developers/api-keys", { replace: true });
  }, [asked, navigate]);
  const [editing, setEditing] = useState<ApiKey | null>(null);
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
          canManage && (
            <button type="button" className="button button--primary" onClick={() => setCreating(true)}>
              Create API key
            </button>
          )
        }
      />
      {!canManage && (
        <p className="notice" role="note" data-testid="read-only-note">
          You can see the keys and their restrictions. Developers, admins and owners create, edit, rotate and revoke them.
        </p>
      )}
      {canManage && !canManageFullAccess && (
        <p className="notice" role="note" data-testid="full-access-note">
          You can create, edit and rotate sending access keys, and revoke any key. Full access keys can do everything an admin can, so only admins and owners create, edit or rotate them.
        </p>
      )}
      <section className="card card--flush" aria-label="API keys">
        <Loaded state={keys} what="API keys">
          {(page) =>
            page.data.length === 0 && keys.pageNumber === 1 ? (
              <p className="empty">No {api.environment} API keys yet. Create one to send email from your code.</p>
            ) : (
              <KeyTable keys={page.data} memberEmails={memberEmails} canManage={canManage} canManageFullAccess={canManageFullAccess} onEdit={setEditing} onRotate={setRotating} onRevoke={setRevoking} />
            )
          }
        </Loaded>
      </section>
      <Pager paged={keys} label="API keys" />

      <Dialog open={creating} title="Create API key" onClose={() => setCreating(false)}>
        <CreateKeyForm fullAccess={canManageFullAccess} onCreated={reveal} onCancel={() => setCreating(false)} />
      </Dialog>
      <Dialog open={editing !== null} title="Edit API key" onClose={() => setEditing(null)}>
        {editing && (
          <EditKeyForm
            apiKey={editing}
            onCancel={() => setEditing(null)}
            onSaved={() => {
              setEditing(null);
              keys.reload();
            }}
          />
        )}
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
