import { DAY_MS, toIso, utcDay, type Clock } from "../domain/clock.js";
import { NotFoundError, QuotaExceededError, ValidationError } from "../domain/errors.js";
import type { Principal } from "../domain/environments.js";
import type { UsageCount, UsageRepository } from "../db/repositories/usage.js";
import type { WorkspacesRepository } from "../db/repositories/workspaces.js";
import type { components } from "../../generated/v1.js";

type Usage = components["schemas"]["Usage"];

/** The longest range `getUsage` answers: `to` at most this many days after `from`. */
export const MAX_USAGE_RANGE_DAYS = 366;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Live usage per UTC day and month, and the monthly quota. Counting happens where mail is
 * accepted (UsageRepository.increment, in the accepting transaction); this service reads.
 */
export class UsageService {
  constructor(
    private readonly usage: UsageRepository,
    private readonly workspaces: WorkspacesRepository,
    private readonly clock: Clock,
  ) {}

  /** "YYYY-MM-DD" of an instant, in UTC: the day a message accepted then counts on. */
  static dayOf(now: number): string {
    return utcDay(now);
  }

  /** "YYYY-MM" of an instant, in UTC. */
  static monthOf(now: number): string {
    return new Date(now).toISOString().slice(0, 7);
  }

  /** The first instant of the UTC month after the one `now` is in: when the quota resets. */
  static nextMonthStart(now: number): number {
    return monthStart(now, 1);
  }

  /**
   * Usage from `from` to `to` (UTC days, both included; default: this month so far). Either
   * bound alone sets the range's other end around itself, so that it never contradicts it:
   * `to` alone starts at the first day of its month; `from` alone ends today, or at the longest
   * range's end when `from` is older than that. Sandbox mail is never counted, so the answer is
   * the same whichever environment's key asks.
   */
  async get(principal: Principal, from?: string, to?: string): Promise<Usage> {
    const now = this.clock.now();
    const today = Date.parse(UsageService.dayOf(now));
    const givenFrom = from === undefined ? undefined : parseDay(from, "/from");
    const givenTo = to === undefined ? undefined : parseDay(to, "/to");
    const fromMs = givenFrom ?? monthStart(givenTo ?? today);
    const toMs = givenTo ?? Math.min(today, fromMs + MAX_USAGE_RANGE_DAYS * DAY_MS);
    if (fromMs > toMs) throw new ValidationError([{ location: "query", pointer: "/from", message: to === undefined ? "must not be after today (the default `to`)" : "must not be after `to`" }]);
    if ((toMs - fromMs) / DAY_MS > MAX_USAGE_RANGE_DAYS) {
      throw new ValidationError([{ location: "query", pointer: "/to", message: `must be at most ${MAX_USAGE_RANGE_DAYS} days after \`from\`` }]);
    }
    const workspace = await this.workspaces.find(principal.workspaceId);
    if (!workspace) throw new NotFoundError("workspace", principal.workspaceId);

    // Months are counted whole: read from the first day of `from`'s month to the last of `to`'s.
    const firstDay = `${UsageService.dayOf(fromMs).slice(0, 7)}-01`;
    const lastDay = `${UsageService.dayOf(toMs).slice(0, 7)}-31`;
    const counted = new Map((await this.usage.days(principal.workspaceId, firstDay, lastDay)).map((row) => [row.day, row]));

    const days: Usage["days"] = [];
    const totals: UsageCount = { messages: 0, recipients: 0 };
    for (let day = fromMs; day <= toMs; day += DAY_MS) {
      const date = UsageService.dayOf(day);
      const count = counted.get(date) ?? { messages: 0, recipients: 0 };
      days.push({ date, messages: count.messages, recipients: count.recipients });
      totals.messages += count.messages;
      totals.recipients += count.recipients;
    }
    const months = new Map<string, UsageCount>();
    for (let month = Date.parse(firstDay); month <= toMs; month = UsageService.nextMonthStart(month)) months.set(UsageService.monthOf(month), { messages: 0, recipients: 0 });
    for (const row of counted.values()) {
      const sum = months.get(row.day.slice(0, 7));
      if (!sum) continue;
      sum.messages += row.messages;
      sum.recipients += row.recipients;
    }

    const thisMonth = UsageService.monthOf(now);
    const used = months.get(thisMonth)?.messages ?? (await this.usage.monthTotal(principal.workspaceId, thisMonth)).messages;
    const quota = workspace.monthly_quota;
    return {
      object: "usage",
      from: UsageService.dayOf(fromMs),
      to: UsageService.dayOf(toMs),
      totals,
      days,
      months: [...months].map(([month, count]) => ({ month, ...count })),
      quota: {
        monthly_messages: quota,
        used,
        remaining: quota === null ? null : Math.max(0, quota - used),
        resets_at: toIso(UsageService.nextMonthStart(now)),
      },
    };
  }

  /**
   * Refuses `messages` more live messages when they would take the workspace past its monthly
   * quota, and answers whether the workspace has a quota at all. This early check reads the
   * counters outside the accepting transaction, so it spares a request over the quota the rest
   * of its work; requests racing at the limit can all pass it, and the accepting transaction
   * then checks again, exactly, for the messages of a workspace that has one (the caller marks
   * them: NewMessage.quota_unit). For live mail only: sandbox mail never counts.
   */
  async assertWithinQuota(workspaceId: string, messages: number, now: number): Promise<boolean> {
    if (messages <= 0) return false;
    const workspace = await this.workspaces.find(workspaceId);
    if (!workspace || workspace.monthly_quota === null) return false;
    const { messages: used } = await this.usage.monthTotal(workspaceId, UsageService.monthOf(now));
    if (used + messages <= workspace.monthly_quota) return true;
    throw UsageService.quotaExceeded({ quota: workspace.monthly_quota, used, requested: messages }, now);
  }

  /** The 429 monthly_quota_exceeded for a request of `requested` messages, retryable when the month ends. */
  static quotaExceeded({ quota, used, requested }: { quota: number; used: number; requested: number }, now: number): QuotaExceededError {
    const resetsAt = UsageService.nextMonthStart(now);
    return new QuotaExceededError(quota, used, requested, toIso(resetsAt), Math.max(1, Math.ceil((resetsAt - now) / 1000)));
  }
}

/** The first instant of the UTC month an instant is in, or of a month that many after it. */
function monthStart(ms: number, monthsAfter = 0): number {
  const date = new Date(ms);
  // setUTCFullYear, not Date.UTC, which reads years 0-99 as 1900-1999.
  return new Date(0).setUTCFullYear(date.getUTCFullYear(), date.getUTCMonth() + monthsAfter, 1);
}

/** Epoch ms of a "YYYY-MM-DD" UTC day that exists in the calendar, or a 422 naming the query parameter. */
function parseDay(value: string, pointer: string): number {
  // Date.parse of the ISO form, not Date.UTC, which reads years 0-99 as 1900-1999.
  const ms = DATE.test(value) ? Date.parse(`${value}T00:00:00Z`) : NaN;
  if (Number.isNaN(ms) || UsageService.dayOf(ms) !== value) {
    throw new ValidationError([{ location: "query", pointer, message: "must be a date as YYYY-MM-DD" }]);
  }
  return ms;
}
