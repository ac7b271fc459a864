import type { Environment } from "./environments.js";
import type { EventType } from "./events.js";
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

/** A sample event of `type`, shaped like GET /v1/events answers, marked `data.test: true`. */
export function sampleEvent(type: EventType, environment: Environment, id: string, createdAt: string) {
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
