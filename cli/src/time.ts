import { UsageError } from "./command.js";

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * An instant for --schedule, --created-after, --expires-at…: RFC 3339 (`2026-12-01T09:00:00Z`) or
 * a duration from now (`10m`, `2h`, `1d`, optionally `in 10m`). Answers RFC 3339 UTC, as the API
 * wants it.
 */
export function parseInstant(value: string, flag: string, now = Date.now()): string {
  const relative = /^(?:in\s+)?(\d+)\s*([smhd])$/i.exec(value.trim());
  if (relative) {
    const unit = (relative[2] as string).toLowerCase() as keyof typeof UNIT_MS;
    return new Date(now + Number(relative[1]) * UNIT_MS[unit]).toISOString();
  }
  const date = rfc3339(value.trim());
  if (date === undefined) {
    throw new UsageError(`--${flag} takes an RFC 3339 time with its offset (2026-12-01T09:00:00Z) or a duration from now (10m, 2h, 1d); got "${value}".`);
  }
  return date.toISOString();
}

/** A past instant for --since: a duration ago (`10m`) or RFC 3339. */
export function parsePastInstant(value: string, flag: string, now = Date.now()): string {
  const relative = /^(\d+)\s*([smhd])$/i.exec(value.trim());
  if (!relative) return parseInstant(value, flag, now);
  const unit = (relative[2] as string).toLowerCase() as keyof typeof UNIT_MS;
  return new Date(now - Number(relative[1]) * UNIT_MS[unit]).toISOString();
}

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
