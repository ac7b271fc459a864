import type { MessageStatus } from "mailroom";

/** A message's or recipient's status as a coloured pill (the colours are in styles.css). */
export function StatusBadge({ status }: { status: MessageStatus }) {
  return <span className={`badge badge--${status}`}>{status}</span>;
}
