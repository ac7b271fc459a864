import type { Actor, ApiKey } from "mailroom";
import { serverClock } from "../../api/server-clock";
import { Table } from "../../components/table";
import { describeActor, type MemberEmails } from "../../lib/actors";
import { describeRestrictions } from "../../lib/api-key-restrictions";
import { PERMISSION_LABELS, formatDate, formatDateTime } from "../../lib/format";

type KeyStatus = "active" | "expired" | "revoked";

/** `now`: the server's clock, which decides when a key stops working (a browser's may be hours off). */
function statusOf(key: ApiKey, now: number): KeyStatus {
  if (key.revoked_at) return "revoked";
  if (key.expires_at && Date.parse(key.expires_at) <= now) return "expired";
  return "active";
}

interface KeyTableProps {
  keys: ApiKey[];
  /** To name the members who created keys; their user ids show without it. */
  memberEmails: MemberEmails;
  /** Developers and above: Edit, Rotate and Revoke on each key not yet revoked. */
  canManage: boolean;
  /** Admins and owners: Edit and Rotate on full_access keys too (below admin, Revoke only). */
  canManageFullAccess: boolean;
  onEdit: (key: ApiKey) => void;
  onRotate: (key: ApiKey) => void;
  onRevoke: (key: ApiKey) => void;
}

/** The environment's keys, each with its restrictions under its name and its creator under its date. */
export function KeyTable({ keys, memberEmails, canManage, canManageFullAccess, onEdit, onRotate, onRevoke }: KeyTableProps) {
  const keyNames = new Map(keys.map((key) => [key.id, key.name] as const));
  return (
    <Table columns={["Name", "Key", "Permission", "Created", "Last used", "Expires", "Status"]} actions={canManage}>
      {keys.map((key) => {
        const status = statusOf(key, serverClock.now());
        const restrictions = describeRestrictions(key.restrictions);
        const mayChange = canManageFullAccess || key.permission !== "full_access";
        return (
          <tr key={key.id} data-testid="api-key-row">
            <td>
              {key.name}
              {restrictions && (
                <p className="muted api-keys__restrictions" data-testid="api-key-restrictions">
                  {restrictions}
                </p>
              )}
            </td>
            <td className="mono nowrap">{key.redacted_key}</td>
            <td className="nowrap">{PERMISSION_LABELS[key.permission]}</td>
            <td>
              <span className="nowrap">{formatDate(key.created_at)}</span>
              {key.created_by && <CreatedBy actor={key.created_by} name={describeActor(key.created_by, memberEmails, keyNames).name} />}
            </td>
            <td className="nowrap">
              {formatDateTime(key.last_used_at, "Never")}
              {key.last_used_ip && <span className="muted"> from <span className="mono">{key.last_used_ip}</span></span>}
            </td>
            <td className="nowrap">{formatDate(key.expires_at, "Never")}</td>
            <td>
              <span className={`badge badge--key-${status}`} data-testid="api-key-status">
                {status}
              </span>
            </td>
            {canManage && (
              <td className="table__actions">
                {status !== "revoked" && (
                  <div className="table__button-group">
                    {mayChange && (
                      <>
                        <button type="button" className="button button--small" aria-label={`Edit ${key.name}`} onClick={() => onEdit(key)}>
                          Edit
                        </button>
                        <button type="button" className="button button--small" aria-label={`Rotate ${key.name}`} onClick={() => onRotate(key)}>
                          Rotate
                        </button>
                      </>
                    )}
                    <button
                      type="button"
                      className="button button--small button--danger"
                      aria-label={`Revoke ${key.name}`}
                      onClick={() => onRevoke(key)}
                    >
                      Revoke
                    </button>
                  </div>
                )}
              </td>
            )}
          </tr>
        );
      })}
    </Table>
  );
}

/** "by ada@acme.example", "by key Checkout service": who created a key, under its date. */
function CreatedBy({ actor, name }: { actor: Actor; name: string }) {
  return (
    <p className="muted api-keys__created-by" data-testid="api-key-created-by">
      by {actor.type === "api_key" ? "key " : ""}
      <span className={name === actor.id ? "mono wrap-anywhere" : "wrap-anywhere"}>{name}</span>
    </p>
  );
}
