import { APIError, type RequestLog } from "mailroom";
import { Link } from "wouter";
import { useApi } from "../../api/api-context";
import { useMemberEmails } from "../../api/use-member-emails";
import { useRequest } from "../../api/use-request";
import { Card } from "../../components/card";
import { CopyButton } from "../../components/copy-button";
import { PageHeader } from "../../components/page-header";
import { ResourcePage } from "../../components/resource-page";
import { SummaryList, SummaryRow } from "../../components/summary-list";
import type { MemberEmails } from "../../lib/actors";
import { ENVIRONMENT_LABELS } from "../../lib/environment";
import { formatPreciseTime } from "../../lib/format";
import { REQUEST_LOG_PATH, describeCredential, fieldErrors, formatDuration, type KeyNames } from "../../lib/request-log";
import { useApiKeyNames } from "./api-key-names";
import { HttpStatusBadge } from "./http-status-badge";

const filtered = (name: string, value: string) => `${REQUEST_LOG_PATH}?${new URLSearchParams({ [name]: value }).toString()}`;

/** The problem document the request was answered with, in words and as sent. */
function ProblemCard({ problem }: { problem: NonNullable<RequestLog["error"]> }) {
  const fields = fieldErrors(problem);
  return (
    <Card title="Problem answered" className="request-log__problem">
      <p className="request-log__problem-title" data-testid="request-log-problem-title">
        {problem.title}
      </p>
      {problem.detail && <p data-testid="request-log-problem-detail">{problem.detail}</p>}
      <p>
        Code <code>{problem.code}</code>
      </p>
      {fields.length > 0 && (
        <ul className="error-state__fields" data-testid="request-log-field-errors">
          {fields.map((field, index) => (
            <li key={`${index}${field.at}`}>
              <code>{field.at}</code>: {field.message}
            </li>
          ))}
        </ul>
      )}
      <h3>As sent</h3>
      <pre className="request-log__json" data-testid="request-log-problem-json">
        {JSON.stringify(problem, null, 2)}
      </pre>
    </Card>
  );
}

function RequestLogView({ log, keyNames, emails }: { log: RequestLog; keyNames: KeyNames; emails: MemberEmails }) {
  const credential = describeCredential(log.credential, keyNames, emails);
  const email = log.credential.type === "user" ? emails.get(log.credential.id) : undefined;
  return (
    <>
      <PageHeader title={`${log.method} ${log.path}`} description={log.operation ? <code>{log.operation}</code> : "No operation of the contract"} />
      <SummaryList>
        <SummaryRow label="Status">
          <HttpStatusBadge status={log.status} />
          {log.error_code && (
            <>
              {" "}
              <code data-testid="request-log-error-code">{log.error_code}</code>
            </>
          )}
        </SummaryRow>
        <SummaryRow label="Method">
          <code>{log.method}</code>
        </SummaryRow>
        <SummaryRow label="Path">
          <code className="break">{log.path}</code>
        </SummaryRow>
        <SummaryRow label="Operation">
          {log.operation ? (
            <>
              <code>{log.operation}</code>
              <Link href={filtered("operation", log.operation)} className="request-log__more">
                Requests to this operation
              </Link>
            </>
          ) : (
            "—"
          )}
        </SummaryRow>
        <SummaryRow label="Duration">{formatDuration(log.duration_ms)}</SummaryRow>
        <SummaryRow label="Credential">
          <span data-testid="request-log-credential">
            {credential.kind}{" "}
            {credential.href ? (
              // A key's name (or id) leads to the API keys page; a member is named by their address, when known, and user id.
              <Link href={credential.href}>{credential.isId ? <code className="break">{credential.id}</code> : credential.label}</Link>
            ) : (
              <>
                {email !== undefined && <span className="wrap-anywhere">{email} </span>}
                <code className="break">{credential.id}</code>
              </>
            )}
            {credential.href && !credential.isId && (
              <>
                {" "}
                <code className="break">{credential.id}</code>
              </>
            )}
          </span>
          <Link href={filtered("credential_id", credential.id)} className="request-log__more">
            Requests with this credential
          </Link>
        </SummaryRow>
        <SummaryRow label="Environment">{ENVIRONMENT_LABELS[log.environment]}</SummaryRow>
        <SummaryRow label="IP address">{log.ip_address ? <span className="mono">{log.ip_address}</span> : "—"}</SummaryRow>
        <SummaryRow label="User agent">{log.user_agent ? <span className="mono break">{log.user_agent}</span> : "—"}</SummaryRow>
        <SummaryRow label="Idempotency key">
          {log.idempotency_key ? (
            <>
              <code className="break">{log.idempotency_key}</code>
              {log.idempotent_replayed && " (answered with a replay of the first request's answer)"}
            </>
          ) : (
            "—"
          )}
        </SummaryRow>
        <SummaryRow label="Time">
          <time dateTime={log.created_at}>{formatPreciseTime(log.created_at)}</time>
        </SummaryRow>
        <SummaryRow label="Request ID">
          <code className="break">{log.id}</code> <CopyButton text={log.id} accessibleName={`Copy request ID ${log.id}`} />
        </SummaryRow>
      </SummaryList>
      {log.error ? <ProblemCard problem={log.error} /> : <p className="muted">The request succeeded: the log keeps no bodies, only how it was answered.</p>}
    </>
  );
}

/**
 * `/developers/request-log/:id`: one request by its `Request-Id` (getRequestLog), its credential
 * named (a key by listApiKeys, a member by listMembers), and the problem it was answered with.
 */
export function RequestLogEntryPage({ id }: { id: string }) {
  const api = useApi();
  const log = useRequest((signal) => api.call((mr) => mr.requestLogs.get(id, { signal })), [api, id]);
  const { names } = useApiKeyNames();
  const emails = useMemberEmails();
  const notFound = log.error instanceof APIError && log.error.status === 404;
  return (
    <>
      <ResourcePage back={{ href: REQUEST_LOG_PATH, label: "Request log" }} title="Request" state={log} what="this request">
        {(data) => <RequestLogView log={data} keyNames={names} emails={emails} />}
      </ResourcePage>
      {notFound && (
        <p className="notice" role="note" data-testid="request-log-not-found">
          A request reaches the log about a second after its answer: one made a moment ago may not be here yet, so retry in a moment. Requests older than the
          log's retention have been removed, requests made in the other environment are in its log, and reads of the request log itself are not logged.
        </p>
      )}
    </>
  );
}
