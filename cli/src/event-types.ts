import type { EventType } from "mailroom";
import type { Args } from "./command.js";
import { UsageError, stringList } from "./command.js";

/** Every event type; a Record, so that the compiler flags a type the contract adds or drops. */
const KNOWN: Record<EventType, true> = {
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

export const EVENT_TYPES = Object.keys(KNOWN) as EventType[];

/**
 * The event types a repeatable, comma-separable flag names (`--events a,b --events c`), checked
 * here so that a typo is a usage error before any request; undefined when the flag is absent.
 */
export function eventTypeList(args: Args, key: string): EventType[] | undefined {
  const given = stringList(args, key, { splitCommas: true });
  if (given === undefined || given.length === 0) return undefined;
  const unknown = given.filter((type) => !(type in KNOWN));
  if (unknown.length > 0) {
    throw new UsageError(`--${key}: unknown event type ${unknown.map((type) => `"${type}"`).join(", ")}; the types are ${EVENT_TYPES.join(", ")}.`);
  }
  return [...new Set(given)] as EventType[];
}
