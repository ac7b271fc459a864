import type { MessageStatus } from "mailroom";

/** Every message status, in lifecycle order (DESIGN §7), for status filters. */
export const MESSAGE_STATUSES = [
  "scheduled",
  "queued",
  "sending",
  "delivered",
  "deferred",
  "bounced",
  "failed",
  "suppressed",
  "canceled",
] as const satisfies readonly MessageStatus[];

// Fails to compile when the contract gains a status this list lacks.
type Missing = Exclude<MessageStatus, (typeof MESSAGE_STATUSES)[number]>;
export const _everyStatusListed: [Missing] extends [never] ? true : never = true;

export function isMessageStatus(value: string | null): value is MessageStatus {
  return (MESSAGE_STATUSES as readonly string[]).includes(value ?? "");
}

/** Statuses a message can still be canceled from (cancelMessage in the contract). */
export function isCancelable(status: MessageStatus): boolean {
  return status === "scheduled" || status === "queued" || status === "deferred";
}

/** A status as the badges show it ("Delivered"; they capitalise it in CSS), for the filters' options. */
export function messageStatusLabel(status: MessageStatus): string {
  return status.charAt(0).toUpperCase() + status.slice(1);
}
