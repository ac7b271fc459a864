import type { Environment } from "./environments.js";
import type { DomainEventType } from "./events.js";
import type { DomainStatus } from "./domain-status.js";
import type { components } from "../../generated/v1.js";

type Domain = components["schemas"]["Domain"];
export type DomainEvent = components["schemas"]["DomainEvent"];

/**
 * The event announcing a move into `to`, if that move is announced: every status a check can
 * move a domain into has one; `pending` is where a domain starts, never where a check takes it.
 */
export function domainEventTypeFor(to: DomainStatus): DomainEventType | null {
  return to === "pending" ? null : `domain.${to}`;
}

/** A domain's status change, as every receiving endpoint gets it but for its own environment. */
export interface DomainAnnouncement {
  id: string;
  type: DomainEventType;
  createdAt: number;
  /** The JSON body for endpoints of each environment. */
  payloads: Record<Environment, string>;
}

/** The payload of a domain event (the contract's DomainEvent) for an endpoint of `environment`. */
export function domainEvent(id: string, type: DomainEventType, createdAt: string, environment: Environment, domain: Domain, from: DomainStatus, missingRecords: readonly string[], extra: Record<string, unknown> = {}): DomainEvent {
  return {
    id,
    object: "event",
    type,
    created_at: createdAt,
    environment,
    domain_id: domain.id,
    from_status: from,
    to_status: domain.status,
    domain,
    data: { missing_records: [...missingRecords], ...extra },
  };
}
