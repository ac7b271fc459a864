import type { Args } from "./command.js";
import { UsageError, optionalString } from "./command.js";

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * A duration: a number and a unit, `s`, `m`, `h` or `d`, in lower case only (`1M` would be a month
 * to some and a minute to others, so it is refused rather than guessed).
 */
const DURATION = /^(\d+)\s*([smhd])$/;
/** A duration from now, as --schedule takes it: `10m`, or `in 10m` (`in` in any case). */
const FROM_NOW = /^(?:[Ii][Nn]\s+)?(\d+)\s*([smhd])$/;

/**
 * An instant for --schedule, --expires-at, --at: RFC 3339 (`2026-12-01T09:00:00Z`) or a duration
 * from now (`10m`, `2h`, `1d`, optionally `in 10m`). Answers RFC 3339 UTC, as the API wants it.
 */
export function parseInstant(value: string, flag: string, now = Date.now()): string {
  const relative = fromNow(value);
  if (relative) return instant(now + Number(relative[1]) * UNIT_MS[relative[2] as keyof typeof UNIT_MS], value, flag);
  const date = rfc3339(value.trim());
  if (date === undefined) {
    throw new UsageError(`--${flag} takes an RFC 3339 time with its offset (2026-12-01T09:00:00Z) or a duration from now (10m, 2h, 1d); got "${value}".`);
  }
  return date.toISOString();
}

/**
 * A past instant for --since, --created-after, --created-before: a duration ago (`10m`) or RFC
 * 3339. `in 10m` is refused: a time to come is no start of a history.
 */
export function parsePastInstant(value: string, flag: string, now = Date.now()): string {
  const relative = DURATION.exec(value.trim());
  if (relative) return instant(now - Number(relative[1]) * UNIT_MS[relative[2] as keyof typeof UNIT_MS], value, flag);
  const date = rfc3339(value.trim());
  if (date === undefined) {
    throw new UsageError(`--${flag} takes an RFC 3339 time with its offset (2026-11-01T00:00:00Z) or a duration ago (10m, 2h, 1d); got "${value}".`);
  }
  return date.toISOString();
}

/** `in 10m` or `10m`, with its number and unit. */
const fromNow = (value: string) => FROM_NOW.exec(value.trim());

/**
 * A time in ms as RFC 3339, or a usage error for one past what a Date holds (toISOString would
 * throw a RangeError) or outside the years 0000 to 9999 RFC 3339 can write.
 */
function instant(ms: number, value: string, flag: string): string {
  const date = new Date(ms);
  const year = date.getUTCFullYear();
  if (!Number.isFinite(date.getTime()) || year < 0 || year > 9999) throw new UsageError(`--${flag}: "${value}" is too far from now to be a time.`);
  return date.toISOString();
}

/**
 * Refuses a time relative to now (`10m`) in one of `flags` when the user gave their own
 * --idempotency-key: each run reads it anew, so a rerun would send another absolute time under the
 * same key, and the server would refuse it (422 idempotency_key_reused) although the first run
 * succeeded. An absolute time makes the rerun the same request.
 */
export function refuseRelativeWithKey(args: Args, flags: string[]): void {
  if (optionalString(args, "idempotency-key") === undefined) return;
  for (const flag of flags) {
    const value = optionalString(args, flag);
    if (value === undefined || !fromNow(value)) continue;
    throw new UsageError(
      `--${flag} ${value} is relative to now, so running this again with the same --idempotency-key would ask for another time and be refused (idempotency_key_reused): give an absolute RFC 3339 time instead (${absoluteExample(flag)}).`,
    );
  }
}

/** An example of the absolute time a flag takes, for the message above. */
const absoluteExample = (flag: string) => (flag === "since" ? "2026-11-01T00:00:00Z" : "2026-12-01T09:00:00Z");

/**
 * RFC 3339 date-time: the offset is required (a bare local time would mean something different on
 * every machine), and a day that does not exist (February 30) is refused rather than rolled over.
 */
function rfc3339(value: string): Date | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.exec(value);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day || hour > 23 || minute > 59 || second > 60) return undefined;
  const date = new Date(value.replace(" ", "T"));
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/**
 * A UTC day for --from and --to: `YYYY-MM-DD`, and a day that exists (checked here, so that a
 * typo is a usage error rather than a round trip).
 */
export function parseDay(value: string, flag: string): string {
  const day = value.trim();
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (match) {
    const [year, month, date] = match.slice(1, 4).map(Number) as [number, number, number];
    const calendar = new Date(Date.UTC(year, month - 1, date));
    if (calendar.getUTCMonth() === month - 1 && calendar.getUTCDate() === date) return day;
  }
  throw new UsageError(`--${flag} takes a day as YYYY-MM-DD (2026-11-01); got "${value}".`);
}
