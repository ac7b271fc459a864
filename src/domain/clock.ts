/** Time as a dependency, so tests can move it (scheduling, leases, expiry, rate windows). */
export interface Clock {
  now(): number; // epoch milliseconds
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to. */
export class ManualClock implements Clock {
  constructor(private ms: number = Date.parse("2026-11-21T10:00:00Z")) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
  set(ms: number): void {
    this.ms = ms;
  }
}

/** A UTC day in milliseconds (no leap seconds: Unix time has none). */
export const DAY_MS = 86_400_000;

export const toIso = (ms: number): string => new Date(ms).toISOString();
export const toIsoOrNull = (ms: number | null | undefined): string | null => (ms == null ? null : toIso(ms));

/** The UTC day of an instant, "YYYY-MM-DD": what usage is counted by. */
export const utcDay = (ms: number): string => toIso(ms).slice(0, 10);

/**
 * The instant (ms) of an RFC 3339 date-time as the contract's `format: date-time` admits it,
 * which includes a leap second (`23:59:60Z`, RFC 3339 §5.6) that Date.parse refuses (NaN, which
 * would reach SQL: a 500 on MySQL, nothing matched on SQLite). A leap second is read as the last
 * millisecond of its minute. NaN only for a string that is no date-time at all.
 */
export function parseInstant(value: string): number {
  return Date.parse(value.replace(/(T\d\d:\d\d):60(?:\.\d+)?/i, "$1:59.999"));
}
