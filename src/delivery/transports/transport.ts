import type { EventType } from "../../domain/events.js";
import type { MessageRecord, RecipientRecord } from "../../db/repositories/messages.js";

/** What the remote side (or the simulator) said about one recipient. */
export interface RecipientResult {
  email: string;
  outcome: "delivered" | "deferred" | "bounced" | "failed";
  smtpCode: number;
  enhancedStatus: string;
  response: string;
  /** Engagement that followed delivery (the sandbox simulator produces these). */
  followUps: Array<{ type: EventType; data: Record<string, unknown> }>;
  simulated: boolean;
}

/**
 * Hands a rendered message to its recipients. A transport reports mail outcomes as values and
 * never throws for them (STYLE.md): an exception here is a bug.
 */
export interface Transport {
  deliver(message: MessageRecord, recipients: readonly RecipientRecord[], mime: string): Promise<RecipientResult[]>;
}
