import { useMemo } from "react";
import type { RequestLog } from "mailroom";
import { Link, useSearchParams } from "wouter";
import { useApi } from "../../api/api-context";
import { useMemberEmails } from "../../api/use-member-emails";
import { usePaged } from "../../api/use-request";
import { Field } from "../../components/field";
import { Loaded } from "../../components/loaded";
import { PageHeader } from "../../components/page-header";
import { Pager } from "../../components/pager";
import { Table } from "../../components/table";
import { FilterSelect, UrlFilters } from "../../components/url-filters";
import type { MemberEmails } from "../../lib/actors";
import { formatPreciseTime } from "../../lib/format";
import {
  FILTER_NAMES,
  METHODS,
  STATUS_CLASS_OPTIONS,
  credentialOptions,
  describeCredential,
  formatDuration,
  requestLogHref,
  toRequestLogQuery,
  type KeyNames,
} from "../../lib/request-log";
import { useApiKeyNames } from "./api-key-names";
import { HttpStatusBadge } from "./http-status-badge";

const PAGE_SIZE = 25;
const METHOD_OPTIONS = METHODS.map((method) => ({ value: method, label: method }));

function RequestLogRow({ log, keyNames, emails }: { log: RequestLog; keyNames: KeyNames; emails: MemberEmails }) {
  const credential = describeCredential(log.credential, keyNames, emails);
  return (
    <tr data-testid="request-log-row" data-request-id={log.id} data-status={log.status}>
      <td>
        <time dateTime={log.created_at}>{formatPreciseTime(log.created_at)}</time>
      </td>
      <td className="mono nowrap">{log.method}</td>
      <td>
        {/* Cut short to fit the row: the whole path is in the title and on the request's page. */}
        <span className="mono request-log__path" title={log.path}>
          {log.path}
        </span>
      </td>
      <td className="nowrap">
        <HttpStatusBadge status={log.status} />
      </td>
      <td className="mono nowrap" data-testid="request-log-error-code">
        {log.error_code ?? "—"}
      </td>
      <td className="nowrap">{formatDuration(log.duration_ms)}</td>
      <td data-testid="request-log-credential">
        <span className={credential.isId ? "mono break" : "wrap-anywhere"}>{credential.label}</span>
        {/* A name's id on the line under it, in words (to quote, or to filter by). */}
        {!credential.isId && (
          <>
            {" "}
            <code className="muted break request-log__credential-id">{credential.id}</code>
          </>
        )}
      </td>
      <td className="table__actions">
        <Link href={requestLogHref(log.id)} aria-label={`Details of ${log.id}`}>
          Details
        </Link>
      </td>
    </tr>
  );
}

/**
 * `/developers/request-log`: every request this environment's keys and members made to `/v1`,
 * newest first (listRequestLogs, developers and above: the server answers a viewer 403, shown as
 * such), credentials named by the keys' names (listApiKeys) and the members' addresses
 * (listMembers), each with its id.
 */
export function RequestLogPage() {
  const api = useApi();
  const [params] = useSearchParams();
  const query = useMemo(() => toRequestLogQuery(params), [params]);
  const paged = usePaged(
    (after, signal) => api.call((mr) => mr.requestLogs.list({ ...query, limit: PAGE_SIZE, ...(after ? { after } : {}) }, { signal })),
    [api, query],
  );
  const { keys, names } = useApiKeyNames();
  const emails = useMemberEmails();
  const keysSettled = keys.data !== undefined || keys.error !== undefined;

  return (
    <>
      <PageHeader
        title="Request log"
        description={`Every request made to the API in the ${api.environment} environment, with its API keys or by members (this dashboard's own calls too), and how it was answered. Newest first; a request shows up about a second after its answer, and is kept for a limited time.`}
        actions={
          <button type="button" className="button" onClick={paged.reload} disabled={paged.loading}>
            Refresh
          </button>
        }
      />
      {/* Filled again once the keys are known: a select's options cannot pick its value afterwards. */}
      <UrlFilters key={keysSettled ? "keys" : "no-keys"} params={params} names={FILTER_NAMES}>
        <FilterSelect name="status" label="Status" anyLabel="All statuses" options={STATUS_CLASS_OPTIONS} params={params} />
        <Field label="Status code">
          <input name="code" type="text" inputMode="numeric" pattern="[1-5][0-9]{2}" size={5} placeholder="422" defaultValue={params.get("code") ?? ""} />
        </Field>
        <FilterSelect name="method" label="Method" anyLabel="All methods" options={METHOD_OPTIONS} params={params} />
        <Field label="Operation">
          <input name="operation" type="text" placeholder="createMessage" defaultValue={params.get("operation") ?? ""} />
        </Field>
        <FilterSelect
          name="credential_id"
          label="Credential"
          anyLabel="All credentials"
          options={credentialOptions(keys.data ?? [], params.get("credential_id"), emails)}
          params={params}
        />
      </UrlFilters>
      <section className="card card--flush" aria-label="Request log">
        <Loaded state={paged} what="the request log">
          {({ data }) =>
            data.length === 0 ? (
              <p className="empty">{Object.keys(query).length > 0 ? "No requests match these filters." : "No requests logged yet."}</p>
            ) : (
              <Table
                className="table table--rows"
                columns={["Time", "Method", "Path", "Status", "Error", "Duration", "Credential"]}
                actions
                busy={paged.loading}
              >
                {data.map((log) => (
                  <RequestLogRow key={log.id} log={log} keyNames={names} emails={emails} />
                ))}
              </Table>
            )
          }
        </Loaded>
      </section>
      <Pager paged={paged} label="Request log" />
    </>
  );
}
