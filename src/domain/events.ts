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

/**
 * A sending domain's events: one per status it can move into after a check (docs/domains.md
 * #automatic-checks), and the end of a DKIM key rotation (#rotating-dkim-keys). They go to
 * webhook endpoints only: a domain serves both environments and has no message, so they are not
 * rows of `events`.
 */
export const DOMAIN_EVENT_TYPES = ["domain.verified", "domain.temporary_failure", "domain.failed", "domain.dkim_rotated"] as const;

export type DomainEventType = (typeof DOMAIN_EVENT_TYPES)[number];

/** What a webhook endpoint can subscribe to. */
export type WebhookEventType = EventType | DomainEventType;

export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = [...EVENT_TYPES, ...DOMAIN_EVENT_TYPES];

type ContractDomainEventType = components["schemas"]["DomainEventType"];
export const _sameDomainEventTypesAsContract: [Exclude<ContractDomainEventType, DomainEventType> | Exclude<DomainEventType, ContractDomainEventType>] extends [never] ? true : never = true;

/** The event that announces a move into `status`, if that move is announced at all. */
export function eventTypeForStatus(status: MessageStatus): EventType | null {
  switch (status) {
    case "sending":
      return null; // an internal step: the outcome that follows is the event
    default:
      return `message.${status}` as EventType;
  }
}
