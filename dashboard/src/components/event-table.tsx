import type { Event } from "mailroom";
import { Link } from "wouter";
import { formatPreciseTime } from "../lib/format";
import { Table } from "./table";

/** What an event's data says in words: the remote server's reply, or that it was simulated. */
function eventDetail(event: Event): string {
  const parts: string[] = [];
  if (event.from_status && event.to_status) parts.push(`${event.from_status} → ${event.to_status}`);
  const { response, smtp_code, simulated } = event.data as { response?: unknown; smtp_code?: unknown; simulated?: unknown };
  if (typeof response === "string") parts.push(response);
  else if (typeof smtp_code === "number" || typeof smtp_code === "string") parts.push(`SMTP ${smtp_code}`);
  if (simulated === true) parts.push("simulated");
  return parts.join(" · ");
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
          <td className="muted">{eventDetail(event)}</td>
          <td className="nowrap">
            <time dateTime={event.created_at}>{formatPreciseTime(event.created_at)}</time>
          </td>
        </tr>
      ))}
    </Table>
  );
}
