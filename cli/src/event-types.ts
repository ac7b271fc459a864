import type { DomainEventType, EventType, WebhookEventType } from "mailroom";
import type { Args } from "./command.js";
import { UsageError, stringList } from "./command.js";

// Records, so that the compiler flags a type the contract adds or drops.
/** A message's event types: the ones the event list (`listEvents`, which `listen` polls) has. */
const MESSAGE_TYPES: Record<EventType, true> = {
  "message.queued": true,
  "message.scheduled": true,
  "message.delivered": true,
  "message.deferred": true,
  "message.bounced": true,
  "message.failed": true,
  "message.suppressed": true,
  "message.canceled": true,
  "message.opened": true,
  "message.clicked": true,
  "message.complained": true,
  "message.unsubscribed": true,
  "message.replied": true,
};
/** A sending domain's event types: sent to webhook endpoints only, never in the event list. */
const DOMAIN_TYPES: Record<DomainEventType, true> = {
  "domain.verified": true,
  "domain.temporary_failure": true,
  "domain.failed": true,
  "domain.dkim_rotated": true,
};
/** Every type an endpoint can subscribe to; fails to compile should the contract add a third kind. */
const KNOWN: Record<WebhookEventType, true> = { ...MESSAGE_TYPES, ...DOMAIN_TYPES };

/** The types `listen --events` takes. */
export const EVENT_TYPES = Object.keys(MESSAGE_TYPES) as EventType[];
/** The types `webhooks create|update --event-type` and `webhooks test --type` take. */
export const WEBHOOK_EVENT_TYPES = Object.keys(KNOWN) as WebhookEventType[];

/**
 * The event types a repeatable, comma-separable flag names (`--events a,b --events c`), checked
 * against `known` here so that a typo is a usage error before any request; undefined when the
 * flag is absent.
 */
export function eventTypeList<Type extends WebhookEventType>(args: Args, key: string, known: readonly Type[]): Type[] | undefined {
  const given = stringList(args, key, { splitCommas: true });
  if (given === undefined || given.length === 0) return undefined;
  const quoted = (types: string[]) => types.map((type) => `"${type}"`).join(", ");
  // Own keys only: `in` would also find "toString" and the rest of Object.prototype.
  const unknown = given.filter((type) => !Object.hasOwn(KNOWN, type));
  if (unknown.length > 0) throw new UsageError(`--${key}: unknown event type ${quoted(unknown)}; the types are ${known.join(", ")}.`);
  // A real type refused here is a domain's where only the event list's are taken: say why.
  const elsewhere = given.filter((type) => !(known as readonly string[]).includes(type));
  if (elsewhere.length > 0) {
    throw new UsageError(`--${key}: ${quoted(elsewhere)} go${elsewhere.length === 1 ? "es" : ""} to webhook endpoints only, not to the event list; the types are ${known.join(", ")}.`);
  }
  return [...new Set(given)] as Type[];
}
