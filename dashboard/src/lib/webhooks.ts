import type { DomainEventType, EventType, Webhook, WebhookAttempt, WebhookDisabledReason, WebhookEventType } from "mailroom";

/** A message's event types (the contract's EventType), in lifecycle order. */
const MESSAGE_EVENT_TYPES = [
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
] as const satisfies readonly EventType[];

/** A sending domain's event types (the contract's DomainEventType): the status it moved into, or the end of a DKIM rotation. */
const DOMAIN_EVENT_TYPES = ["domain.verified", "domain.temporary_failure", "domain.failed", "domain.dkim_rotated"] as const satisfies readonly DomainEventType[];

/** The event types an endpoint can subscribe to, grouped by what they are about, as the pickers show them. */
export const EVENT_TYPE_GROUPS = [
  { label: "Messages", types: MESSAGE_EVENT_TYPES },
  { label: "Domains", types: DOMAIN_EVENT_TYPES },
] as const;

/** Every event type an endpoint can subscribe to (the contract's WebhookEventType). */
const EVENT_TYPES = [...MESSAGE_EVENT_TYPES, ...DOMAIN_EVENT_TYPES] as const;

// Fails to compile when the contract gains an event type, a message's or a domain's, these lists lack.
type Missing = Exclude<WebhookEventType, (typeof EVENT_TYPES)[number]>;
export const _everyTypeListed: [Missing] extends [never] ? true : never = true;

export function isWebhookEventType(value: string): value is WebhookEventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}

/** Why an endpoint is disabled, in words (the contract's WebhookDisabledReason). */
export const DISABLED_REASONS: Record<WebhookDisabledReason, { title: string; detail: string }> = {
  manual: { title: "Disabled by hand", detail: "A member of the workspace disabled this endpoint. Events wait for it and are sent once it is enabled again." },
  gone: {
    title: "Disabled: the receiver answered 410 Gone",
    detail: "A 410 answer says the endpoint no longer exists, so Mailroom stopped sending to it. Events wait; fix the URL or the receiver, then re-enable it.",
  },
  failing: {
    title: "Disabled after 5 days of continuous failure",
    detail: "Every delivery to this endpoint failed for 5 days, so Mailroom stopped sending to it. Events wait; fix the receiver (see the failed attempts), then re-enable it.",
  },
};

/**
 * The endpoint as a page may keep it: without the signing secret that createWebhook and
 * rotateWebhookSecret answer with. That one is shown once (its dialog) and then forgotten, so the
 * page state never holds a secret that admins alone may reveal again.
 */
export function withoutSecret(webhook: Webhook): Webhook {
  const { secret: _secret, ...kept } = webhook;
  return kept;
}

/** Disabled by Mailroom rather than by a person: the case that needs a notice. */
export function disabledByMailroom(webhook: Webhook): boolean {
  return webhook.status === "disabled" && (webhook.disabled_reason === "gone" || webhook.disabled_reason === "failing");
}

/** The event types an endpoint receives, in words. */
export function eventTypesLabel(webhook: Pick<Webhook, "event_types">): string {
  const types = webhook.event_types;
  if (types === null) return "All events";
  return types.length <= 2 ? types.join(", ") : `${types.length} event types`;
}

// WebhookAttempt.error, in words: why there was no usable answer.
const ATTEMPT_ERRORS: Record<string, string> = {
  timeout: "Timed out",
  connection_refused: "Connection refused",
  connection_reset: "Connection reset",
  dns: "The host did not resolve",
  tls: "TLS failed",
  target_not_allowed: "Address not allowed",
  redirect_not_followed: "Redirect not followed",
  network: "Network error",
  secret_unavailable: "Not sent: the signing secret cannot be opened (server key changed)",
  event_missing: "Not sent: the event no longer exists",
};

/** An attempt's answer: its HTTP status, or why there was none. */
export function attemptResponse(attempt: WebhookAttempt): string {
  if (attempt.response_status !== null) return `HTTP ${attempt.response_status}`;
  return attempt.error ? (ATTEMPT_ERRORS[attempt.error] ?? attempt.error) : "No answer";
}
