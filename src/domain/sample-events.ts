import { domainEvent } from "./domain-events.js";
import { missingRecords, recordsFor } from "./domain-records.js";
import type { DomainStatus } from "./domain-status.js";
import type { Environment } from "./environments.js";
import type { DomainEventType, EventType, WebhookEventType } from "./events.js";
import type { MessageStatus } from "./message-status.js";

/**
 * The transition each event type announces in a sample (testWebhook): what a real event of that
 * type carries, so a receiver can be tested against realistic payloads. Engagement events
 * change no status.
 */
const TRANSITIONS: Record<EventType, [MessageStatus | null, MessageStatus | null]> = {
  "message.queued": [null, "queued"],
  "message.scheduled": [null, "scheduled"],
  "message.delivered": ["sending", "delivered"],
  "message.deferred": ["sending", "deferred"],
  "message.bounced": ["sending", "bounced"],
  "message.failed": ["sending", "failed"],
  "message.suppressed": ["queued", "suppressed"],
  "message.canceled": ["scheduled", "canceled"],
  "message.opened": [null, null],
  "message.clicked": [null, null],
  "message.complained": [null, null],
  "message.unsubscribed": [null, null],
  "message.replied": [null, null],
};

/** A sample event of `type`, shaped as a real one of that type is, marked `data.test: true`. */
export function sampleEvent(type: WebhookEventType, environment: Environment, id: string, createdAt: string) {
  return type.startsWith("domain.") ? sampleDomainEvent(type as DomainEventType, environment, id, createdAt) : sampleMessageEvent(type as EventType, environment, id, createdAt);
}

/** A message's event, shaped like GET /v1/events answers. */
function sampleMessageEvent(type: EventType, environment: Environment, id: string, createdAt: string) {
  const [from_status, to_status] = TRANSITIONS[type];
  return {
    id,
    object: "event" as const,
    type,
    created_at: createdAt,
    environment,
    message_id: "msg_00000000000000000000000000",
    recipient: "ada@example.com",
    sequence: 1,
    from_status,
    to_status,
    tags: ["test"],
    metadata: {},
    idempotency_key: null,
    data: { test: true },
  };
}

const HOUR = 3_600_000;

/**
 * The change each domain event type announces in a sample, and when the sample domain started
 * failing (hours before the event): what a real event carries, grace period included.
 */
const DOMAIN_CHANGES: Record<DomainEventType, { from: DomainStatus; to: DomainStatus; failingForHours: number | null; data?: Record<string, unknown> }> = {
  "domain.verified": { from: "pending", to: "verified", failingForHours: null },
  "domain.temporary_failure": { from: "verified", to: "temporary_failure", failingForHours: 0 },
  "domain.failed": { from: "temporary_failure", to: "failed", failingForHours: 72 },
  // The sample domain's key is the rotation's new one; the old pair's records may go.
  "domain.dkim_rotated": { from: "verified", to: "verified", failingForHours: null, data: { selectors: ["mr2611abc-rsa"], retired_selectors: ["mr2605xyz-rsa", "mr2605xyz-ed"] } },
};

/** A domain event about `example.com`, whose RSA DKIM record is the one missing when it fails. */
function sampleDomainEvent(type: DomainEventType, environment: Environment, id: string, createdAt: string) {
  const { from, to, failingForHours, data } = DOMAIN_CHANGES[type];
  const at = Date.parse(createdAt);
  const failingSince = failingForHours === null ? null : at - failingForHours * HOUR;
  const dkim = { selector: "mr2611abc-rsa", dns_value: "v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA" };
  const records = recordsFor("example.com", "bounces.example.com", [dkim], "mail.mailroom.example").map((record) => {
    const missing = failingSince !== null && record.purpose === "dkim";
    return { ...record, status: missing ? ("missing" as const) : ("verified" as const), found: missing ? [] : [record.type === "MX" ? `${record.priority} ${record.value}` : record.value] };
  });
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  const domain = {
    id: "dom_00000000000000000000000000",
    object: "domain" as const,
    name: "example.com",
    status: to,
    return_path_domain: "bounces.example.com",
    dkim: [{ selector: dkim.selector, algorithm: "rsa-sha256" as const }],
    records,
    track_opens: null,
    track_clicks: null,
    tracking_domain: null,
    created_at: iso(at - 30 * 24 * HOUR)!,
    verified_at: iso(failingSince === null ? at : failingSince - 6 * HOUR),
    last_checked_at: createdAt,
    failing_since: iso(failingSince),
    grace_ends_at: iso(failingSince === null ? null : failingSince + 72 * HOUR),
    next_check_at: iso(to === "failed" ? null : at + (to === "verified" ? 6 : 1) * HOUR),
    dkim_rotation: null,
  };
  return domainEvent(id, type, createdAt, environment, domain, from, missingRecords(records), { ...data, test: true });
}
