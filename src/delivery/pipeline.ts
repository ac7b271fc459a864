import { addressOf, domainOf } from "../domain/addresses.js";
import type { Clock } from "../domain/clock.js";
import { engagementEffect, type EngagementType } from "../domain/engagement.js";
import type { EventType } from "../domain/events.js";
import { newId } from "../domain/ids.js";
import { aggregateStatus, settleAttempt, transition, type MessageStatus } from "../domain/message-status.js";
import { SIMULATOR_DOMAIN } from "../domain/simulator.js";
import type { Verp } from "../domain/verp.js";
import type { BounceSuppression, MessageChange, MessageRecord, NewEvent, RecipientRecord } from "../db/repositories/messages.js";
import { replyEventData, type NewInboundMessage } from "../db/repositories/inbound.js";
import type { SuppressionRow } from "../db/repositories/suppressions.js";
import type { SendingIdentity as DomainIdentity } from "../services/domains.js";
import { TrackingLinks } from "../tracking/links.js";
import type { Compose } from "./compose.js";
import { hasExpired } from "./retry-policy.js";
import { keptResponse } from "./smtp-reply.js";
import type { Envelope, SendResult } from "./transports/transport.js";

const IN_FLIGHT: readonly MessageStatus[] = ["scheduled", "queued", "deferred", "sending"];

/** Engagement that follows a delivery (the sandbox simulator produces these, as a person would). */
export interface FollowUp {
  type: EngagementType;
  data: Record<string, unknown>;
  /** A simulated reply's content: stored with its event, and listed like a received one. */
  reply?: SimulatedReply;
}

export type SimulatedReply = Omit<NewInboundMessage, "id" | "scope" | "message_id" | "recipient" | "threaded_by" | "simulated" | "received_at">;

/** What the remote side (or the simulator) said about one recipient's hand-off. */
export type Delivery = SendResult & {
  /** Engagement the sandbox simulator makes follow a delivery. */
  followUps?: FollowUp[];
  simulated?: boolean;
  /** More about the outcome for its event's data (the simulator's DSN fields). */
  details?: Record<string, unknown>;
};

/** What the pipeline uses of the sending domain: whether it may send live, its return path, DKIM keys and tracking domain. */
export type SendingIdentity = Pick<DomainIdentity, "sendsLive" | "returnPathDomain" | "signers" | "trackingDomain">;

export interface PipelineContext {
  /** When the attempt began: what it renders and checks the deadline with first. */
  now: number;
  /** The time as the attempt goes on: a hand-off can wait long for its destination's connection. */
  clock: Clock;
  /** The worker holding the message's job lease; its change applies only while it still does. */
  claimedBy: string;
  /** The from-domain's identity; null when the workspace has no such domain. */
  identity: SendingIdentity | null;
  /** Suppressions among the message's recipients, by lower-cased address. */
  suppressions: ReadonlyMap<string, SuppressionRow>;
  verp: Verp;
  /** Each recipient's open image, click redirects, List-Unsubscribe and reply address. */
  tracking: TrackingLinks;
  /** Renders the MIME and DKIM-signs it (on the compose threads, when the process has them). */
  compose: Compose;
  /**
   * The worker's byte budget (DELIVERY_MAX_BYTES_IN_HAND), which holds the message's own size
   * already: copies rendered per recipient beyond the first take their bytes from it, without
   * waiting (a message waiting for bytes while holding some could wait for ever on another doing
   * the same), or wait for one of the message's own hand-offs to give a copy back.
   */
  budget: { tryTake(bytes: number): (() => void) | null };
  /** For a failure that is not a mail outcome but must not lose the outcomes already known. */
  log: { error(obj: object, msg: string): void };
  /**
   * Hands the message to one recipient: the live transport or the sandbox simulator. Calls
   * `beforeBegin()` right before the hand-off begins (before MAIL FROM); when that throws,
   * nothing is handed off and deliver() rejects with its error.
   */
  deliver(recipient: RecipientRecord, envelope: Envelope, mime: Buffer, message: MessageRecord, beforeBegin: () => void): Promise<Delivery>;
  /** The wait before retrying a recipient deferred on its `attempt`-th attempt. */
  retryDelayMs(attempt: number): number;
  /** The message's delivery deadline: due time + DELIVERY_LIFETIME_SECONDS, or its expires_at when sooner (deliveryDeadline). */
  expiresAt: number;
}

/**
 * One attempt's result: the change to commit (the outcomes), and the message's first rendering to
 * keep, null when there is none new. Apart, because the rendering's size is not bounded as the
 * stored message is, and must never keep the outcomes from being recorded: the worker puts a small
 * one in the change (MessageChange.rendering) and keeps a larger one once the change is committed
 * (MessagesRepository.renderingWriter; docs/delivery.md).
 */
export interface Attempt {
  change: MessageChange;
  /** The source as sent, and the text part when it was derived from the html (not given). */
  rendering: { mime: string; text: string | null } | null;
}

/** A hand-off refused at its start: the deadline passed while it waited for its turn. */
export class DeadlinePassed extends Error {}

/** How one recipient's attempt ended: its new status and the event that says so. */
interface Settled {
  recipient: RecipientRecord;
  status: MessageStatus;
  detail: string;
  data: Record<string, unknown>;
  followUps: FollowUp[];
  suppress: boolean;
}

/**
 * One delivery attempt of one message (DESIGN.md §9): expire -> skip suppressed -> render and
 * DKIM-sign (once: the MIME, its Message-ID and signatures are kept across retries, unless
 * the source was too large to keep, when each attempt renders it again with the same Message-ID;
 * per recipient when each carries its own tracking tokens, docs/tracking.md) -> hand off
 * each recipient with its VERP return path -> record every outcome through the checked state
 * machine. Each step settles some recipients and passes the rest on; mail outcomes are values,
 * and an exception here is a bug. The first rendering is returned beside the outcomes, for the
 * worker to keep once they are recorded (Attempt).
 */
export async function attemptDelivery(message: MessageRecord, ctx: PipelineContext): Promise<Attempt> {
  const pending = message.recipients.filter((r) => IN_FLIGHT.includes(r.status));
  if (pending.length === 0) {
    // Canceled or settled while the job waited: nothing to send.
    return { change: { scope: message.scope, messageId: message.id, status: message.status, recipients: [], events: [], job: { action: "delete" }, claimedBy: ctx.claimedBy, now: ctx.now }, rendering: null };
  }
  const settled: Settled[] = [];
  let remaining = pending;
  for (const step of [expire, skipSuppressed, refuseUnverifiedSender]) {
    const { done, rest } = step(remaining, message, ctx);
    settled.push(...done);
    remaining = rest;
  }
  let rendered: { mime: string; text: string | null } | null = null;
  if (remaining.length > 0 && TrackingLinks.perRecipient(message)) {
    // Recipients that carry their own tracking tokens each get their own rendering, signed anew
    // on every attempt (the first is kept as the message's MIME).
    const own = await renderedInTurn(message, remaining, ctx);
    rendered = own.first;
    settled.push(...own.settled);
  } else if (remaining.length > 0) {
    // Otherwise one rendering serves every recipient and every retry, in one buffer for all: a
    // 7 MB message to 50 recipients is 7 MB in hand, not 350 (the byte budget counts it once).
    if (message.mime === null) rendered = await renderAndSign(message, ctx, remaining[0]!.position);
    const shared = Buffer.from(rendered?.mime ?? message.mime!, "utf8");
    settled.push(...(await Promise.all(remaining.map((recipient) => handOff(recipient, message, shared, ctx)))));
  }
  const rendering = rendered && { mime: rendered.mime, text: message.text === null ? rendered.text : null };
  return { change: record(message, settled, ctx), rendering };
}

/**
 * Each recipient's own copy, rendered one at a time (yielding to the event loop between them,
 * so that 50 renderings do not hold up the SMTP sessions, lease renewals and database work it
 * runs) and handed off as soon as it is ready. The copies in hand are bounded: the first goes
 * under the message's own share of the byte budget, each further one takes its size from the
 * budget while there is room, else waits for one of the message's hand-offs to end and give its
 * copy back. Outcomes come back in the recipients' order; the first rendering is returned to be
 * kept as the message's MIME when it has none yet.
 */
async function renderedInTurn(message: MessageRecord, recipients: RecipientRecord[], ctx: PipelineContext): Promise<{ settled: Settled[]; first: { mime: string; text: string | null } | null }> {
  const outcomes: Array<Promise<Settled>> = [];
  const inFlight = new Set<Promise<unknown>>();
  let ownShareFree = true;
  let copyBytes = 0;
  let first: { mime: string; text: string | null } | null = null;
  for (const [i, recipient] of recipients.entries()) {
    if (i > 0) await new Promise((resolve) => setImmediate(resolve));
    let giveBack: () => void;
    for (;;) {
      if (ownShareFree) {
        ownShareFree = false;
        giveBack = () => (ownShareFree = true);
        break;
      }
      const taken = ctx.budget.tryTake(copyBytes);
      if (taken) {
        giveBack = taken;
        break;
      }
      // A hand-off that failed rejects here, as Promise.all would: the attempt is over.
      await Promise.race(inFlight);
    }
    let handedOff: Promise<Settled>;
    try {
      const rendering = await renderAndSign(message, ctx, recipient.position);
      if (i === 0 && message.mime === null) first = rendering;
      const mime = Buffer.from(rendering.mime, "utf8");
      copyBytes = Math.max(copyBytes, mime.length);
      handedOff = handOff(recipient, message, mime, ctx);
    } catch (error) {
      giveBack();
      // Nothing handed off yet: the attempt fails whole and is retried after its lease, as any bug.
      if (i === 0) throw error;
      // Copies are out already, and a retry of the whole attempt would send them again: their
      // outcomes are recorded, and this recipient and the rest wait for a retry of their own.
      ctx.log.error({ err: error, message_id: message.id, position: recipient.position }, "could not render a recipient's copy; deferring the rest");
      for (const rest of recipients.slice(i)) outcomes.push(Promise.resolve(notRendered(rest, error, ctx)));
      break;
    }
    const done = handedOff.finally(() => {
      giveBack();
      inFlight.delete(done);
    });
    // Seen by the race above or Promise.all below; this keeps one that fails after the attempt
    // has already ended from being an unhandled rejection.
    done.catch(() => undefined);
    inFlight.add(done);
    outcomes.push(done);
  }
  return { settled: await Promise.all(outcomes), first };
}

type Step = (recipients: RecipientRecord[], message: MessageRecord, ctx: PipelineContext) => { done: Settled[]; rest: RecipientRecord[] };

/**
 * No attempt starts after the deadline: what is still pending fails as a DSN would say, 4.4.7.
 * Checked here, before anything is read or rendered, and again as each hand-off begins (handOff).
 */
const expire: Step = (recipients, _message, ctx) => {
  if (!hasExpired(ctx.now, ctx.expiresAt)) return { done: [], rest: recipients };
  return { done: recipients.map(expired), rest: [] };
};

function expired(recipient: RecipientRecord): Settled {
  const response = `Delivery time expired after ${recipient.attempts} attempt${recipient.attempts === 1 ? "" : "s"}${recipient.detail ? `; last answer: ${recipient.detail}` : ""}`;
  return settle(recipient, "failed", response, { smtp_code: null, enhanced_status: "4.4.7", response, attempts: recipient.attempts });
}

/** A suppressed address is skipped with an event; the message's other recipients proceed. */
const skipSuppressed: Step = (recipients, _message, ctx) => {
  const done: Settled[] = [];
  const rest: RecipientRecord[] = [];
  for (const recipient of recipients) {
    const suppression = ctx.suppressions.get(recipient.email.toLowerCase());
    if (!suppression) rest.push(recipient);
    else done.push(settle(recipient, "suppressed", `suppressed: ${suppression.reason}`, { reason: suppression.reason, suppression_id: suppression.id }));
  }
  return { done, rest };
};

/**
 * Live mail leaves only from a domain that may send it (docs/domains.md): the accept path checks
 * that, and this checks it again at each attempt, since a message scheduled for later or waiting
 * for a retry may outlive its domain's verification, or the domain itself. Sent anyway, it would
 * go unsigned and without the VERP return path, so its bounces would reach the sender instead of
 * Mailroom. It fails at once, as an expired message does: nothing is suppressed.
 */
const refuseUnverifiedSender: Step = (recipients, message, ctx) => {
  if (message.scope.environment !== "live" || ctx.identity?.sendsLive) return { done: [], rest: recipients };
  const domain = domainOf(addressOf(message.from));
  const response = ctx.identity
    ? `Not sent: ${domain} is no longer verified, and live mail is sent only from a verified domain (check its DNS records, then verify it)`
    : `Not sent: ${domain} is no longer a sending domain of this workspace, and live mail is sent only from a verified domain`;
  const done = recipients.map((recipient) => settle(recipient, "failed", response, { smtp_code: null, enhanced_status: "5.7.1", response, attempts: recipient.attempts }));
  return { done, rest: [] };
};

/** The message as `position`'s recipient gets it (its tracking tokens), DKIM-signed. */
function renderAndSign(message: MessageRecord, ctx: PipelineContext, position: number): Promise<{ mime: string; text: string | null }> {
  return ctx.compose({ message, now: ctx.now, tracked: ctx.tracking.parts(message, position, ctx.identity), signers: ctx.identity?.signers ?? [] });
}

async function handOff(recipient: RecipientRecord, message: MessageRecord, mime: Buffer, ctx: PipelineContext): Promise<Settled> {
  const envelope: Envelope = {
    // VERP when the domain has a return path; otherwise (sandbox mail from a domain never added)
    // the sender's own address.
    mailFrom: ctx.identity ? ctx.verp.returnPath({ messageId: message.id, position: recipient.position }, ctx.identity.returnPathDomain) : addressOf(message.from),
    rcptTo: recipient.email,
  };
  // The deadline again, right before MAIL FROM: rendering, DNS and the wait for a connection to
  // the destination (behind a busy or throttling MX) can outlast it.
  const beforeBegin = () => {
    if (hasExpired(ctx.clock.now(), ctx.expiresAt)) throw new DeadlinePassed();
  };
  let answer: Delivery;
  try {
    answer = await ctx.deliver(recipient, envelope, mime, message, beforeBegin);
  } catch (error) {
    if (error instanceof DeadlinePassed) return expired(recipient);
    throw error;
  }
  const delivery = { ...answer, response: keptResponse(answer.response) };
  const attempt = recipient.attempts + 1;
  const data: Record<string, unknown> = {
    smtp_code: delivery.smtpCode,
    enhanced_status: delivery.enhancedStatus,
    response: delivery.response,
    remote_host: delivery.remoteHost,
    attempt,
    ...delivery.details,
    ...(delivery.simulated ? { simulated: true } : {}),
  };
  switch (delivery.outcome) {
    case "delivered":
      return { ...settle(recipient, "delivered", delivery.response, data), followUps: delivery.followUps ?? [] };
    case "bounced": {
      // Simulator addresses always rehearse their outcome, so a simulated bounce never suppresses them.
      const suppress = delivery.bounceType === "hard" && domainOf(recipient.email) !== SIMULATOR_DOMAIN;
      return { ...settle(recipient, "bounced", delivery.response, { ...data, bounce_type: delivery.bounceType }), suppress };
    }
    case "deferred": {
      // From when the attempt ended, not when it began: the hand-off may have waited long.
      const retryAt = Math.min(ctx.clock.now() + ctx.retryDelayMs(attempt), ctx.expiresAt);
      return settle(recipient, "deferred", delivery.response, { ...data, next_attempt_at: new Date(retryAt).toISOString() });
    }
  }
}

/** A recipient whose copy could not be rendered this attempt: deferred like a 4.3.0 local error. */
function notRendered(recipient: RecipientRecord, error: unknown, ctx: PipelineContext): Settled {
  const response = `Could not be rendered: ${error instanceof Error ? error.message : String(error)}`;
  const retryAt = Math.min(ctx.clock.now() + ctx.retryDelayMs(recipient.attempts + 1), ctx.expiresAt);
  return settle(recipient, "deferred", response, { smtp_code: null, enhanced_status: "4.3.0", response, attempt: recipient.attempts + 1, next_attempt_at: new Date(retryAt).toISOString() });
}

function settle(recipient: RecipientRecord, status: MessageStatus, detail: string, data: Record<string, unknown>): Settled {
  return { recipient, status, detail, data, followUps: [], suppress: false };
}

/** The change to commit: statuses through the state machine, one event per outcome, the job's fate. */
function record(message: MessageRecord, settled: Settled[], ctx: PipelineContext): MessageChange {
  // Stamped when the outcomes are known, as next_attempt_at is counted from: a hand-off can take long.
  const now = ctx.clock.now();
  const events: NewEvent[] = [];
  const event = (type: EventType, recipient: string | null, from: MessageStatus | null, to: MessageStatus | null, data: Record<string, unknown>): void => {
    events.push({ id: newId("event", now), type, recipient, from_status: from, to_status: to, data, created_at: now });
  };

  let messageStatus = message.status;
  if (messageStatus === "scheduled") {
    messageStatus = transition("scheduled", "queued");
    event("message.queued", null, "scheduled", "queued", {});
  }
  if (messageStatus !== "sending") messageStatus = transition(messageStatus, "sending");

  const updated = new Map<number, { status: MessageStatus; detail: string; attempts: number }>();
  const suppressions: BounceSuppression[] = [];
  const engagement: Engagement = { stamps: [], counters: { opens: 0, clicks: 0, replies: 0 }, replies: [] };
  let earliestRetry = Infinity;
  for (const s of settled) {
    const before = s.recipient.status === "scheduled" ? transition("scheduled", "queued") : s.recipient.status;
    // Every attempt passes through sending, which the table checks like any other move.
    const status = settleAttempt(s.recipient.status, s.status);
    const attempted = s.status !== "suppressed" && s.status !== "failed";
    updated.set(s.recipient.id, { status, detail: s.detail, attempts: s.recipient.attempts + (attempted ? 1 : 0) });
    event(`message.${status}` as EventType, s.recipient.email, before, status, s.data);
    for (const [type, data] of recordFollowUps(message, s.recipient, s.followUps, engagement, now)) event(type, s.recipient.email, null, null, data);
    if (s.suppress) suppressions.push({ email: s.recipient.email, reason: "hard_bounce", message_id: message.id, detail: s.detail });
    if (status === "deferred") earliestRetry = Math.min(earliestRetry, Date.parse(s.data.next_attempt_at as string));
  }

  const statuses = message.recipients.map((r) => updated.get(r.id)?.status ?? r.status);
  return {
    scope: message.scope,
    messageId: message.id,
    status: transition(messageStatus, aggregateStatus(statuses)),
    recipients: [...updated].map(([id, u]) => ({ id, ...u })),
    events,
    suppressions,
    ...engagement,
    job: earliestRetry === Infinity ? { action: "delete" } : { action: "reschedule", runAt: earliestRetry },
    claimedBy: ctx.claimedBy,
    now,
  };
}

type Engagement = Required<Pick<MessageChange, "stamps" | "counters" | "replies">>;

/**
 * The simulator's engagement after a delivery, recorded by the same rules as real engagement
 * (src/domain/engagement.ts): first-time stamps, first/repeat flags and people's counts go into
 * `engagement`, a simulated reply is stored like a received one; returns the events to write.
 */
function recordFollowUps(message: MessageRecord, recipient: RecipientRecord, followUps: readonly FollowUp[], engagement: Engagement, now: number): Array<[EngagementType, Record<string, unknown>]> {
  const events: Array<[EngagementType, Record<string, unknown>]> = [];
  let stamps: RecipientRecord = recipient;
  for (const followUp of followUps) {
    const effect = engagementEffect(stamps, followUp.type, followUp.data, true);
    if (effect === null) continue;
    let data = effect.data;
    if (followUp.reply) {
      const reply: NewInboundMessage = { ...followUp.reply, id: newId("inbound", now), scope: message.scope, message_id: message.id, recipient: recipient.email, threaded_by: "simulated", simulated: true, received_at: now };
      engagement.replies.push(reply);
      data = { ...data, ...replyEventData(reply) };
    }
    events.push([followUp.type, data]);
    if (effect.first) {
      engagement.stamps.push({ recipientId: recipient.id, stamp: effect.stamp, at: now });
      stamps = { ...stamps, [effect.stamp]: now };
    }
    if (effect.counter) engagement.counters[effect.counter] = (engagement.counters[effect.counter] ?? 0) + 1;
  }
  return events;
}
