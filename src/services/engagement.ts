import { domainOf } from "../domain/addresses.js";
import type { Clock } from "../domain/clock.js";
import { countsRecorded, engagementEffect, happenedOnceAlready, NO_ENGAGEMENT_STAMPS, type EngagementType } from "../domain/engagement.js";
import type { Scope } from "../domain/environments.js";
import { newId } from "../domain/ids.js";
import { aggregateStatus, canSettleAttempt, canTransition, moveAggregate } from "../domain/message-status.js";
import { SIMULATOR_DOMAIN } from "../domain/simulator.js";
import type { Transaction } from "../db/repositories/index.js";
import type { BounceSuppression, MessageChange, MessageRecord, MessagesRepository, RecipientRecord } from "../db/repositories/messages.js";
import type { SuppressionsRepository } from "../db/repositories/suppressions.js";

/** The message and recipient an engagement was recorded for. */
export interface EngagementTarget {
  scope: Scope;
  messageId: string;
  /** Null for a reply from someone the message was not sent to (a colleague, a forward). */
  recipientEmail: string | null;
}

export interface EngagementInput {
  /** Taken from a signed token or address, so it is trusted to name the message (no tenant needed). */
  messageId: string;
  /** Which recipient did it; a reply may come from an address that was none of them, or null. */
  recipient: { position: number } | { email: string } | null;
  type: EngagementType | "message.bounced";
  data: Record<string, unknown>;
  at: number;
  /** A person did it (not an image proxy or a link scanner): counts on the message. */
  human?: boolean;
  /** For `message.bounced` (a DSN after the hand-off): how the recipient bounced. */
  bounce?: { bounceType: "hard" | "soft"; detail: string };
  /**
   * Work to commit in the same transaction (storing the reply the event announces); what it
   * returns is added to the event's data.
   */
  within?: (trx: Transaction, target: EngagementTarget) => Promise<Record<string, unknown> | void>;
}

export interface EngagementOutcome extends EngagementTarget {
  /** The event written; null when nothing new was recorded (a repeated unsubscribe or complaint). */
  eventId: string | null;
  first: boolean;
}

const SUPPRESSION_REASON = { "message.complained": "complaint", "message.unsubscribed": "unsubscribe" } as const;

/**
 * Records what happened to a message after its hand-off: opens, clicks, replies, complaints,
 * unsubscribes, and bounces that a DSN reports later. One transaction holds the message's lock
 * and writes the recipient's stamp, the message's counters, the event (with its sequence number
 * and webhook deliveries) and any suppression, so a webhook never announces what was not stored.
 */
export class EngagementService {
  constructor(
    private readonly messages: MessagesRepository,
    private readonly suppressions: Pick<SuppressionsRepository, "findByEmails">,
    private readonly clock: Clock,
  ) {}

  /**
   * Null when the message does not exist, the recipient does not (except for a reply, which is
   * the message's whoever sends it), or the bounce no longer applies.
   */
  async record(input: EngagementInput): Promise<EngagementOutcome | null> {
    return this.messages.withLockedMessageById(input.messageId, async (trx, message) => {
      if (!message) return null;
      const recipient = input.recipient === null ? undefined : findRecipient(message, input.recipient);
      if (!recipient && input.type !== "message.replied") return null;
      const target: EngagementTarget = { scope: message.scope, messageId: message.id, recipientEmail: recipient?.email ?? null };
      const recorded = recipient && input.type !== "message.bounced" && countsRecorded(recipient, input.type) ? await this.messages.countRecipientEvents(trx, message.id, recipient.email, input.type) : 0;
      // A repeated complaint or unsubscribe counts again only when the suppression it made is
      // gone (src/domain/engagement.ts), which only the suppression list can say.
      const resuppress =
        recipient !== undefined && input.type !== "message.bounced" && happenedOnceAlready(recipient, input.type) && suppressible(recipient)
          ? !(await this.suppressions.findByEmails(message.scope, [recipient.email], trx)).has(recipient.email.toLowerCase())
          : false;
      const change = input.type === "message.bounced" ? bounceChange(message, recipient!, input, this.clock.now()) : engagementChange(message, recipient, input, recorded, resuppress, this.clock.now());
      if (change === null) return input.type === "message.bounced" ? null : { ...target, eventId: null, first: false };
      const extra = input.within ? await input.within(trx, target) : undefined;
      if (extra) change.events[0]!.data = { ...change.events[0]!.data, ...extra };
      await this.messages.applyChange(trx, change);
      return { ...target, eventId: change.events[0]!.id, first: input.type === "message.bounced" || change.stamps?.length === 1 || recipient === undefined };
    });
  }
}

function findRecipient(message: MessageRecord, which: NonNullable<EngagementInput["recipient"]>): RecipientRecord | undefined {
  if ("position" in which) return message.recipients.find((r) => r.position === which.position);
  const email = which.email.toLowerCase();
  return message.recipients.find((r) => r.email.toLowerCase() === email);
}

function engagementChange(message: MessageRecord, recipient: RecipientRecord | undefined, input: EngagementInput, recorded: number, resuppress: boolean, now: number): MessageChange | null {
  const type = input.type as EngagementType;
  const effect = engagementEffect(recipient ?? NO_ENGAGEMENT_STAMPS, type, input.data, input.human ?? false, recorded, resuppress);
  if (effect === null) return null;
  const reason = SUPPRESSION_REASON[type as keyof typeof SUPPRESSION_REASON];
  return {
    ...unchanged(message, now),
    events: [{ id: newId("event", now), type, recipient: recipient?.email ?? null, from_status: null, to_status: null, data: effect.data, created_at: input.at }],
    stamps: recipient && effect.first ? [{ recipientId: recipient.id, stamp: effect.stamp, at: input.at }] : [],
    counters: effect.counter ? { [effect.counter]: 1 } : {},
    suppressions: recipient && reason ? suppression(message, recipient, reason, `${type} (${String(input.data.method ?? input.data.feedback_type ?? "reported")})`) : [],
  };
}

/**
 * A DSN after the hand-off: the recipient moves to bounced. From `delivered` (a late bounce) and
 * `deferred` (a report during its retry) that is a move of the table. A report can also come back
 * before the attempt that handed the copy off has recorded anything: a worker records all of a
 * message's outcomes together once each of its hand-offs is done, so a recipient the MX accepted
 * is still stored `queued` (`scheduled` on a scheduled message's first attempt) while another
 * recipient's hand-off waits on a slow MX. The report proves the hand-off, so it is recorded as
 * that attempt's outcome would be, through `sending`, and the worker's commit keeps it (its
 * outcome for a recipient settled meanwhile is dropped: withoutOvertaken, messages repository),
 * exactly as during a retry. Refused, the report was answered 250 and lost.
 */
function bounceChange(message: MessageRecord, recipient: RecipientRecord, input: EngagementInput, now: number): MessageChange | null {
  if (!input.bounce || !(canTransition(recipient.status, "bounced") || canSettleAttempt(recipient.status, "bounced"))) return null;
  const status = aggregateStatus(message.recipients.map((r) => (r.id === recipient.id ? "bounced" : r.status)));
  return {
    ...unchanged(message, now),
    status: moveAggregate(message.status, status),
    recipients: [{ id: recipient.id, status: "bounced", detail: input.bounce.detail, attempts: recipient.attempts }],
    events: [{ id: newId("event", now), type: "message.bounced", recipient: recipient.email, from_status: recipient.status, to_status: "bounced", data: input.data, created_at: input.at }],
    suppressions: input.bounce.bounceType === "hard" ? suppression(message, recipient, "hard_bounce", input.bounce.detail) : [],
  };
}

function unchanged(message: MessageRecord, now: number): MessageChange {
  return { scope: message.scope, messageId: message.id, status: message.status, recipients: [], events: [], job: { action: "keep" }, now };
}

/** Simulator addresses always rehearse their outcome, so they are never suppressed. */
function suppressible(recipient: RecipientRecord): boolean {
  return domainOf(recipient.email) !== SIMULATOR_DOMAIN;
}

function suppression(message: MessageRecord, recipient: RecipientRecord, reason: BounceSuppression["reason"], detail: string): BounceSuppression[] {
  return suppressible(recipient) ? [{ email: recipient.email, reason, message_id: message.id, detail }] : [];
}
