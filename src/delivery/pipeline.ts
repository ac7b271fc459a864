import type { EventType } from "../domain/events.js";
import { newId } from "../domain/ids.js";
import { aggregateStatus, transition, type MessageStatus } from "../domain/message-status.js";
import type { MessageChange, MessageRecord, NewEvent, RecipientRecord } from "../db/repositories/messages.js";
import { renderMessage } from "./render.js";
import type { Transport } from "./transports/transport.js";

const IN_FLIGHT: readonly MessageStatus[] = ["scheduled", "queued", "deferred", "sending"];

export interface PipelineContext {
  transport: Transport;
  now: number;
  retryDelayMs: number;
  /** The worker holding the message's job lease; its change applies only while it still does. */
  claimedBy: string;
}

/**
 * One delivery attempt of one message: due -> render (once; the MIME and its Message-ID are
 * kept across retries) -> hand off -> record each recipient's outcome through the checked state
 * machine. Returns the change to commit; mail outcomes are values, never exceptions.
 */
export async function attemptDelivery(message: MessageRecord, ctx: PipelineContext): Promise<MessageChange> {
  const { now, claimedBy } = ctx;
  const events: NewEvent[] = [];
  const event = (type: EventType, recipient: string | null, from: MessageStatus | null, to: MessageStatus | null, data: Record<string, unknown>): void => {
    events.push({ id: newId("event", now), type, recipient, from_status: from, to_status: to, data, created_at: now });
  };

  const pending = message.recipients.filter((r) => IN_FLIGHT.includes(r.status));
  if (pending.length === 0) {
    // Canceled or settled while the job waited: nothing to send.
    return { scope: message.scope, messageId: message.id, status: message.status, recipients: [], events, job: { action: "delete" }, claimedBy, now };
  }

  let messageStatus = message.status;
  if (messageStatus === "scheduled") {
    messageStatus = transition("scheduled", "queued");
    event("message.queued", null, "scheduled", "queued", {});
  }
  const attempting = pending.map((r) => ({ recipient: r, before: r.status === "scheduled" ? transition("scheduled", "queued") : r.status }));
  for (const { before } of attempting) if (before !== "sending") transition(before, "sending");
  if (messageStatus !== "sending") messageStatus = transition(messageStatus, "sending");

  const rendered = message.mime === null ? await renderMessage(message, now) : null;
  const mime = rendered?.mime ?? message.mime!;
  const results = await ctx.transport.deliver(message, attempting.map((a) => a.recipient), mime);
  const byEmail = new Map(results.map((r) => [r.email, r]));

  const updated = new Map<number, { status: MessageStatus; detail: string | null; attempts: number }>();
  for (const { recipient, before } of attempting) {
    const result = byEmail.get(recipient.email);
    if (!result) throw new Error(`transport returned no result for ${recipient.email}`);
    const status = transition("sending", result.outcome);
    updated.set(recipient.id, { status, detail: result.response, attempts: recipient.attempts + 1 });
    event(`message.${result.outcome}`, recipient.email, before, status, {
      smtp_code: result.smtpCode,
      enhanced_status: result.enhancedStatus,
      response: result.response,
      attempt: recipient.attempts + 1,
      ...(result.simulated ? { simulated: true } : {}),
    });
    for (const followUp of result.followUps) event(followUp.type, recipient.email, null, null, followUp.data);
  }

  const statuses = message.recipients.map((r: RecipientRecord) => updated.get(r.id)?.status ?? r.status);
  const finalStatus = transition(messageStatus, aggregateStatus(statuses));
  const anyDeferred = [...updated.values()].some((u) => u.status === "deferred");
  return {
    scope: message.scope,
    messageId: message.id,
    status: finalStatus,
    recipients: [...updated].map(([id, u]) => ({ id, ...u })),
    events,
    ...(rendered ? { mime: rendered.mime, ...(message.text === null && rendered.text !== null ? { text: rendered.text } : {}) } : {}),
    job: anyDeferred ? { action: "reschedule", runAt: now + ctx.retryDelayMs } : { action: "delete" },
    claimedBy,
    now,
  };
}
