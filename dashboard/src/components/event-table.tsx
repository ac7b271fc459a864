import type { Event } from "mailroom";
import { Link } from "wouter";
import { eventDetails, userAgentOf } from "../lib/engagement";
import { formatDateTime, formatPreciseTime } from "../lib/format";
import { scheduleChangeOf } from "../lib/schedule";
import { Table } from "./table";

/** A `message.scheduled` event's send time in words: when it is due, and from when a reschedule moved it. */
function scheduleWords(event: Event): string[] {
  const change = scheduleChangeOf(event);
  if (!change) return [];
  return [change.previous ? `moved from ${formatDateTime(change.previous)} to ${formatDateTime(change.at)}` : `for ${formatDateTime(change.at)}`];
}

/** Events as a table, oldest or newest first as given; with a link to each message when asked. */
export function EventTable({ events, showMessage = false }: { events: Event[]; showMessage?: boolean }) {
  return (
    <Table columns={["Event", "Recipient", ...(showMessage ? ["Message"] : []), "Details", "Time"]}>
      {events.map((event) => (
        <tr key={event.id} data-testid="event-row">
          <td>
            <span className={`event-type event-type--${event.type.replace("message.", "")}`}>{event.type}</span>
          </td>
          <td>{event.recipient ?? "all recipients"}</td>
          {showMessage && (
            <td>
              <Link href={`/messages/${event.message_id}`} className="mono">
                {event.message_id}
              </Link>
            </td>
          )}
          <td className="muted" data-testid="event-details">
            {[...eventDetails(event), ...scheduleWords(event)].join(" · ")}
            {userAgentOf(event) && (
              // Long and rarely read whole: one line, cut short, the whole of it on hover.
              <span className="event-user-agent" title={userAgentOf(event)}>
                {userAgentOf(event)}
              </span>
            )}
          </td>
          <td className="nowrap">
            <time dateTime={event.created_at}>{formatPreciseTime(event.created_at)}</time>
          </td>
        </tr>
      ))}
    </Table>
  );
}
