// A message's send time as a person picks it: `<input type="datetime-local">` speaks the browser's
// local wall-clock time to the minute, the API RFC 3339 instants (rescheduleMessage).
import type { Event, Message } from "mailroom";

/** How far ahead a message may be scheduled (the contract: at most 30 days). */
export const SCHEDULE_LIMIT_DAYS = 30;

const DAY_MS = 86_400_000;
const pad = (value: number) => String(value).padStart(2, "0");

/** An instant as a datetime-local value: its local date and time, the seconds dropped. */
export function dateTimeInputValue(instant: string | number | Date): string {
  const date = new Date(instant);
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/**
 * A datetime-local value as the RFC 3339 UTC instant it names in the browser's time zone, or
 * undefined when it names none (empty, malformed, or a day that does not exist). A time that a
 * daylight-saving change skips moves forward as Date does; the browser's picker offers it too.
 */
export function dateTimeInputToInstant(value: string): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/.exec(value);
  if (!match) return undefined;
  const [year, month, day, hour, minute] = match.slice(1, 6).map(Number) as [number, number, number, number, number];
  const second = Number(match[6] ?? 0);
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const date = new Date(year, month - 1, day, hour, minute, second);
  // Date rolls February 30 over into March: a month that changed means the day does not exist.
  return date.getMonth() === month - 1 ? date.toISOString() : undefined;
}

/**
 * The range a datetime-local input offers for a new send time: from `now` (the server's) to 30
 * days ahead, and before the message's `expires_at` (the API refuses a time at or after it). The
 * browser keeps a typed time within it; the server still has the last word, by its own clock.
 */
export function scheduleBounds(expiresAt: string | null, now: number): { min: string; max: string } {
  const limit = now + SCHEDULE_LIMIT_DAYS * DAY_MS;
  // The input counts whole minutes and its max is inclusive: the last minute that starts before
  // expires_at is the latest one allowed.
  const latest = expiresAt === null ? limit : Math.min(limit, Date.parse(expiresAt) - 1);
  return { min: dateTimeInputValue(now), max: dateTimeInputValue(latest) };
}

/**
 * The send times a `message.scheduled` event records: `at`, and `previous` when rescheduleMessage
 * moved the message (null on the event of a message accepted for later). Undefined for any other
 * event.
 */
export function scheduleChangeOf(event: Event): { at: string; previous: string | null } | undefined {
  if (event.type !== "message.scheduled") return undefined;
  const data = event.data as Record<string, unknown>;
  if (typeof data.scheduled_at !== "string") return undefined;
  return { at: data.scheduled_at, previous: typeof data.previous_scheduled_at === "string" ? data.previous_scheduled_at : null };
}

/**
 * Whether a scheduled message was sent now, here or through another door: its send time is no
 * later than its last change, as a Send now leaves it (the server sets both to its own clock).
 */
export function isSentNow(message: Pick<Message, "scheduled_at" | "updated_at">): boolean {
  return message.scheduled_at !== null && Date.parse(message.scheduled_at) <= Date.parse(message.updated_at);
}

/**
 * Whether a scheduled message is due now, the worker's to send next: its send time has come by
 * the server's clock (`sendTimeReached`: the browser's clock, which may be off, is not asked), or
 * it was sent now, which the page's reading of the server's clock may trail by a second.
 */
export function isDueNow(message: Pick<Message, "status" | "scheduled_at" | "updated_at">, sendTimeReached: boolean): boolean {
  return message.status === "scheduled" && (sendTimeReached || isSentNow(message));
}
