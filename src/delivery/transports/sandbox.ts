import { simulatedOutcome } from "../../domain/simulator.js";
import type { MessageRecord, RecipientRecord } from "../../db/repositories/messages.js";
import { textFromHtml } from "../../domain/text-from-html.js";
import { planRewrite } from "../../tracking/html.js";
import { MAX_TRACKED_URL_BYTES } from "../../tracking/tokens.js";
import type { Delivery, FollowUp, SimulatedReply } from "../pipeline.js";

/**
 * The sandbox's hand-off: the whole pipeline runs up to the SMTP transaction, which the
 * simulator replaces (DESIGN.md §8). Nothing leaves the machine. Outcomes depend only on the
 * address, the attempt number and the message, so they are reproducible; what follows a
 * delivery (opens, clicks, replies, complaints, unsubscribes) carries the same fields as the real
 * thing, with `simulated: true`, and is recorded by the same rules (stamps, counters, first/repeat).
 */
export function simulateDelivery(recipient: RecipientRecord, message: MessageRecord): Delivery {
  switch (simulatedOutcome(recipient.email)) {
    case "bounced":
      return bounce("hard", 550, "5.1.1", "The email account that you tried to reach does not exist");
    case "soft_bounced":
      // A full mailbox: refused for this message only, so it suppresses nothing (docs/delivery.md).
      return bounce("soft", 552, "5.2.2", "The email account that you tried to reach is over quota");
    case "deferred":
      // Deferred on the first attempt, delivered on the retry: a whole deferral cycle.
      return recipient.attempts === 0 ? { ...simulated, outcome: "deferred", smtpCode: 451, enhancedStatus: "4.3.0", response: "451 4.3.0 Temporary failure, try again later (simulated)" } : delivered();
    case "opened":
      // A first open, then a repeat from another device: both recorded, the second marked.
      return delivered([open(PHONE), open(DESKTOP)]);
    case "clicked":
      return delivered([open(PHONE), { type: "message.clicked", data: { url: firstLink(message), user_agent: PHONE, ip: CLIENT_IP, machine_click: false, simulated: true } }]);
    case "replied":
      return delivered([open(DESKTOP), { type: "message.replied", data: {}, reply: simulatedReply(recipient, message) }]);
    case "complained":
      return delivered([
        open(DESKTOP),
        // An ARF report (RFC 5965) as a mailbox provider's feedback loop sends it, with the fields
        // the inbound server keeps of a real one (the reporting MTA without its "dns;" type).
        { type: "message.complained", data: { feedback_type: "abuse", user_agent: "SimulatorFBL/1.0", reporting_mta: "fbl.simulator.test", source_ip: "192.0.2.25", simulated: true } },
      ]);
    case "unsubscribed":
      return delivered([open(PHONE), { type: "message.unsubscribed", data: { method: "one_click", user_agent: PHONE, ip: CLIENT_IP, simulated: true } }]);
    case "delivered":
      return delivered();
  }
}

const PHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 (simulated)";
const DESKTOP = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) (simulated)";
const CLIENT_IP = "192.0.2.1"; // TEST-NET-1 (RFC 5737): never a real client

const simulated = { bounceType: null, remoteHost: "mx.simulator.test[192.0.2.25]", simulated: true } as const;

function open(userAgent: string): FollowUp {
  return { type: "message.opened", data: { user_agent: userAgent, ip: CLIENT_IP, machine_open: false, simulated: true } };
}

/** A refusal at hand-off, with the fields the remote MTA's DSN (RFC 3464) would have given. */
function bounce(bounceType: "hard" | "soft", smtpCode: number, enhancedStatus: string, text: string): Delivery {
  const reply = `${smtpCode} ${enhancedStatus} ${text}`;
  return {
    ...simulated,
    outcome: "bounced",
    bounceType,
    smtpCode,
    enhancedStatus,
    response: `${reply} (simulated)`,
    details: { bounce_type: bounceType, action: "failed", diagnostic_code: `smtp; ${reply}`, reporting_mta: "mx.simulator.test" },
  };
}

function delivered(followUps: FollowUp[] = []): Delivery {
  return { ...simulated, outcome: "delivered", smtpCode: 250, enhancedStatus: "2.0.0", response: "250 2.0.0 OK: simulated delivery", followUps };
}

/**
 * The link a reader would click: the first that click tracking would rewrite, as a live click
 * records it (entities decoded, serialised: docs/tracking.md#what-is-rewritten), else a
 * placeholder. Found by the tracking's own parser, so that a rehearsed `url` is the one live mail
 * will report, never `&amp;` for `&` nor a link in a comment that live mail never tracks.
 */
function firstLink(message: MessageRecord): string {
  if (message.html === null) return PLACEHOLDER_LINK;
  return planRewrite(message.html, { maxLinks: 1, maxUrlBytes: MAX_TRACKED_URL_BYTES }).links[0]?.url ?? PLACEHOLDER_LINK;
}

const PLACEHOLDER_LINK = "https://example.com/";

const replySubject = (subject: string): string => (/^re:/i.test(subject) ? subject : `Re: ${subject}`);

/** The reply a person would write: new text above the quoted message, threaded by In-Reply-To. */
function simulatedReply(recipient: RecipientRecord, message: MessageRecord): SimulatedReply {
  const original = message.text ?? (message.html === null ? "" : textFromHtml(message.html));
  const quoted = original.split("\n").slice(0, 20).map((line) => `> ${line}`.trimEnd());
  return {
    from: recipient.name ? `${recipient.name} <${recipient.email}>` : recipient.email,
    to: [message.reply_to[0] ?? message.from],
    subject: replySubject(message.subject),
    text: "Thanks, that worked! (simulated reply)",
    quoted_text: [`On ${new Date(message.created_at).toUTCString()}, ${message.from} wrote:`, ...quoted].join("\n"),
    html: null,
    message_id_header: `<reply.${message.id}.${recipient.position}@simulator.test>`,
    in_reply_to: message.message_id_header,
    authentication: { spf: "pass", dkim: "pass", dmarc: "pass" },
    attachments: [],
  };
}
