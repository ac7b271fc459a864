import { useMemo } from "react";
import type { ListMessagesParams, MessageSummary } from "mailroom";
import { Link, useLocation, useSearchParams } from "wouter";
import { useApi } from "../api/api-context";
import { usePaged } from "../api/use-request";
import { Field } from "../components/field";
import { GettingStarted } from "../components/getting-started";
import { Loaded } from "../components/loaded";
import { PageHeader } from "../components/page-header";
import { Pager } from "../components/pager";
import { StatusBadge } from "../components/status-badge";
import { Table } from "../components/table";
import { FilterSelect, TemplateFilter, UrlFilters, useFilterTemplates, useUrlPageTrail, type FilterTemplates } from "../components/url-filters";
import { dateInputToInstant, formatDateTime } from "../lib/format";
import { readForm } from "../lib/forms";
import { MESSAGE_STATUSES, isMessageStatus, messageStatusLabel } from "../lib/message-status";
import { PAGE_PARAM } from "../lib/page-trail";

const PAGE_SIZE = 25;
// The URL's query string holds the filters, so a filtered view can be bookmarked and shared.
// Dates are calendar days in the viewer's time zone; "to" includes its whole day.
const FILTER_NAMES = ["status", "recipient", "tag", "template", "from", "to"] as const;

function toQuery(params: URLSearchParams): ListMessagesParams {
  const status = params.get("status");
  const recipient = params.get("recipient");
  const tag = params.get("tag");
  // A slug (listMessages matches the template a message was rendered from, any version).
  const template = params.get("template");
  const createdAfter = dateInputToInstant(params.get("from") ?? "");
  const createdBefore = dateInputToInstant(params.get("to") ?? "", 1);
  return {
    ...(isMessageStatus(status) ? { status } : {}),
    ...(recipient ? { recipient } : {}),
    ...(tag ? { tag } : {}),
    ...(template ? { template } : {}),
    ...(createdAfter ? { created_after: createdAfter } : {}),
    ...(createdBefore ? { created_before: createdBefore } : {}),
  };
}

function SearchBox() {
  const [, navigate] = useLocation();
  const [, setParams] = useSearchParams();
  return (
    <form
      role="search"
      className="search"
      onSubmit={(event) => {
        const query = readForm(event).text("q");
        if (query === "") return;
        // An id goes straight to its message; anything else is taken as a recipient's address.
        if (/^msg_[A-Za-z0-9]+$/.test(query)) navigate(`/messages/${query}`);
        // A new view starts from its first page.
        else setParams((previous) => ({ ...Object.fromEntries([...previous].filter(([name]) => name !== PAGE_PARAM)), recipient: query }));
      }}
    >
      {/* listMessages' recipient filter is exact: a part of an address finds nothing. */}
      <Field label="Search messages" hint="A message id (msg_…) or a recipient's whole address.">
        <input name="q" type="search" placeholder="msg_… or ada@example.com" />
      </Field>
      <button type="submit" className="button">
        Search
      </button>
    </form>
  );
}

function Filters({ params, templates }: { params: URLSearchParams; templates: FilterTemplates }) {
  return (
    <UrlFilters params={params} names={FILTER_NAMES}>
      <FilterSelect name="status" label="Status" anyLabel="All statuses" options={MESSAGE_STATUSES.map((status) => ({ value: status, label: messageStatusLabel(status) }))} params={params} />
      <Field label="Recipient">
        <input name="recipient" type="text" defaultValue={params.get("recipient") ?? ""} placeholder="ada@example.com" />
      </Field>
      <Field label="Tag">
        <input name="tag" type="text" defaultValue={params.get("tag") ?? ""} />
      </Field>
      <TemplateFilter params={params} templates={templates} />
      <Field label="Created from">
        <input name="from" type="date" defaultValue={params.get("from") ?? ""} />
      </Field>
      <Field label="Created to">
        <input name="to" type="date" defaultValue={params.get("to") ?? ""} />
      </Field>
    </UrlFilters>
  );
}

export function MessagesPage() {
  const api = useApi();
  const [params] = useSearchParams();
  const query = useMemo(() => toQuery(params), [params]);
  const filtered = Object.keys(query).length > 0;
  const paged = usePaged(
    (after, signal) => api.call((mr) => mr.messages.list({ ...query, limit: PAGE_SIZE, ...(after ? { after } : {}) }, { signal })),
    [api, query],
    // The page is in the address beside the filters (`?tag=welcome&page=msg_…`).
    useUrlPageTrail(),
  );
  const templates = useFilterTemplates();

  const page = paged.data;
  const table = (rows: MessageSummary[]) => (
    <Table className="table table--rows" columns={["Status", "To", "Subject", "Tags", "Created"]} busy={paged.loading}>
      {rows.map((message) => (
        <tr key={message.id} data-testid="message-row">
          <td>
            <StatusBadge status={message.status} />
          </td>
          <td>{message.to.join(", ")}</td>
          <td>
            <Link href={`/messages/${message.id}`}>{message.subject || "(no subject)"}</Link>
          </td>
          <td>{message.tags.join(", ")}</td>
          <td className="nowrap">
            <time dateTime={message.created_at}>{formatDateTime(message.created_at)}</time>
          </td>
        </tr>
      ))}
    </Table>
  );

  const header = <PageHeader title="Messages" description="Every message of this environment, newest first." actions={<SearchBox />} />;
  if (page && page.data.length === 0 && !filtered && paged.pageNumber === 1) {
    return (
      <>
        {header}
        <GettingStarted environment={api.environment} />
      </>
    );
  }
  return (
    <>
      {header}
      <Filters params={params} templates={templates} />
      <section className="card card--flush" aria-label="Message log">
        <Loaded state={paged} what="messages">
          {({ data }) => (data.length === 0 ? <p className="empty">No messages match these filters.</p> : table(data))}
        </Loaded>
      </section>
      <Pager paged={paged} label="Messages" />
    </>
  );
}
