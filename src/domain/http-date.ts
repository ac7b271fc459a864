/**
 * HTTP dates (RFC 9110 §5.6.7), as a Retry-After may carry one. A recipient accepts three forms,
 * all in GMT: the IMF-fixdate every sender should use, and the obsolete RFC 850 and asctime
 * forms. Nothing else: Date.parse would read "3600.5" as the year 3600 and the zone-less asctime
 * as local time.
 */

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const MONTH = `(${MONTHS.join("|")})`;
const TIME = "(\\d{2}):(\\d{2}):(\\d{2})";

// Sun, 06 Nov 1994 08:49:37 GMT
const IMF_FIXDATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
// Sunday, 06-Nov-94 08:49:37 GMT
const RFC_850 = new RegExp(`^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
// Sun Nov  6 08:49:37 1994
const ASCTIME = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ${MONTH} ( \\d|\\d{2}) ${TIME} (\\d{4})$`);

/** The instant an HTTP date names, in ms; null when `value` is none of the three forms or no real time. */
export function parseHttpDate(value: string, now: number): number | null {
  let match = IMF_FIXDATE.exec(value);
  if (match) return instant(Number(match[3]), match[2]!, match[1]!, match.slice(4, 7));
  match = RFC_850.exec(value);
  if (match) return instant(fullYear(Number(match[3]), now), match[2]!, match[1]!, match.slice(4, 7));
  match = ASCTIME.exec(value);
  if (match) return instant(Number(match[6]), match[1]!, match[2]!, match.slice(3, 6));
  return null;
}

/**
 * RFC 9110 §5.6.7: a two-digit year more than 50 years in the future is the most recent past
 * year with the same last two digits.
 */
function fullYear(twoDigits: number, now: number): number {
  const thisYear = new Date(now).getUTCFullYear();
  const year = thisYear - (thisYear % 100) + twoDigits;
  return year > thisYear + 50 ? year - 100 : year;
}

function instant(year: number, month: string, day: string, [hours, minutes, seconds]: string[]): number | null {
  const fields = [Number(day), Number(hours), Number(minutes), Number(seconds)] as const;
  const ms = Date.UTC(year, MONTHS.indexOf(month), ...fields);
  // Date.UTC rolls "31 Feb" into March: a date that is no real time is unreadable, not another day.
  const date = new Date(ms);
  return date.getUTCDate() === fields[0] && date.getUTCHours() === fields[1] && date.getUTCMinutes() === fields[2] && date.getUTCSeconds() === fields[3] ? ms : null;
}
