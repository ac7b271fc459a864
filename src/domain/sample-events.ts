import { domainEvent } from "./domain-events.js";
import { missingRecords, recordsFor } from "./domain-records.js";
import type { DomainStatus } from "./domain-status.js";
import type { Environment } from "./environments.js";
import type { DomainEventType, EventType, WebhookEventType } from "./events.js";
import type { MessageStatus } from "./message-status.js";

/**
 * The transition each event type announces in a sample (testWebhook): what a real event of that
 * type carries, so a receiver can be tested against realistic payloads. An outcome is its
 * recipient's transition (a recipient is never `sending`: the message is); the failed sample is
 * an expiry, after deferrals. Engagement events change no status.
 */
const TRANSITIONS: Record<EventType, [MessageStatus | null, MessageStatus | null]> = {
  "message.queued": [null, "queued"],
  "message.scheduled": [null, "scheduled"],
  "message.delivered": ["queued", "delivered"],
  "message.deferred": ["queued", "deferred"],
  "message.bounced": ["queued", "bounced"],
  "message.failed": ["deferred", "failed"],
  "message.suppressed": ["queued", "suppressed"],
  "message.canceled": ["scheduled", "canceled"],
  "message.opened": [null, null],
  "message.clicked": [null, null],
  "message.complained": [null, null],
  "message.unsubscribed": [null, null],
  "message.replied": [null, null],
};

const MINUTE = 60_000;
const BROWSER = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148";
const CLIENT_IP = "203.0.113.7";
const MX = "mx1.example.com[203.0.113.25]";
const BOUNCE = "550 5.1.1 The email account that you tried to reach does not exist";

/**
 * What `data` holds in a sample of each message event type: the fields a real event of the type
 * carries (the contract's Event.data, and what the sandbox's simulator sends), with made-up
 * values, so that a receiver tested with samples reads the fields it will be sent. `at` is the
 * sample's time; a test in test/integration/webhooks.test.ts holds these to the simulator's events.
 */
function sampleData(type: EventType, at: number): Record<string, unknown> {
  switch (type) {
    case "message.queued":
      return {};
    case "message.scheduled":
      // As at creation (a reschedule adds previous_scheduled_at).
      return { scheduled_at: new Date(at + 60 * MINUTE).toISOString() };
    case "message.delivered":
      return { smtp_code: 250, enhanced_status: "2.0.0", response: "250 2.0.0 OK: queued as 4Xyz1", remote_host: MX, attempt: 1 };
    case "message.deferred":
      return { smtp_code: 451, enhanced_status: "4.7.1", response: "451 4.7.1 Greylisted, try again later", remote_host: MX, attempt: 1, next_attempt_at: new Date(at + 5 * MINUTE).toISOString() };
    case "message.bounced":
      return { smtp_code: 550, enhanced_status: "5.1.1", response: BOUNCE, remote_host: MX, attempt: 1, bounce_type: "hard", action: "failed", diagnostic_code: `smtp; ${BOUNCE}`, reporting_mta: "mx1.example.com" };
    case "message.failed":
      return { smtp_code: null, enhanced_status: "4.4.7", response: "Delivery time expired after 6 attempts; last answer: 451 4.7.1 Greylisted, try again later", attempts: 6 };
    case "message.suppressed":
      return { reason: "hard_bounce", suppression_id: "sup_00000000000000000000000000" };
    case "message.canceled":
      return { recipients: ["ada@example.com"] };
    case "message.opened":
      return { user_agent: BROWSER, ip: CLIENT_IP, machine_open: false, first_open: true };
    case "message.clicked":
      return { url: "https://example.com/orders/1042", user_agent: BROWSER, ip: CLIENT_IP, machine_click: false, first_click: true };
    case "message.complained":
      return { feedback_type: "abuse", user_agent: "ExampleFBL/1.0", reporting_mta: "fbl.example.net", source_ip: "192.0.2.25" };
    case "message.unsubscribed":
      return { method: "one_click", user_agent: BROWSER, ip: CLIENT_IP };
    case "message.replied":
      return {
        inbound_id: "inb_00000000000000000000000000",
        from: "Ada Lovelace <ada@example.com>",
        subject: "Re: Your receipt",
        text: "Thanks, that arrived.",
        quoted_text: "On Mon, 30 Nov 2026 09:00:00 GMT, Acme <hello@acme.example> wrote:\n> Your receipt",
        html: null,
        attachments: [],
        authentication: { spf: "pass", dkim: "pass", dmarc: "pass" },
        threaded_by: "reply_address",
      };
  }
}

/** The event types about a whole message, not one of its recipients: their `recipient` is null. */
const WHOLE_MESSAGE: ReadonlySet<EventType> = new Set(["message.queued", "message.scheduled", "message.canceled"]);

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
    recipient: WHOLE_MESSAGE.has(type) ? null : "ada@example.com",
    sequence: 1,
    from_status,
    to_status,
    tags: ["test"],
    metadata: {},
    idempotency_key: null,
    data: { ...sampleData(type, Date.parse(createdAt)), test: true },
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
