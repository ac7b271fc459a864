import { simulatedOutcome } from "../../domain/simulator.js";
import type { RecipientRecord } from "../../db/repositories/messages.js";
import type { Delivery } from "../pipeline.js";

/**
 * The sandbox's hand-off: the whole pipeline runs up to the SMTP transaction, which the
 * simulator replaces (DESIGN.md §8). Nothing leaves the machine. Outcomes depend only on the
 * address and the attempt number, so they are reproducible.
 */
export function simulateDelivery(recipient: RecipientRecord): Delivery {
  switch (simulatedOutcome(recipient.email)) {
    case "bounced":
      return { ...simulated, outcome: "bounced", bounceType: "hard", smtpCode: 550, enhancedStatus: "5.1.1", response: "550 5.1.1 The email account that you tried to reach does not exist (simulated)" };
    case "deferred":
      // Deferred on the first attempt, delivered on the retry: a whole deferral cycle.
      return recipient.attempts === 0 ? { ...simulated, outcome: "deferred", smtpCode: 451, enhancedStatus: "4.3.0", response: "451 4.3.0 Temporary failure, try again later (simulated)" } : delivered();
    case "complained":
      return delivered([{ type: "message.complained", data: { feedback_type: "abuse", simulated: true } }]);
    case "opened":
      return delivered([opened]);
    case "clicked":
      return delivered([opened, { type: "message.clicked", data: { url: "https://example.com/", user_agent: "Mozilla/5.0 (simulated)", ip: "192.0.2.1", simulated: true } }]);
    case "replied":
      return delivered([{ type: "message.replied", data: { from: recipient.email, subject: "Re: (simulated reply)", text: "Thanks! (simulated reply)", simulated: true } }]);
    case "delivered":
      return delivered();
  }
}

const simulated = { bounceType: null, remoteHost: null, simulated: true } as const;
const opened = { type: "message.opened" as const, data: { user_agent: "Mozilla/5.0 (simulated)", ip: "192.0.2.1", machine_open: false, first_open: true, simulated: true } };

function delivered(followUps: Delivery["followUps"] = []): Delivery {
  return { ...simulated, outcome: "delivered", smtpCode: 250, enhancedStatus: "2.0.0", response: "250 2.0.0 OK: simulated delivery", followUps };
}
