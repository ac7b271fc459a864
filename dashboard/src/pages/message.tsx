import { useEffect, useEffectEvent, useRef, useState } from "react";
import type { Message, Recipient } from "mailroom";
import { Link } from "wouter";
import { useApi, useWorkspace } from "../api/api-context";
import { collectPages } from "../api/collect-pages";
import { useRequest } from "../api/use-request";
import { useServerTimeReached } from "../api/use-server-time-reached";
import { Card } from "../components/card";
import { ConfirmDialog } from "../components/confirm-dialog";
import { CopyButton } from "../components/copy-button";
import { EventTable } from "../components/event-table";
import { Loaded } from "../components/loaded";
import { MessageContent } from "../components/message-content";
import { PageHeader } from "../components/page-header";
import { ResourcePage } from "../components/resource-page";
import { StatusBadge } from "../components/status-badge";
import { SummaryList, SummaryRow } from "../components/summary-list";
import { Table } from "../components/table";
import { useFocusWhenLost } from "../components/use-focus-when-lost";
import { stampsOf } from "../lib/engagement";
import { formatCount, formatDateTime } from "../lib/format";
import { isCancelable } from "../lib/message-status";
import { hasRole } from "../lib/roles";
import { isDueNow, isSentNow } from "../lib/schedule";
import { Replies } from "./message-replies";
import { MessageSchedule } from "./message-schedule";

// A message rarely has more than a few events per recipient; past this the timeline says so.
const EVENT_CAP = 1000;

// A message due now is taken by the worker within moments: the page reads it again this often,
// for this long, so that it shows what became of the message without a reload.
const FOLLOW_INTERVAL_MS = 1500;
const FOLLOW_FOR_MS = 30_000;

/** What became of the message through the page, said on the line under the summary. */
type Outcome = "sent_now" | "sent_on_time" | "canceled";

function outcomeLine(outcome: Outcome, status: Message["status"]): string {
  switch (outcome) {
    case "sent_now":
      return `Sent now: the message is ${status}.`;
    case "sent_on_time":
      return `Sent at its scheduled time: the message is ${status}.`;
    case "canceled":
      return "Canceled: recipients not yet delivered will not get it.";
  }
}

/** What a message may track (Message.tracking), in words. */
const TRACKED: Array<{ key: keyof Message["tracking"]; label: string }> = [
  { key: "opens", label: "opens" },
  { key: "clicks", label: "clicks" },
  { key: "replies", label: "replies" },
  { key: "unsubscribe", label: "one-click unsubscribe" },
];

/** The template version the message was rendered from, and the layout version around it, each linked to its editor. */
function TemplateUsed({ template }: { template: NonNullable<Message["template"]> }) {
  return (
    <>
      <Link href={`/templates/${template.slug}`}>
        {template.slug} v{template.version}
      </Link>
      {template.layout && (
        <>
          {" in layout "}
          <Link href={`/templates/${template.layout.slug}`}>
            {template.layout.slug} v{template.layout.version}
          </Link>
        </>
      )}
    </>
  );
}

function Summary({ message }: { message: Message }) {
  const list = (values: string[]) => (values.length > 0 ? values.join(", ") : "—");
  const metadata = Object.entries(message.metadata);
  return (
    <SummaryList>
      <SummaryRow label="ID">
        <code>{message.id}</code> <CopyButton text={message.id} label="Copy ID" />
      </SummaryRow>
      <SummaryRow label="Status">
        <StatusBadge status={message.status} />
      </SummaryRow>
      <SummaryRow label="From">{message.from}</SummaryRow>
      <SummaryRow label="To">{list(message.to)}</SummaryRow>
      {message.cc.length > 0 && <SummaryRow label="Cc">{list(message.cc)}</SummaryRow>}
      {message.bcc.length > 0 && <SummaryRow label="Bcc">{list(message.bcc)}</SummaryRow>}
      {message.reply_to.length > 0 && <SummaryRow label="Reply-To">{list(message.reply_to)}</SummaryRow>}
      {message.template && (
        <SummaryRow label="Template">
          <TemplateUsed template={message.template} />
        </SummaryRow>
      )}
      <SummaryRow label="Created">{formatDateTime(message.created_at)}</SummaryRow>
      {message.scheduled_at && <SummaryRow label="Scheduled for">{formatDateTime(message.scheduled_at)}</SummaryRow>}
      <SummaryRow label="Environment">{message.environment}</SummaryRow>
      <SummaryRow label="Tags">{list(message.tags)}</SummaryRow>
      <SummaryRow label="Tracking">
        <span data-testid="message-tracking">{list(TRACKED.filter(({ key }) => message.tracking[key]).map(({ label }) => label))}</span>
      </SummaryRow>
      <SummaryRow label="Engagement">
        <span data-testid="message-engagement">
          {formatCount(message.engagement.opens)} {message.engagement.opens === 1 ? "open" : "opens"} · {formatCount(message.engagement.clicks)}{" "}
          {message.engagement.clicks === 1 ? "click" : "clicks"} · {formatCount(message.engagement.replies)}{" "}
          {message.engagement.replies === 1 ? "reply" : "replies"}
        </span>{" "}
        <span className="muted">(by people: machine opens and link scanners left out)</span>
      </SummaryRow>
      {message.attachments.length > 0 && (
        <SummaryRow label="Attachments">
          <ul className="plain-list">
            {message.attachments.map((attachment) => (
              <li key={`${attachment.filename}:${attachment.content_id ?? ""}`}>
                {attachment.filename}{" "}
                <span className="muted">
                  ({attachment.content_type}, {formatCount(attachment.size)} bytes)
                </span>
              </li>
            ))}
          </ul>
        </SummaryRow>
      )}
      {metadata.length > 0 && (
        <SummaryRow label="Metadata">
          <ul className="plain-list">
            {metadata.map(([key, value]) => (
              <li key={key}>
                <code>{key}</code>: {value}
              </li>
            ))}
          </ul>
        </SummaryRow>
      )}
      {message.idempotency_key && (
        <SummaryRow label="Idempotency key">
          <code>{message.idempotency_key}</code>
        </SummaryRow>
      )}
    </SummaryList>
  );
}

/** The first time a recipient opened, clicked, replied, complained or unsubscribed, if ever. */
function Engagement({ recipient }: { recipient: Recipient }) {
  const stamps = stampsOf(recipient);
  if (stamps.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="plain-list" data-testid="recipient-engagement">
      {stamps.map(({ stamp, at }) => (
        <li key={stamp.key}>
          <span className={`badge badge--engagement badge--${stamp.key}`}>{stamp.label}</span> <time dateTime={at}>{formatDateTime(at)}</time>
        </li>
      ))}
    </ul>
  );
}

function Recipients({ message }: { message: Message }) {
  return (
    <Table columns={["Recipient", "Type", "Status", "Engagement", "Detail", "Updated"]}>
      {message.recipients.map((recipient) => (
        <tr key={`${recipient.type}:${recipient.email}`} data-testid="recipient-row">
          <td>{recipient.name ? `${recipient.name} <${recipient.email}>` : recipient.email}</td>
          <td>{recipient.type}</td>
          <td>
            <StatusBadge status={recipient.status} />
          </td>
          <td>
            <Engagement recipient={recipient} />
          </td>
          <td className="muted">{recipient.detail ?? "—"}</td>
          <td className="nowrap">{formatDateTime(recipient.updated_at)}</td>
        </tr>
      ))}
    </Table>
  );
}

function Headers({ message }: { message: Message }) {
  const headers: [string, string][] = [["Message-ID", message.message_id_header], ...Object.entries(message.headers)];
  return (
    <Table columns={["Header", "Value"]}>
      {headers.map(([name, value]) => (
        <tr key={name}>
          <th scope="row" className="mono">
            {name}
          </th>
          <td className="mono break">{value}</td>
        </tr>
      ))}
    </Table>
  );
}

function Events({ messageId }: { messageId: string }) {
  const api = useApi();
  const events = useRequest(
    (signal) =>
      collectPages((after) => api.call((mr) => mr.messages.listEvents(messageId, { limit: 100, ...(after ? { after } : {}) }, { signal })), {
        cap: EVENT_CAP,
      }),
    [api, messageId],
  );
  return (
    <Loaded state={events} what="events" compact>
      {({ items, capped }) =>
        items.length === 0 ? (
          <p className="muted">No events yet.</p>
        ) : (
          <>
            <EventTable events={items} />
            {capped && <p className="notice">Only the first {formatCount(EVENT_CAP)} events are shown.</p>}
          </>
        )
      }
    </Loaded>
  );
}

function MessageView({ message, onChange }: { message: Message; onChange: (message: Message) => void }) {
  const api = useApi();
  const { workspace } = useWorkspace();
  // cancelMessage and rescheduleMessage need a developer: viewers see the message, not the controls.
  const canSend = hasRole(workspace.role, "developer");
  const [canceling, setCanceling] = useState<Message | null>(null);
  // Two actions take their own control away: Send now when its answer finds the message already
  // taken by a worker (queued, or further: the Schedule card goes), and Cancel message (the message
  // is no longer cancelable; its dialog gives the focus back to a button that is gone). The
  // keyboard's focus then goes to a line saying what became of the message, not to the <body>.
  // A send time that simply came is no doing of the member's: it leaves their focus be.
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const outcomeRef = useRef<HTMLParagraphElement>(null);
  useFocusWhenLost(outcomeRef, outcome === "sent_on_time" ? null : outcome);
  const onScheduleChange = (next: Message) => {
    onChange(next);
    if (next.status !== "scheduled") setOutcome("sent_now");
  };
  // While the message is due now (a Send now, here or elsewhere, or its send time come by the
  // server's clock while the page is open), read it again until it is no longer scheduled: the
  // status, the timeline and the outcome line follow the worker.
  const sendTimeReached = useServerTimeReached(message.scheduled_at);
  const due = isDueNow(message, sendTimeReached);
  const followed = useEffectEvent((next: Message) => {
    onChange(next);
    if (next.status !== "scheduled") setOutcome(isSentNow(message) ? "sent_now" : "sent_on_time");
  });
  useEffect(() => {
    if (!due) return;
    const controller = new AbortController();
    const until = Date.now() + FOLLOW_FOR_MS;
    const timer = setInterval(() => {
      if (Date.now() > until) return clearInterval(timer);
      // A failed read is left for the next one: the page keeps showing what it has.
      api.call((mr) => mr.messages.get(message.id, { signal: controller.signal })).then(followed, () => undefined);
    }, FOLLOW_INTERVAL_MS);
    return () => {
      clearInterval(timer);
      controller.abort();
    };
  }, [api, message.id, due]);
  return (
    <>
      <PageHeader
        title={message.subject || "(no subject)"}
        description={`To ${message.to.join(", ")}`}
        actions={
          canSend &&
          isCancelable(message.status) && (
            <button type="button" className="button button--danger" onClick={() => setCanceling(message)}>
              Cancel message
            </button>
          )
        }
      />
      <ConfirmDialog
        target={canceling}
        title="Cancel this message?"
        confirmLabel="Cancel message"
        dismissLabel="Keep message"
        onClose={() => setCanceling(null)}
        onConfirm={async (target) => {
          onChange(await api.call((mr) => mr.messages.cancel(target.id)));
          setOutcome("canceled");
        }}
      >
        {() => <p>Recipients not yet delivered will not get it. Recipients already delivered keep their status.</p>}
      </ConfirmDialog>
      {!canSend && isCancelable(message.status) && (
        <p className="notice" role="note" data-testid="read-only-note">
          Developers, admins and owners can {message.status === "scheduled" ? "reschedule or cancel" : "cancel"} this message until it is sent.
        </p>
      )}
      <Summary message={message} />
      {canSend && message.status === "scheduled" && <MessageSchedule message={message} due={due} onChange={onScheduleChange} />}
      {/* A live region for as long as the page is shown: screen readers announce a line put into
          one (a send time that came by itself), not reliably one that appears with its region. */}
      <div role="status">
        {outcome !== null && (
          <p ref={outcomeRef} tabIndex={-1} className="notice" data-testid="message-outcome">
            {outcomeLine(outcome, message.status)}
          </p>
        )}
      </div>
      <Card title="Recipients" flush>
        <Recipients message={message} />
      </Card>
      <Card title="Events" flush>
        {/* Keyed by updated_at, which changes with every event: a cancel or a reschedule reloads the timeline. */}
        <Events key={message.updated_at} messageId={message.id} />
      </Card>
      <Card title="Replies">
        <Replies messageId={message.id} />
      </Card>
      <Card title="Content">
        <MessageContent message={message} />
      </Card>
      <Card title="Headers" flush>
        <Headers message={message} />
      </Card>
    </>
  );
}

/** `/messages/:id`: everything about one message. */
export function MessagePage({ id }: { id: string }) {
  const api = useApi();
  const message = useRequest((signal) => api.call((mr) => mr.messages.get(id, { signal })), [api, id]);
  return (
    <ResourcePage back={{ href: "/messages", label: "Messages" }} title="Message" state={message} what="this message">
      {(data) => <MessageView message={data} onChange={(next) => message.update(() => next)} />}
    </ResourcePage>
  );
}
