import type { EventType } from "./events.js";

/**
 * What a recipient did with a delivered message (DESIGN.md §10): each kind sets the recipient's
 * first-time stamp, and opens, clicks and replies by people count on the message. The rules
 * live here, as pure code, because the tracking routes, the inbound SMTP server and the sandbox
 * simulator all record engagement and must agree.
 */
export type EngagementType = Extract<EventType, "message.opened" | "message.clicked" | "message.replied" | "message.complained" | "message.unsubscribed">;

export const ENGAGEMENT_STAMPS = ["opened_at", "clicked_at", "replied_at", "complained_at", "unsubscribed_at"] as const;
export type EngagementStampName = (typeof ENGAGEMENT_STAMPS)[number];
/** When a recipient first did each thing (ms), null until it did. */
export type EngagementStamps = Record<EngagementStampName, number | null>;
/** A recipient who has done nothing yet. */
export const NO_ENGAGEMENT_STAMPS: Readonly<EngagementStamps> = { opened_at: null, clicked_at: null, replied_at: null, complained_at: null, unsubscribed_at: null };
export type EngagementCounterName = "opens" | "clicks" | "replies";

const STAMP: Record<EngagementType, EngagementStampName> = {
  "message.opened": "opened_at",
  "message.clicked": "clicked_at",
  "message.replied": "replied_at",
  "message.complained": "complained_at",
  "message.unsubscribed": "unsubscribed_at",
};

const COUNTER: Partial<Record<EngagementType, EngagementCounterName>> = {
  "message.opened": "opens",
  "message.clicked": "clicks",
  "message.replied": "replies",
};

/** Opens and clicks say whether they are the recipient's first (repeats are recorded too). */
const FIRST_FLAG: Partial<Record<EngagementType, string>> = {
  "message.opened": "first_open",
  "message.clicked": "first_click",
};

/**
 * Opens and clicks repeat, and each is an event, its webhooks and a write under the message's
 * lock. Past this many of one kind for one recipient, more are answered (the image, the redirect)
 * and not recorded, so a pixel or link fetched in a loop (a misbehaving proxy, a bot, anyone who
 * has the URL) cannot fill the event log and the webhook queue, or keep writing (SQLite has one writer).
 */
export const RECORDED_PER_RECIPIENT = 100;

/**
 * Complaints and unsubscribes happen once per recipient: a repeated one-click POST or a second
 * ARF report about the same message records nothing new, while the suppression the first one
 * made stands. Once that suppression is gone (the customer deleted it), a repeat is taken again:
 * it suppresses the address anew and says so with an event, or the recipient would be told
 * "unsubscribed" and still get mail.
 */
const ONCE: ReadonlySet<EngagementType> = new Set(["message.complained", "message.unsubscribed"]);

/** Whether this is a repeat of a kind that happens once: recorded only when its suppression is gone (engagementEffect's `resuppress`). */
export function happenedOnceAlready(stamps: Readonly<EngagementStamps>, type: EngagementType): boolean {
  return ONCE.has(type) && stamps[STAMP[type]] !== null;
}

export interface EngagementEffect {
  /** The event's data, with the first/repeat flag where the kind has one. */
  data: Record<string, unknown>;
  stamp: EngagementStampName;
  /** The message counter to bump, when a person (not a proxy or scanner) did it. */
  counter: EngagementCounterName | null;
  first: boolean;
}

/**
 * Whether recording a `type` by a recipient with these stamps needs to know how many are recorded
 * already (engagementEffect's `recorded`): only repeats of a kind that repeats do.
 */
export function countsRecorded(stamps: Readonly<EngagementStamps>, type: EngagementType): boolean {
  return FIRST_FLAG[type] !== undefined && stamps[STAMP[type]] !== null;
}

/**
 * The effect of one engagement on a recipient with these stamps, who has `recorded` events of
 * this type already (counted when countsRecorded says so); null when it records nothing.
 * `resuppress`: for a repeat of a kind that happens once (happenedOnceAlready), the suppression
 * it made is gone, so this one counts (as a repeat: the stamp keeps the first time).
 */
export function engagementEffect(
  stamps: Readonly<EngagementStamps>,
  type: EngagementType,
  data: Record<string, unknown>,
  human: boolean,
  recorded = 0,
  resuppress = false,
): EngagementEffect | null {
  const stamp = STAMP[type];
  const first = stamps[stamp] === null;
  if (!first && ONCE.has(type) && !resuppress) return null;
  const flag = FIRST_FLAG[type];
  if (!first && flag !== undefined && recorded >= RECORDED_PER_RECIPIENT) return null;
  return {
    data: flag === undefined ? data : { ...data, [flag]: first },
    stamp,
    counter: human ? (COUNTER[type] ?? null) : null,
    first,
  };
}
