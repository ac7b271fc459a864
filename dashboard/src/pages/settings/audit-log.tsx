import { useMemo } from "react";
import type { AuditEvent, ListAuditEventsParams } from "mailroom";
import { Link, useSearchParams } from "wouter";
import { useApi } from "../../api/api-context";
import { useMemberEmails } from "../../api/use-member-emails";
import { useWorkspaceKeyNames } from "../../api/use-workspace-key-names";
import { usePaged } from "../../api/use-request";
import { CopyButton } from "../../components/copy-button";
import { Loaded } from "../../components/loaded";
import { PageHeader } from "../../components/page-header";
import { Pager } from "../../components/pager";
import { Table } from "../../components/table";
import { FilterSelect, UrlFilters } from "../../components/url-filters";
import type { KeyNames, MemberEmails } from "../../lib/actors";
import { AUDITED_OPERATIONS, describeAuditEvent, operationLabel } from "../../lib/audit-log";
import { formatPreciseTime } from "../../lib/format";

const PAGE_SIZE = 25;
// In the query string (`?operation=`), as on the other lists: a filtered view can be shared.
const FILTER_NAMES = ["operation"] as const;
const OPERATION_OPTIONS = AUDITED_OPERATIONS.map((operation) => ({ value: operation, label: operationLabel(operation) }));

function toQuery(params: URLSearchParams): ListAuditEventsParams {
  const operation = params.get("operation");
  // Any operationId, not only those the select offers (a newer server's); never one the API would refuse.
  return operation && /^[a-zA-Z]{1,100}$/.test(operation) ? { operation } : {};
}

/** A member's address, or an id when that is all there is (set in the monospace ids are written in). */
function Name({ text, id }: { text: string; id: string | null }) {
  return <span className={text === id ? "mono break" : "wrap-anywhere"}>{text}</span>;
}

function AuditEventRow({ event, emails, keyNames }: { event: AuditEvent; emails: MemberEmails; keyNames: KeyNames }) {
  const { action, fields, actor, target } = describeAuditEvent(event, emails, keyNames);
  const targetName = target.name === null ? target.kind : <Name text={target.name} id={event.target.id} />;
  return (
    <tr data-testid="audit-event-row" data-operation={event.operation}>
      <td>
        <time dateTime={event.created_at}>{formatPreciseTime(event.created_at)}</time>
      </td>
      <td>
        {action}
        {fields && (
          <span className="muted audit-log__detail" data-testid="audit-event-fields">
            {fields}
          </span>
        )}
      </td>
      <td data-testid="audit-event-actor">
        <Name text={actor.name} id={event.actor.id} />
        {/* A name's id on the line under it, in words (to quote, or to filter the API by actor_id). */}
        <span className="muted audit-log__detail">
          {actor.kind}
          {actor.name !== event.actor.id && (
            <>
              {" "}
              <code className="break">{event.actor.id}</code>
            </>
          )}
        </span>
      </td>
      <td data-testid="audit-event-target">
        {target.href ? <Link href={target.href}>{targetName}</Link> : targetName}
        {target.name !== null && <span className="muted audit-log__detail">{target.kind}</span>}
      </td>
      <td className="mono wrap-anywhere">{event.ip_address ?? "—"}</td>
      <td className="nowrap">
        {/* Cut short to fit the row: the whole id is in the title and on the clipboard. */}
        <code className="audit-log__request-id" title={event.request_id}>
          {event.request_id}
        </code>
        <CopyButton text={event.request_id} accessibleName={`Copy request ID ${event.request_id}`} />
      </td>
    </tr>
  );
}

/**
 * `/settings/audit-log`: who changed what, newest first (listAuditEvents, admins and owners; the
 * server answers anyone else 403, shown as such), members named by their addresses (listMembers)
 * and API keys by their names (listApiKeys, in both environments), each with its id.
 */
export function AuditLogPage() {
  const api = useApi();
  const [params] = useSearchParams();
  const query = useMemo(() => toQuery(params), [params]);
  const paged = usePaged(
    (after, signal) => api.call((mr) => mr.auditEvents.list({ ...query, limit: PAGE_SIZE, ...(after ? { after } : {}) }, { signal })),
    [api, query],
  );
  const emails = useMemberEmails();
  const keyNames = useWorkspaceKeyNames();

  return (
    <>
      <Link href="/settings" className="back-link">
        ← Settings
      </Link>
      <PageHeader
        title="Audit log"
        description="Who changed this environment's API keys and webhook endpoints, and what both environments share: settings, domains, templates, members and invitations. Newest first; the names of the fields changed are kept, never their values."
      />
      <UrlFilters params={params} names={FILTER_NAMES}>
        <FilterSelect name="operation" label="Change" anyLabel="All changes" options={OPERATION_OPTIONS} params={params} />
      </UrlFilters>
      <section className="card card--flush" aria-label="Audit log">
        <Loaded state={paged} what="the audit log">
          {({ data }) =>
            data.length === 0 ? (
              <p className="empty">{Object.keys(query).length > 0 ? "No changes match this filter." : "No changes recorded yet."}</p>
            ) : (
              <Table className="table table--rows" columns={["Time", "Change", "By", "Target", "IP address", "Request ID"]} busy={paged.loading}>
                {data.map((event) => (
                  <AuditEventRow key={event.id} event={event} emails={emails} keyNames={keyNames} />
                ))}
              </Table>
            )
          }
        </Loaded>
      </section>
      <Pager paged={paged} label="Audit log" />
    </>
  );
}
