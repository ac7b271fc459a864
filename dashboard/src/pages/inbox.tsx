import type { Message, MessageSummary } from "mailroom";
import { Link } from "wouter";
import { useApi, useWorkspace } from "../api/api-context";
import { usePaged, useRequest, type PagedState } from "../api/use-request";
import { GettingStarted } from "../components/getting-started";
import { Loaded } from "../components/loaded";
import { MessageContent } from "../components/message-content";
import { PageHeader } from "../components/page-header";
import { Pager } from "../components/pager";
import { StatusBadge } from "../components/status-badge";
import { formatDateTime } from "../lib/format";

const PAGE_SIZE = 50;

function InboxMessage({ id }: { id: string }) {
  const api = useApi();
  const message = useRequest((signal) => api.call((mr) => mr.messages.get(id, { signal }), "sandbox"), [api, id]);
  return (
    <Loaded state={message} what="this message">
      {(data) => <InboxMessageView data={data} />}
    </Loaded>
  );
}

function InboxMessageView({ data }: { data: Message }) {
  // The message page shows the top bar's environment, and this is a sandbox message: following
  // "Details and events" switches the top bar to the sandbox, so that from live the page finds
  // the message (not a 404) and the top bar says what it shows. An environment carried in the
  // link instead would leave "Live" and its banner over sandbox data on that page.
  const { setEnvironment } = useWorkspace();
  return (
    <article className="inbox__message" aria-labelledby="inbox-subject">
      <header className="inbox__headers">
        <h2 id="inbox-subject">{data.subject || "(no subject)"}</h2>
        <dl>
          <div>
            <dt>From</dt>
            <dd>{data.from}</dd>
          </div>
          <div>
            <dt>To</dt>
            <dd>{data.to.join(", ")}</dd>
          </div>
          {data.cc.length > 0 && (
            <div>
              <dt>Cc</dt>
              <dd>{data.cc.join(", ")}</dd>
            </div>
          )}
          <div>
            <dt>Date</dt>
            <dd>{formatDateTime(data.created_at)}</dd>
          </div>
        </dl>
        <p>
          <StatusBadge status={data.status} />{" "}
          <Link href={`/messages/${data.id}`} onClick={() => setEnvironment("sandbox")}>Details and events</Link>
        </p>
      </header>
      <MessageContent message={data} />
    </article>
  );
}

function InboxPanes({
  list,
  messages,
  selectedId,
}: {
  list: PagedState<MessageSummary>;
  messages: MessageSummary[];
  selectedId: string | undefined;
}) {
  return (
    <div className="inbox card card--flush">
      <nav className="inbox__list" aria-label="Sandbox messages">
        <ul>
          {messages.map((message) => (
            <li key={message.id}>
              <Link
                href={`/inbox/${message.id}`}
                className="inbox__item"
                aria-current={message.id === selectedId ? "true" : undefined}
                data-testid="inbox-message"
              >
                <span className="inbox__from">{message.from}</span>
                <span className="inbox__time">{formatDateTime(message.created_at)}</span>
                <span className="inbox__subject">{message.subject || "(no subject)"}</span>
                <span className="inbox__to">To {message.to.join(", ")}</span>
              </Link>
            </li>
          ))}
        </ul>
        <Pager paged={list} label="Inbox" />
      </nav>
      <section className="inbox__preview" aria-label="Preview">
        {selectedId ? <InboxMessage id={selectedId} /> : <p className="empty">Select a message to preview it.</p>}
      </section>
    </div>
  );
}

/**
 * `/inbox` and `/inbox/:id`: the sandbox's messages as a mail client shows them (Mailpit-like):
 * the list on the left, the selected message on the right. It always reads the sandbox, whatever
 * the top bar's switch says, since only the sandbox keeps mail that was never delivered.
 */
export function InboxPage({ id }: { id?: string }) {
  const api = useApi();
  const list = usePaged(
    (after, signal) => api.call((mr) => mr.messages.list({ limit: PAGE_SIZE, ...(after ? { after } : {}) }, { signal }), "sandbox"),
    [api],
  );
  return (
    <>
      <PageHeader
        title="Sandbox inbox"
        description="Every message sent with a sandbox key, rendered and kept, never delivered."
        actions={
          <button type="button" className="button" onClick={list.reload} disabled={list.loading}>
            Refresh
          </button>
        }
      />
      {api.environment === "live" && (
        <p className="notice">You are in live mode; the inbox still shows the sandbox, because live mail is delivered rather than kept here.</p>
      )}
      <Loaded state={list} what="the sandbox inbox">
        {(page) =>
          page.data.length === 0 && list.pageNumber === 1 ? (
            <GettingStarted environment="sandbox" />
          ) : (
            <InboxPanes list={list} messages={page.data} selectedId={id} />
          )
        }
      </Loaded>
    </>
  );
}
