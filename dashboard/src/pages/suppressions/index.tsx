import { useMemo, useState } from "react";
import type { Suppression, SuppressionReason } from "mailroom";
import { Link, useSearchParams } from "wouter";
import { useApi, useWorkspace } from "../../api/api-context";
import { usePaged } from "../../api/use-request";
import { ConfirmDialog } from "../../components/confirm-dialog";
import { Dialog } from "../../components/dialog";
import { Field } from "../../components/field";
import { Loaded } from "../../components/loaded";
import { PageHeader } from "../../components/page-header";
import { Pager } from "../../components/pager";
import { Table } from "../../components/table";
import { FilterSelect, UrlFilters } from "../../components/url-filters";
import { ENVIRONMENT_LABELS } from "../../lib/environment";
import { formatDateTime } from "../../lib/format";
import { hasRole } from "../../lib/roles";
import { SUPPRESSION_REASONS, isSuppressionReason, reasonLabel } from "../../lib/suppressions";
import { AddedNotice, AddSuppressionForm, type AddedSuppression } from "./add-suppression-form";
import { ImportSuppressionsCard } from "./import-suppressions-card";

const PAGE_SIZE = 25;
// Filters live in the query string (`?reason=&email=`), as on the message log: bookmarkable.
const FILTER_NAMES = ["reason", "email"] as const;

interface Filters {
  reason?: SuppressionReason;
  email?: string;
}

function toQuery(params: URLSearchParams): Filters {
  const reason = params.get("reason");
  const email = params.get("email")?.trim();
  return { ...(isSuppressionReason(reason) ? { reason } : {}), ...(email ? { email } : {}) };
}

function FilterForm({ params }: { params: URLSearchParams }) {
  return (
    <UrlFilters params={params} names={FILTER_NAMES}>
      <FilterSelect name="reason" label="Reason" anyLabel="All reasons" options={SUPPRESSION_REASONS.map((reason) => ({ value: reason.id, label: reason.label }))} params={params} />
      {/* listSuppressions matches the whole address, whatever its capitals: the placeholder says so. */}
      <Field label="Email address">
        <input name="email" type="search" defaultValue={params.get("email") ?? ""} placeholder="The whole address" />
      </Field>
    </UrlFilters>
  );
}

function SuppressionTable({ rows, busy, onRemove }: { rows: Suppression[]; busy: boolean; onRemove: ((suppression: Suppression) => void) | null }) {
  return (
    <Table className="table table--rows" columns={["Address", "Reason", "Detail", "Message", "Suppressed"]} actions={onRemove !== null} busy={busy}>
      {rows.map((suppression) => (
        <tr key={suppression.id} data-testid="suppression-row">
          <td className="suppressions__email">{suppression.email}</td>
          <td className="nowrap">
            <span className={`badge badge--reason-${suppression.reason}`}>{reasonLabel(suppression.reason)}</span>
          </td>
          <td className="muted suppressions__detail">{suppression.detail ?? "—"}</td>
          <td>
            {suppression.message_id ? (
              <Link
                href={`/messages/${suppression.message_id}`}
                className="nowrap"
                aria-label={`View message ${suppression.message_id}`}
                title={suppression.message_id}
              >
                View message
              </Link>
            ) : (
              <span className="muted">—</span>
            )}
          </td>
          <td className="nowrap">
            <time dateTime={suppression.created_at}>{formatDateTime(suppression.created_at)}</time>
          </td>
          {onRemove && (
            <td className="table__actions">
              <button
                type="button"
                className="button button--small button--danger"
                aria-label={`Remove ${suppression.email}`}
                onClick={() => onRemove(suppression)}
              >
                Remove
              </button>
            </td>
          )}
        </tr>
      ))}
    </Table>
  );
}

/** The empty list teaches where suppressions come from. */
function NoSuppressions({ environment }: { environment: string }) {
  return (
    <div className="empty empty--teach">
      <p>
        <strong>No suppressed addresses in {environment}.</strong>
      </p>
      <p>
        Mailroom adds an address here when a message to it bounces permanently (a hard bounce) or its recipient complains, and stops sending to it.
        Add addresses yourself when someone unsubscribes or asks not to be written to.
      </p>
    </div>
  );
}

/** `/suppressions`: the environment's suppression list; filter, add, import, remove. */
export function SuppressionsPage() {
  const api = useApi();
  const { workspace } = useWorkspace();
  const canManage = hasRole(workspace.role, "developer");
  const [params] = useSearchParams();
  const query = useMemo(() => toQuery(params), [params]);
  const filtered = Object.keys(query).length > 0;
  const paged = usePaged(
    (after, signal) => api.call((mr) => mr.suppressions.list({ ...query, limit: PAGE_SIZE, ...(after ? { after } : {}) }, { signal })),
    [api, query],
  );
  const [adding, setAdding] = useState(false);
  const [added, setAdded] = useState<AddedSuppression | null>(null);
  const [removing, setRemoving] = useState<Suppression | null>(null);
  const environment = ENVIRONMENT_LABELS[api.environment].toLowerCase();

  return (
    <>
      <PageHeader
        title="Suppressions"
        description={`Addresses the ${environment} environment no longer sends to. Each environment has its own list: switch to see the other.`}
        actions={
          canManage && (
            <button type="button" className="button button--primary" onClick={() => setAdding(true)}>
              Add address
            </button>
          )
        }
      />
      {!canManage && (
        <p className="notice" role="note" data-testid="read-only-note">
          You can see the suppression list. Developers, admins and owners add and remove addresses.
        </p>
      )}
      {added && <AddedNotice added={added} />}
      <FilterForm params={params} />
      <section className="card card--flush" aria-label="Suppression list">
        <Loaded state={paged} what="suppressions">
          {({ data }) =>
            data.length === 0 && paged.pageNumber === 1 ? (
              filtered ? (
                <p className="empty">No suppressions match these filters.</p>
              ) : (
                <NoSuppressions environment={environment} />
              )
            ) : (
              <SuppressionTable rows={data} busy={paged.loading} onRemove={canManage ? setRemoving : null} />
            )
          }
        </Loaded>
      </section>
      <Pager paged={paged} label="Suppressions" />
      {canManage && <ImportSuppressionsCard onImported={paged.reload} />}

      <Dialog open={adding} title="Add an address" onClose={() => setAdding(false)}>
        <AddSuppressionForm
          onCancel={() => setAdding(false)}
          onAdded={(outcome) => {
            setAdding(false);
            setAdded(outcome);
            paged.reload();
          }}
        />
      </Dialog>
      <ConfirmDialog
        target={removing}
        title="Remove suppression?"
        confirmLabel="Remove suppression"
        onClose={() => setRemoving(null)}
        onConfirm={async (suppression) => {
          await api.call((mr) => mr.suppressions.delete(suppression.id));
          if (added?.suppression.id === suppression.id) setAdded(null);
          paged.reload();
        }}
      >
        {(suppression) => (
          <>
            <p>
              Messages from {environment} will be sent to <strong>{suppression.email}</strong> again.
            </p>
            {suppression.reason === "hard_bounce" && (
              <p className="notice notice--warning" role="note" data-testid="hard-bounce-warning">
                This address bounced permanently{suppression.detail ? ` (${suppression.detail})` : ""}. Remove it only if you know it works again:
                another bounce harms your domain's reputation with receivers.
              </p>
            )}
            {suppression.reason === "complaint" && (
              <p className="notice notice--warning" role="note">
                Its recipient marked your mail as spam. Writing to them again risks more complaints.
              </p>
            )}
          </>
        )}
      </ConfirmDialog>
    </>
  );
}
