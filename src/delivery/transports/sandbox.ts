import { simulatedOutcome } from "../../domain/simulator.js";
import type { MessageRecord, RecipientRecord } from "../../db/repositories/messages.js";
import type { RecipientResult, Transport } from "./transport.js";

/**
 * The sandbox's transport: the whole pipeline runs up to the SMTP hand-off, which is replaced
 * by the simulator (DESIGN.md §8). Nothing leaves the machine. Outcomes depend only on the
 * address and the attempt number, so they are reproducible.
 */
export class SandboxTransport implements Transport {
  async deliver(_message: MessageRecord, recipients: readonly RecipientRecord[]): Promise<RecipientResult[]> {
    return recipients.map((recipient) => simulate(recipient));
  }
}

const delivered = (email: string, followUps: RecipientResult["followUps"] = []): RecipientResult => ({
  email,
  outcome: "delivered",
  smtpCode: 250,
  enhancedStatus: "2.0.0",
  response: "250 2.0.0 OK: simulated delivery",
  followUps,
  simulated: true,
});

function simulate(recipient: RecipientRecord): RecipientResult {
  const email = recipient.email;
  switch (simulatedOutcome(email)) {
    case "bounced":
      return { email, outcome: "bounced", smtpCode: 550, enhancedStatus: "5.1.1", response: "550 5.1.1 The email account that you tried to reach does not exist (simulated)", followUps: [], simulated: true };
    case "deferred":
      // Deferred on the first attempt, delivered on the retry: a whole deferral cycle.
      return recipient.attempts === 0
        ? { email, outcome: "deferred", smtpCode: 451, enhancedStatus: "4.3.0", response: "451 4.3.0 Temporary failure, try again later (simulated)", followUps: [], simulated: true }
        : delivered(email);
    case "complained":
      return delivered(email, [{ type: "message.complained", data: { feedback_type: "abuse", simulated: true } }]);
    case "opened":
      return delivered(email, [{ type: "message.opened", data: { user_agent: "Mozilla/5.0 (simulated)", ip: "192.0.2.1", machine_open: false, first_open: true, simulated: true } }]);
    case "clicked":
      return delivered(email, [
        { type: "message.opened", data: { user_agent: "Mozilla/5.0 (simulated)", ip: "192.0.2.1", machine_open: false, first_open: true, simulated: true } },
        { type: "message.clicked", data: { url: "https://example.com/", user_agent: "Mozilla/5.0 (simulated)", ip: "192.0.2.1", simulated: true } },
      ]);
    case "replied":
      return delivered(email, [{ type: "message.replied", data: { from: email, subject: "Re: (simulated reply)", text: "Thanks! (simulated reply)", simulated: true } }]);
    case "delivered":
      return delivered(email);
  }
}
