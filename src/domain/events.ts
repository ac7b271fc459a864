import type { components } from "../../generated/v1.js";
import type { MessageStatus } from "./message-status.js";

/** Event types (DESIGN.md §7). Adding one is an additive change to the contract. */
export const EVENT_TYPES = [
  "message.queued",
  "message.scheduled",
  "message.delivered",
  "message.deferred",
  "message.bounced",
  "message.failed",
  "message.suppressed",
  "message.canceled",
  "message.opened",
  "message.clicked",
  "message.complained",
  "message.unsubscribed",
  "message.replied",
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

// Fails to compile when this list and the contract's EventType enum differ, either way: webhook
// subscriptions and event filters are checked against this list at run time.
type ContractEventType = components["schemas"]["EventType"];
export const _sameEventTypesAsContract: [Exclude<ContractEventType, EventType> | Exclude<EventType, ContractEventType>] extends [never] ? true : never = true;

/** The event that announces a move into `status`, if that move is announced at all. */
export function eventTypeForStatus(status: MessageStatus): EventType | null {
  switch (status) {
    case "sending":
      return null; // an internal step: the outcome that follows is the event
    default:
      return `message.${status}` as EventType;
  }
}
