import { statusBadgeClass } from "../../lib/request-log";

/** A request's HTTP status as a pill coloured by its class (2xx, 4xx, 5xx; the colours are in styles.css). */
export function HttpStatusBadge({ status }: { status: number }) {
  return (
    <span className={statusBadgeClass(status)} data-testid="request-log-status">
      {status}
    </span>
  );
}
