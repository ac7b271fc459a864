import { useEffect, useId, useState } from "react";
import type { Member, Role } from "mailroom";
import { useApi, useWorkspace } from "../../api/api-context";
import { useAction, usePaged, useRequest } from "../../api/use-request";
import { useSession } from "../../auth/session";
import { Card } from "../../components/card";
import { ConfirmDialog } from "../../components/confirm-dialog";
import { ErrorState } from "../../components/error-state";
import { Loaded } from "../../components/loaded";
import { Pager } from "../../components/pager";
import { Table } from "../../components/table";
import { formatDate } from "../../lib/format";
import { assignableRoles, mayRemoveMember, ownersAfter, roleChangeToConfirm, soleOwnerId, type OwnersPage } from "../../lib/member-roles";
import { hasRole } from "../../lib/roles";
import { RoleOptions, isRole } from "./roles";

/** A role change waiting for its confirmation (roleChangeToConfirm). */
interface PendingChange {
  member: Member;
  role: Role;
  reason: "grant_owner" | "demote_self";
}

/**
 * The workspace's members: change a role, remove someone, leave (listMembers, updateMember,
 * removeMember, leaveWorkspace). Every member sees the list; the role selects and Remove are
 * offered only where the server would allow them (admins below owner, owners everyone), since it
 * answers the rest with 403. Every member may leave, from their own row, but the last owner.
 */
export function MembersSection({ namesSaved }: { namesSaved: number }) {
  const api = useApi();
  const { workspace } = useWorkspace();
  const { session, refresh } = useSession();
  const actor = workspace.role;
  const lastOwnerReasonId = useId();
  const members = usePaged(
    (after, signal) => api.call((mr) => mr.accounts.listMembers({ limit: 100, ...(after ? { after } : {}) }, { signal })),
    [api],
  );
  // A name saved in Your account (on this page) is shown to every member, you included: ask for the
  // list again, on the page it is on, rather than keep showing the old name until a reload.
  const reloadMembers = members.reload;
  useEffect(() => {
    if (namesSaved > 0) reloadMembers();
  }, [namesSaved, reloadMembers]);
  // The server refuses to demote or remove a workspace's last owner, or let them leave (409
  // last_owner); the page does not offer it. Who that is, the owners say (two are enough to know),
  // not the page of members shown, which may list one owner while another is on the next.
  const owners = useRequest(async (signal): Promise<OwnersPage<Member>> => {
    const { data, has_more } = await api.call((mr) => mr.accounts.listMembers({ role: "owner", limit: 2 }, { signal }));
    return { data, has_more };
  }, [api]);
  const [removing, setRemoving] = useState<Member | null>(null);
  const [confirming, setConfirming] = useState<PendingChange | null>(null);
  const isSelf = (member: Member) => member.user_id === session.user?.id;
  const applyRole = async (member: Member, role: Role) => {
    const updated = await api.call((mr) => mr.accounts.updateMember(member.user_id, { role }));
    const withUpdated = (rows: Member[]) => rows.map((row) => (row.user_id === updated.user_id ? updated : row));
    members.update((page) => ({ ...page, data: withUpdated(page.data) }));
    owners.update((page) => ownersAfter(page, updated));
    // The session holds the member's own role, which decides what every page offers them.
    if (isSelf(member)) refresh();
  };
  const changeRole = useAction(applyRole);
  const chooseRole = (member: Member, role: Role) => {
    const reason = roleChangeToConfirm({ from: member.role, to: role, self: isSelf(member) });
    if (reason === null) void changeRole.run(member, role);
    else setConfirming({ member, role, reason });
  };

  const table = (rows: Member[], soleOwner: string | null) => {
    return (
      <Table columns={["Name", "Email", "Role", "Joined"]} actions>
        {rows.map((member) => {
          const lastOwner = member.user_id === soleOwner;
          const roles = assignableRoles(actor, member.role);
          // Why the last owner's role select and Leave workspace are disabled: one line of words on
          // the row, which both name with aria-describedby (a tooltip is never shown to a keyboard
          // or a touch screen). Only an owner is offered the select, and then the last owner is them.
          const lastOwnerReason = lastOwner && (isSelf(member) || roles.length > 0);
          return (
            <tr key={member.user_id} data-testid="member-row">
              <td>
                {member.name ?? "—"}
                {isSelf(member) && <span className="muted"> (you)</span>}
              </td>
              <td>{member.email}</td>
              <td>
                {roles.length === 0 ? (
                  member.role
                ) : (
                  <select
                    aria-label={`Role for ${member.email}`}
                    value={member.role}
                    disabled={changeRole.pending || lastOwner}
                    aria-describedby={lastOwner ? lastOwnerReasonId : undefined}
                    onChange={(event) => {
                      if (isRole(event.target.value)) chooseRole(member, event.target.value);
                    }}
                  >
                    <RoleOptions roles={roles} />
                  </select>
                )}
              </td>
              <td className="nowrap">{formatDate(member.joined_at)}</td>
              <td className="table__actions">
                {isSelf(member) && (
                  <button
                    type="button"
                    className="button button--small button--danger"
                    disabled={lastOwner}
                    aria-describedby={lastOwner ? lastOwnerReasonId : undefined}
                    onClick={() => setRemoving(member)}
                  >
                    Leave workspace
                  </button>
                )}
                {lastOwnerReason && (
                  <span id={lastOwnerReasonId} className="field__hint members__reason">
                    A workspace needs at least one owner: make someone else an owner first.
                  </span>
                )}
                {!isSelf(member) && !lastOwner && mayRemoveMember(actor, member.role) && (
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
      {!hasRole(actor, "admin") && (
        <p className="card__padded muted" role="note" data-testid="members-read-only-note">
          Admins and owners change members' roles and remove members.
        </p>
      )}
      {/* An admin manages everyone below owner (mayAssign in src/domain/roles.ts): owners' rows show
          their role as text and no Remove, so the card says why, once for every such row. */}
      {actor === "admin" && (
        <p className="card__padded muted" role="note" data-testid="members-owner-note">
          Only an owner can change an owner's role or remove an owner.
        </p>
      )}
      {changeRole.error !== undefined && <ErrorState error={changeRole.error} title="Could not change the role" compact />}
      <Loaded state={members} what="members" compact>
        {(page) => (
          // The rows wait for the owners too, so that the last owner's controls never show enabled first.
          <Loaded state={owners} what="members" compact>
            {(ownerPage) => table(page.data, soleOwnerId(ownerPage))}
          </Loaded>
        )}
      </Loaded>
      <Pager paged={members} label="Members" />
      <ConfirmDialog
        target={confirming}
        title={confirming?.reason === "grant_owner" ? "Make owner?" : "Change your own role?"}
        confirmLabel={confirming?.reason === "grant_owner" ? "Make owner" : `Become ${confirming?.role ?? ""}`}
        onClose={() => setConfirming(null)}
        onConfirm={(change) => applyRole(change.member, change.role)}
      >
        {(change) =>
          change.reason === "grant_owner" ? (
            <p>
              <strong>{change.member.email}</strong> gets full control of this workspace: owners can change anyone's role, other owners' included, and remove
              anyone, you too.
            </p>
          ) : (
            <p>
              You become <strong>{change.role}</strong> in this workspace at once, and lose what only {change.member.role}s may do. Only an admin or an owner
              can give it back.
            </p>
          )
        }
      </ConfirmDialog>
      {/* Your own row leaves (leaveWorkspace, any role); another's removes them. */}
      <ConfirmDialog
        target={removing}
        title={removing !== null && isSelf(removing) ? "Leave workspace?" : "Remove member?"}
        confirmLabel={removing !== null && isSelf(removing) ? "Leave workspace" : "Remove member"}
        onClose={() => setRemoving(null)}
        onConfirm={async (member) => {
          if (!isSelf(member)) {
            await api.call((mr) => mr.accounts.removeMember(member.user_id));
            members.reload();
            owners.reload();
            return;
          }
          await api.call((mr) => mr.accounts.leaveWorkspace());
          // The workspace is gone from the session: asking for it again moves the page to another
          // workspace, or to the No workspace page when there is none left, as after a removal.
          refresh();
        }}
      >
        {(member) =>
          isSelf(member) ? (
            <p>
              You leave <strong>{workspace.name}</strong> and lose access to it at once, in live and in the sandbox, and the invitations you sent that are
              still pending are withdrawn. Only an invitation brings you back.
            </p>
          ) : (
            <p>
              <strong>{member.email}</strong> loses access to this workspace at once, in live and in the sandbox.
            </p>
          )
        }
      </ConfirmDialog>
    </Card>
  );
}
