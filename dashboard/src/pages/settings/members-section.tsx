import { useState } from "react";
import type { Member, Role } from "mailroom";
import { useApi } from "../../api/api-context";
import { useAction, usePaged } from "../../api/use-request";
import { useSession } from "../../auth/session";
import { Card } from "../../components/card";
import { ConfirmDialog } from "../../components/confirm-dialog";
import { ErrorState } from "../../components/error-state";
import { Loaded } from "../../components/loaded";
import { Pager } from "../../components/pager";
import { Table } from "../../components/table";
import { formatDate } from "../../lib/format";
import { RoleOptions, isRole } from "./roles";

/** The workspace's members: change a role, remove someone (listMembers, updateMember, removeMember). */
export function MembersSection() {
  const api = useApi();
  const { session } = useSession();
  const members = usePaged(
    (after, signal) => api.call((mr) => mr.accounts.listMembers({ limit: 100, ...(after ? { after } : {}) }, { signal })),
    [api],
  );
  const [removing, setRemoving] = useState<Member | null>(null);
  const changeRole = useAction(async (member: Member, role: Role) => {
    const updated = await api.call((mr) => mr.accounts.updateMember(member.user_id, { role }));
    members.update((page) => ({ ...page, data: page.data.map((row) => (row.user_id === updated.user_id ? updated : row)) }));
  });

  const table = (rows: Member[]) => {
    // The server refuses to demote or remove a workspace's last owner (409 last_owner); the page
    // does not offer it. (With more than 100 members the count covers the first page only, and
    // the server still has the last word.)
    const owners = rows.filter((row) => row.role === "owner").length;
    return (
      <Table columns={["Name", "Email", "Role", "Joined"]} actions>
        {rows.map((member) => {
          const lastOwner = member.role === "owner" && owners === 1;
          return (
            <tr key={member.user_id} data-testid="member-row">
              <td>
                {member.name ?? "—"}
                {member.user_id === session.user?.id && <span className="muted"> (you)</span>}
              </td>
              <td>{member.email}</td>
              <td>
                <select
                  aria-label={`Role for ${member.email}`}
                  value={member.role}
                  disabled={changeRole.pending || lastOwner}
                  title={lastOwner ? "A workspace needs at least one owner" : undefined}
                  onChange={(event) => {
                    if (isRole(event.target.value)) void changeRole.run(member, event.target.value);
                  }}
                >
                  <RoleOptions />
                </select>
              </td>
              <td className="nowrap">{formatDate(member.joined_at)}</td>
              <td className="table__actions">
                {!lastOwner && (
                  <button
                    type="button"
                    className="button button--small button--danger"
                    aria-label={`Remove ${member.email}`}
                    onClick={() => setRemoving(member)}
                  >
                    Remove
                  </button>
                )}
              </td>
            </tr>
          );
        })}
      </Table>
    );
  };

  return (
    <Card title="Members" flush>
      {changeRole.error !== undefined && <ErrorState error={changeRole.error} title="Could not change the role" compact />}
      <Loaded state={members} what="members" compact>
        {(page) => table(page.data)}
      </Loaded>
      <Pager paged={members} label="Members" />
      <ConfirmDialog
        target={removing}
        title="Remove member?"
        confirmLabel="Remove member"
        onClose={() => setRemoving(null)}
        onConfirm={async (member) => {
          await api.call((mr) => mr.accounts.removeMember(member.user_id));
          members.reload();
        }}
      >
        {(member) => (
          <p>
            <strong>{member.email}</strong> loses access to this workspace at once, in live and in the sandbox.
          </p>
        )}
      </ConfirmDialog>
    </Card>
  );
}
