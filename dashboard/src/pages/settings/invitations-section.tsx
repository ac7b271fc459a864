import { useState } from "react";
import type { Invitation, InvitationWithUrl, Role } from "mailroom";
import { useApi, useWorkspace } from "../../api/api-context";
import { useAction, usePaged } from "../../api/use-request";
import { ActionButton } from "../../components/action-button";
import { Card } from "../../components/card";
import { ConfirmDialog } from "../../components/confirm-dialog";
import { CopyButton } from "../../components/copy-button";
import { ErrorState } from "../../components/error-state";
import { Field } from "../../components/field";
import { Loaded } from "../../components/loaded";
import { Pager } from "../../components/pager";
import { Table } from "../../components/table";
import { formatDate } from "../../lib/format";
import { readForm } from "../../lib/forms";
import { retrySafeRequests } from "../../lib/idempotent-attempt";
import { assignableRoles, mayAssignRole } from "../../lib/member-roles";
import { hasRole } from "../../lib/roles";
import { ROLE_HINT, RoleOptions, isRole } from "./roles";

/** The link of a new invitation: shown once, since only its digest is kept. */
function InvitationLink({ invitation }: { invitation: InvitationWithUrl }) {
  return (
    <div className="notice notice--success" role="status">
      <p>
        Invitation created for <strong>{invitation.email}</strong>. Send them this link; it is shown only once and expires on{" "}
        {formatDate(invitation.expires_at)}.
      </p>
      <div className="secret">
        <code data-testid="invitation-url">{invitation.accept_url}</code>
        <CopyButton text={invitation.accept_url} label="Copy link" />
      </div>
    </div>
  );
}

/**
 * Invite by email and role, list pending invitations, revoke them. Every member sees the list;
 * Invite and Revoke are admins' and owners' (createInvitation, revokeInvitation), and an admin is
 * offered no owner role, neither to invite nor to revoke, as the server refuses both.
 */
export function InvitationsSection() {
  const api = useApi();
  const { workspace } = useWorkspace();
  const canManage = hasRole(workspace.role, "admin");
  const invitable = assignableRoles(workspace.role, null);
  const invitations = usePaged(
    (after, signal) => api.call((mr) => mr.accounts.listInvitations({ limit: 100, ...(after ? { after } : {}) }, { signal })),
    [api],
  );
  const [created, setCreated] = useState<InvitationWithUrl | null>(null);
  const [revoking, setRevoking] = useState<Invitation | null>(null);
  const requests = retrySafeRequests("createInvitation", api);
  const invite = useAction(async (email: string, role: Role, form: HTMLFormElement) => {
    setCreated(null);
    const params = { email, role };
    setCreated(await requests.send(params, (idempotencyKey) => api.call((mr) => mr.accounts.createInvitation(params, { idempotencyKey }))));
    form.reset();
    invitations.reload();
  });

  const table = (rows: Invitation[]) => (
    <Table columns={["Email", "Role", "Invited", "Expires"]} actions>
      {rows.map((invitation) => (
        <tr key={invitation.id} data-testid="invitation-row">
          <td>{invitation.email}</td>
          <td>{invitation.role}</td>
          <td className="nowrap">{formatDate(invitation.created_at)}</td>
          <td className="nowrap">{formatDate(invitation.expires_at)}</td>
          <td className="table__actions">
            {mayAssignRole(workspace.role, invitation.role, null) && (
              <button
                type="button"
                className="button button--small button--danger"
                aria-label={`Revoke invitation for ${invitation.email}`}
                onClick={() => setRevoking(invitation)}
              >
                Revoke
              </button>
            )}
          </td>
        </tr>
      ))}
    </Table>
  );

  return (
    <Card title="Invitations" flush>
      {canManage ? (
        <form
          className="inline-form"
          aria-label="Invite a member"
          onSubmit={(event) => {
            const form = readForm(event);
            const role = form.text("role");
            void invite.run(form.text("email"), isRole(role) ? role : "developer", event.currentTarget);
          }}
        >
          <Field label="Email address">
            <input name="email" type="email" required maxLength={320} autoComplete="off" />
          </Field>
          <Field label="Role" hint={ROLE_HINT}>
            <select name="role" defaultValue="developer">
              <RoleOptions roles={invitable} />
            </select>
          </Field>
          <ActionButton label="Invite" pendingLabel="Inviting…" pending={invite.pending} />
        </form>
      ) : (
        <p className="card__padded muted" role="note" data-testid="invitations-read-only-note">
          Admins and owners invite members and revoke invitations.
        </p>
      )}
      <div className="card__padded">
        {invite.error !== undefined && <ErrorState error={invite.error} title="Could not create the invitation" compact />}
        {created && <InvitationLink invitation={created} />}
      </div>
      <Loaded state={invitations} what="invitations" compact>
        {(page) => (page.data.length === 0 && invitations.pageNumber === 1 ? <p className="empty">No pending invitations.</p> : table(page.data))}
      </Loaded>
      <Pager paged={invitations} label="Invitations" />
      <ConfirmDialog
        target={revoking}
        title="Revoke invitation?"
        confirmLabel="Revoke invitation"
        onClose={() => setRevoking(null)}
        onConfirm={async (invitation) => {
          await api.call((mr) => mr.accounts.revokeInvitation(invitation.id));
          invitations.reload();
        }}
      >
        {(invitation) => (
          <p>
            The link sent to <strong>{invitation.email}</strong> stops working at once.
          </p>
        )}
      </ConfirmDialog>
    </Card>
  );
}
