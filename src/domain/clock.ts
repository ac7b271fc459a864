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
 * A date-time as the contract's `format: date-time` (ajv-formats) admits it: RFC 3339 §5.6, plus
 * its leniencies (any whitespace for the `T`, an offset without minutes or colon: `+01`,
 * `-0230`). Date.parse refuses some of these (`+01`, a leap second), and its NaN would reach SQL
 * (a 500 on MySQL, nothing matched on SQLite), so they are read here instead.
 */
const DATE_TIME = /^(\d{4})-(\d\d)-(\d\d)[Tt\s](\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?:[Zz]|([+-])(\d\d)(?::?(\d\d))?)$/;

/**
 * The instant (ms) of a date-time the contract admits. A leap second (`23:59:60Z`, RFC 3339 §5.6)
 * is read as the last millisecond of its minute; digits past the millisecond are dropped. NaN for
 * anything else, including the one form the format checker lets through that names no instant
 * (hour 24: `24:59:60+01:00`): callers refuse NaN with a 422 at the field.
 */
export function parseInstant(value: string): number {
  const match = DATE_TIME.exec(value);
  if (!match) return NaN;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = [1, 2, 3, 4, 5, 6, 9, 10].map((i) => Number(match[i] ?? 0)) as [number, number, number, number, number, number, number, number];
  const fraction = Number((match[7] ?? "").padEnd(3, "0").slice(0, 3));
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 60 || offsetHours > 23 || offsetMinutes > 59) return NaN;
  const leap = second === 60;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day); // not Date.UTC, which reads years 0-99 as 1900-1999
  date.setUTCHours(hour, minute, leap ? 59 : second, leap ? 999 : fraction);
  const at = date.getTime() - (match[8] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  // A leap second is inserted at the end of a UTC day only.
  if (leap) {
    const utc = new Date(at);
    if (utc.getUTCHours() !== 23 || utc.getUTCMinutes() !== 59) return NaN;
  }
  return at;
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !isLeapYear(year) ? 1 : 0);
}

const isLeapYear = (year: number): boolean => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
