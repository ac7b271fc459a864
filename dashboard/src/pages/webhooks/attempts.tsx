import { useId, useState } from "react";
import type { Webhook, WebhookAttempt } from "mailroom";
import { useApi } from "../../api/api-context";
import { useAction, usePaged } from "../../api/use-request";
import { ActionButton } from "../../components/action-button";
import { Card } from "../../components/card";
import { ErrorState } from "../../components/error-state";
import { Field } from "../../components/field";
import { Loaded } from "../../components/loaded";
import { Pager } from "../../components/pager";
import { Table } from "../../components/table";
import { dateInputToInstant, dateInputValue, formatCount, formatPreciseTime } from "../../lib/format";
import { readForm } from "../../lib/forms";
import { attemptResponse } from "../../lib/webhooks";
import { AttemptStatusBadge } from "./webhook-badges";

const PAGE_SIZE = 25;

const COLUMNS = ["Status", "Response", "Event", "Duration", "Time"];

interface AttemptRowProps {
  attempt: WebhookAttempt;
  /** Null for a member who may not redeliver. */
  onRedeliver: ((attempt: WebhookAttempt) => void) | null;
  /** A redelivery is under way (of this event or another): every press would queue one more. */
  redelivering: boolean;
}

function AttemptRow({ attempt, onRedeliver, redelivering }: AttemptRowProps) {
  const [open, setOpen] = useState(false);
  const bodyId = useId();
  const hasBody = attempt.response_body !== null && attempt.response_body !== "";
  return (
    <>
      <tr data-testid="attempt-row" data-status={attempt.status} className={open ? "attempts__row--open" : undefined}>
        <td className="nowrap">
          <AttemptStatusBadge attempt={attempt} />
        </td>
        <td>
          <span className="nowrap" data-testid="attempt-response">{attemptResponse(attempt)}</span>
          {hasBody && (
            <button
              type="button"
              className="button button--small attempts__toggle"
              aria-expanded={open}
              aria-controls={bodyId}
              onClick={() => setOpen((value) => !value)}
            >
              {open ? "Hide body" : "Show body"}
            </button>
          )}
        </td>
        <td className="mono">
          {attempt.event_id}
          <span className="muted"> #{attempt.attempt}</span>
        </td>
        <td className="nowrap">{formatCount(attempt.duration_ms)} ms</td>
        <td className="nowrap">
          <time dateTime={attempt.created_at}>{formatPreciseTime(attempt.created_at)}</time>
        </td>
        {onRedeliver && (
          <td className="table__actions">
            <button
              type="button"
              className="button button--small"
              aria-label={`Redeliver ${attempt.event_id}`}
              disabled={redelivering}
              onClick={() => onRedeliver(attempt)}
            >
              Redeliver
            </button>
          </td>
        )}
      </tr>
      {open && (
        <tr className="attempts__detail">
          <td colSpan={COLUMNS.length + (onRedeliver ? 1 : 0)}>
            {/* The first 2 KB the receiver answered, as text: never rendered as HTML. */}
            <pre id={bodyId} className="attempts__body-text" data-testid="attempt-body">
              {attempt.response_body}
            </pre>
          </td>
        </tr>
      )}
    </>
  );
}

/**
 * replayWebhookEvents: every failed delivery of an event since a day, queued again in order. The
 * result is said beside the button, as the Schedule card's is.
 */
function ReplayForm({ webhook, onReplayed }: { webhook: Webhook; onReplayed: () => void }) {
  const api = useApi();
  const [replayed, setReplayed] = useState<number | null>(null);
  const replay = useAction(async (since: string) => {
    setReplayed(null);
    const result = await api.call((mr) => mr.webhooks.replayEvents(webhook.id, { since }));
    setReplayed(result.count);
    onReplayed();
  });
  return (
    <form
      className="inline-form"
      aria-label="Replay failed events"
      onSubmit={(event) => {
        const since = dateInputToInstant(readForm(event).text("since"));
        if (since) void replay.run(since);
      }}
    >
      <Field label="Replay failed events since" hint="Queues again every failed delivery of an event created on or after this day, oldest first.">
        <input name="since" type="date" required max={dateInputValue()} defaultValue={dateInputValue(-1)} />
      </Field>
      <ActionButton label="Replay failed events" pendingLabel="Replaying…" pending={replay.pending} />
      <span role="status" className="form__status" data-testid="replay-result">
        {replayed !== null && !replay.pending && (replayed === 1 ? "1 failed delivery is queued again." : `${formatCount(replayed)} failed deliveries are queued again.`)}
      </span>
      {replay.error !== undefined && <ErrorState error={replay.error} title="Could not replay the events" compact />}
    </form>
  );
}

interface AttemptsProps {
  webhook: Webhook;
  /** Redeliver and replay: for a developer, while the endpoint is enabled (a disabled one is sent nothing). */
  canResend: boolean;
}

/** listWebhookAttempts, newest first, with the failed ones alone on demand; redeliver and replay. */
export function Attempts({ webhook, canResend }: AttemptsProps) {
  const api = useApi();
  const [failedOnly, setFailedOnly] = useState(false);
  const attempts = usePaged(
    (after, signal) =>
      api.call((mr) =>
        mr.webhooks.listAttempts(webhook.id, { limit: PAGE_SIZE, ...(failedOnly ? { status: "failed" as const } : {}), ...(after ? { after } : {}) }, { signal }),
      ),
    [api, webhook.id, failedOnly],
  );
  const [queued, setQueued] = useState<string | null>(null);
  const redeliver = useAction(async (attempt: WebhookAttempt) => {
    setQueued(null);
    const delivery = await api.call((mr) => mr.webhooks.redeliverEvent(webhook.id, { event_id: attempt.event_id }));
    setQueued(`${delivery.event_id} is queued to be sent again now, with the same webhook-id.`);
    attempts.reload();
  });

  return (
    <Card title="Delivery attempts" flush>
      <div className="card__padded attempts__toolbar">
        <label className="radio">
          <input type="checkbox" checked={failedOnly} onChange={(event) => setFailedOnly(event.target.checked)} />
          Failed attempts only
        </label>
        <button type="button" className="button button--small" onClick={() => attempts.reload()} disabled={attempts.loading}>
          Refresh
        </button>
      </div>
      {queued && (
        <p className="notice notice--success" role="status" data-testid="redeliver-result">
          {queued}
        </p>
      )}
      {redeliver.error !== undefined && <ErrorState error={redeliver.error} title="Could not redeliver the event" compact />}
      <Loaded state={attempts} what="the attempts">
        {({ data }) =>
          data.length === 0 && attempts.pageNumber === 1 ? (
            <p className="empty">
              {failedOnly ? "No failed attempts." : "No attempts yet. Events are sent as they happen; send a test event to try the endpoint now."}
            </p>
          ) : (
            <Table columns={COLUMNS} actions={canResend} busy={attempts.loading}>
              {data.map((attempt) => (
                <AttemptRow
                  key={attempt.id}
                  attempt={attempt}
                  onRedeliver={canResend ? (target) => void redeliver.run(target) : null}
                  redelivering={redeliver.pending}
                />
              ))}
            </Table>
          )
        }
      </Loaded>
      <Pager paged={attempts} label="Attempts" />
      {canResend && (
<ReplayForm webhook={webhook} onReplayed={() => attempts.reload()} />
      )}
    </Card>
  );
}
