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

/** The types the event list has: what `events list|tail` filter by and `listen` forwards. */
export const EVENT_TYPES = Object.keys(MESSAGE_TYPES) as EventType[];
/** The types webhook endpoints take: what `webhooks create|update|test` name. */
export const WEBHOOK_EVENT_TYPES = Object.keys(KNOWN) as WebhookEventType[];

/**
 * The one flag every command that takes event types has (`events list|tail`, `listen`, `webhooks
 * create|update|test`), named as the endpoint's field is (`event_types`). Each command once had
 * its own name for it; all of them stay, as aliases everywhere, so that one spelling works in any
 * command.
 */
export const EVENT_TYPE_FLAG = "event-type";
const ALIASES = ["type", "events"];

/**
 * The yargs option for it: `several` for the commands that take a list (repeatable, or
 * comma-separated), else one type. Its value is checked by eventTypeList or oneEventType.
 */
export function eventTypeFlag(describe: string, { several }: { several: boolean }) {
  return { type: "string", array: several, alias: ALIASES, describe } as const;
}

/**
 * The event types the flag names (`--event-type a,b --event-type c`), checked against `known`
 * here, the same way for every command, so that a typo is a usage error before any request;
 * undefined when the flag is absent.
 */
export function eventTypeList<Type extends WebhookEventType>(args: Args, known: readonly Type[]): Type[] | undefined {
  const given = stringList(args, EVENT_TYPE_FLAG, { splitCommas: true });
  if (given === undefined || given.length === 0) return undefined;
  // Own keys only: `in` would also find "toString" and the rest of Object.prototype.
  const unknown = given.filter((type) => !Object.hasOwn(KNOWN, type));
  if (unknown.length > 0) throw new UsageError(`--${EVENT_TYPE_FLAG}: unknown event type ${quoted(unknown)}; the types are ${known.join(", ")}.`);
  // A real type refused here is a domain's where only the event list's are taken: say why.
  const elsewhere = given.filter((type) => !(known as readonly string[]).includes(type));
  if (elsewhere.length > 0) {
    throw new UsageError(`--${EVENT_TYPE_FLAG}: ${quoted(elsewhere)} go${elsewhere.length === 1 ? "es" : ""} to webhook endpoints only, not to the event list; the types are ${known.join(", ")}.`);
  }
  return [...new Set(given)] as Type[];
}

/** The one event type a command takes (the API's `type`: a filter, a sample), checked as eventTypeList checks them. */
export function oneEventType<Type extends WebhookEventType>(args: Args, known: readonly Type[]): Type | undefined {
  const types = eventTypeList(args, known);
  if (types !== undefined && types.length > 1) throw new UsageError(`--${EVENT_TYPE_FLAG} takes one event type here; got ${quoted(types)}.`);
  return types?.[0];
}

const quoted = (types: string[]) => types.map((type) => `"${type}"`).join(", ");
