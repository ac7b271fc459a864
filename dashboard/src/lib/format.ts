// One place for how dates and numbers read, in the user's locale and time zone.
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: "medium" });
const dayLabel = new Intl.DateTimeFormat(undefined, { weekday: "short", day: "numeric", month: "short" });
const precise = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
const utcDate = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeZone: "UTC" });
const integer = new Intl.NumberFormat();
const percent = new Intl.NumberFormat(undefined, { style: "percent", maximumFractionDigits: 1 });
const percentOneDecimal = new Intl.NumberFormat(undefined, { style: "percent", minimumFractionDigits: 1, maximumFractionDigits: 1 });

export function formatDateTime(iso: string | null | undefined, empty = "—"): string {
  return iso ? dateTime.format(new Date(iso)) : empty;
}

/** To the second, for timelines where the order of close events matters. */
export function formatPreciseTime(iso: string): string {
  return precise.format(new Date(iso));
}

export function formatDate(iso: string | null | undefined, empty = "—"): string {
  return iso ? dateOnly.format(new Date(iso)) : empty;
}

/** The calendar day of an instant in UTC: for UTC boundaries such as a monthly quota's reset. */
export function formatUtcDate(iso: string): string {
  return utcDate.format(new Date(iso));
}

export function formatDay(date: Date): string {
  return dayLabel.format(date);
}

export function formatCount(value: number): string {
  return integer.format(value);
}

/** A number of days in words: "1 day", "30 days". */
export function formatDays(days: number): string {
  return `${formatCount(days)} ${days === 1 ? "day" : "days"}`;
}

/** A share, or a dash when there is nothing to divide (0 of 0 is not 0 %). */
export function formatRate(part: number, whole: number): string {
  return whole === 0 ? "—" : percent.format(part / whole);
}

/**
 * A rate the API computed (0..1, above 1 for opens of mail delivered before a short range), to
 * one decimal: "66.7%". A dash when the API answered null: there was nothing to divide by.
 */
export function formatPercent(rate: number | null): string {
  return rate === null ? "—" : percentOneDecimal.format(rate);
}

/** Local midnight `days` days before today's. */
export function startOfDay(daysAgo = 0, now = new Date()): Date {
  return new Date(now.getFullYear(), now.getMonth(), now.getDate() - daysAgo);
}

/** An `<input type="date">` value (local calendar day) as the RFC 3339 instant of its midnight. */
export function dateInputToInstant(value: string, addDays = 0): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return undefined;
  return new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3]) + addDays).toISOString();
}

/** Today's local date as an `<input type="date">` value, `days` days ahead. */
export function dateInputValue(daysAhead = 0, now = new Date()): string {
  const day = new Date(now.getFullYear(), now.getMonth(), now.getDate() + daysAhead);
  const pad = (value: number) => String(value).padStart(2, "0");
  return `${day.getFullYear()}-${pad(day.getMonth() + 1)}-${pad(day.getDate())}`;
}

/** An API key's permission in words (the wire value is snake_case). */
export const PERMISSION_LABELS: Record<"full_access" | "sending_access", string> = { full_access: "Full access", sending_access: "Sending access" };

/** The UTC calendar day `daysAgo` days before today's, as YYYY-MM-DD (the usage API counts UTC days). */
export function utcDay(daysAgo = 0, now = new Date()): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - daysAgo)).toISOString().slice(0, 10);
}

/** A YYYY-MM-DD day as a local Date of that calendar day, for labels (formatDay) that name the day itself. */
export function calendarDay(value: string): Date {
  const [year = 1970, month = 1, day = 1] = value.split("-").map(Number);
  return new Date(year, month - 1, day);
}
