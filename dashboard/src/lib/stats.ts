import type { MessageStatus, MessageSummary } from "mailroom";

/** How the overview groups the nine statuses: outcomes apart, everything still moving together. */
export const STATUS_GROUPS = [
  { id: "delivered", label: "Delivered", statuses: ["delivered"] },
  { id: "in_progress", label: "In progress", statuses: ["scheduled", "queued", "sending", "deferred"] },
  { id: "bounced", label: "Bounced", statuses: ["bounced"] },
  { id: "failed", label: "Failed", statuses: ["failed"] },
  { id: "stopped", label: "Suppressed or canceled", statuses: ["suppressed", "canceled"] },
] as const satisfies readonly { id: string; label: string; statuses: readonly MessageStatus[] }[];

export type StatusGroupId = (typeof STATUS_GROUPS)[number]["id"];

export interface DailyStats {
  /** Local midnight of each day, oldest first. */
  days: Date[];
  /** Per group, one count per day. */
  counts: Record<StatusGroupId, number[]>;
  /**
   * Opens and clicks by people (MessageSummary.engagement: machine opens and link scanners left
   * out), counted on the day their message was created: the list carries totals per message, not
   * when each happened, and most engagement comes within a day or two of sending.
   */
  engagement: { opens: number[]; clicks: number[] };
  total: number;
  opens: number;
  clicks: number;
  delivered: number;
  bounced: number;
  /** Messages with a final delivery outcome (delivered, bounced or failed): the rates' base. */
  settled: number;
}

const groupOf = new Map<MessageStatus, StatusGroupId>(STATUS_GROUPS.flatMap((group) => group.statuses.map((status) => [status, group.id] as const)));

/** Counts messages by the local day they were created on and their status group. */
export function dailyStats(messages: MessageSummary[], since: Date, dayCount: number): DailyStats {
  const days = Array.from({ length: dayCount }, (_, index) => new Date(since.getFullYear(), since.getMonth(), since.getDate() + index));
  const counts = Object.fromEntries(STATUS_GROUPS.map((group) => [group.id, days.map(() => 0)])) as Record<StatusGroupId, number[]>;
  const engagement = { opens: days.map(() => 0), clicks: days.map(() => 0) };
  const totals = { all: 0, delivered: 0, bounced: 0, failed: 0, opens: 0, clicks: 0 };
  for (const message of messages) {
    const created = new Date(message.created_at);
    // Whole days between the two local midnights; rounding absorbs a daylight-saving hour.
    const day = Math.round((new Date(created.getFullYear(), created.getMonth(), created.getDate()).getTime() - since.getTime()) / 86_400_000);
    const group = groupOf.get(message.status);
    if (group === undefined || day < 0 || day >= dayCount) continue;
    counts[group][day] = (counts[group][day] ?? 0) + 1;
    engagement.opens[day] = (engagement.opens[day] ?? 0) + message.engagement.opens;
    engagement.clicks[day] = (engagement.clicks[day] ?? 0) + message.engagement.clicks;
    totals.opens += message.engagement.opens;
    totals.clicks += message.engagement.clicks;
    totals.all += 1;
    if (message.status === "delivered" || message.status === "bounced" || message.status === "failed") totals[message.status] += 1;
  }
  return {
    days,
    counts,
    engagement,
    total: totals.all,
    opens: totals.opens,
    clicks: totals.clicks,
    delivered: totals.delivered,
    bounced: totals.bounced,
    settled: totals.delivered + totals.bounced + totals.failed,
  };
}
