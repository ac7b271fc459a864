import type { Event, Recipient } from "mailroom";

/** A recipient's first-time engagement stamps, in the order they usually happen. */
export const ENGAGEMENT_STAMPS = [
  { key: "opened_at", label: "Opened" },
  { key: "clicked_at", label: "Clicked" },
  { key: "replied_at", label: "Replied" },
  { key: "complained_at", label: "Complained" },
  { key: "unsubscribed_at", label: "Unsubscribed" },
] as const satisfies readonly { key: keyof Recipient; label: string }[];

export type EngagementStamp = (typeof ENGAGEMENT_STAMPS)[number];

/** The stamps a recipient has, with when: what the recipients table shows. */
export function stampsOf(recipient: Recipient): Array<{ stamp: EngagementStamp; at: string }> {
  return ENGAGEMENT_STAMPS.flatMap((stamp) => {
    const at = recipient[stamp.key];
    return at ? [{ stamp, at }] : [];
  });
}

/** How an unsubscribe came in (the event's `method`), in words. */
const UNSUBSCRIBE_METHODS: Record<string, string> = { one_click: "one-click (RFC 8058)", page: "unsubscribe page", mailto: "unsubscribe email" };

const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

/**
 * What an event's data says in words: the transition, the remote server's reply, and for
 * engagement what a person wants to know first (the link clicked, whether it was a machine
 * rather than the person, first or repeat, who replied). The contract's Event.data lists these
 * fields; the client's user agent is apart (`userAgentOf`), as it is long.
 */
export function eventDetails(event: Event): string[] {
  const data = event.data as Record<string, unknown>;
  const parts: string[] = [];
  if (event.from_status && event.to_status) parts.push(`${event.from_status} → ${event.to_status}`);
  switch (event.type) {
    case "message.opened":
    case "message.clicked": {
      const clicked = event.type === "message.clicked";
      const url = text(data.url);
      if (url) parts.push(url);
      if (data[clicked ? "machine_click" : "machine_open"] === true) parts.push(clicked ? "likely a link scanner" : "likely a machine open (image proxy or privacy protection)");
      const first = data[clicked ? "first_click" : "first_open"];
      if (first === true) parts.push(clicked ? "first click" : "first open");
      else if (first === false) parts.push("repeat");
      break;
    }
    case "message.replied": {
      const from = text(data.from);
      const subject = text(data.subject);
      if (from) parts.push(`from ${from}`);
      if (subject) parts.push(subject);
      break;
    }
    case "message.complained": {
      const feedbackType = text(data.feedback_type);
      const reporter = text(data.reporting_mta);
      if (feedbackType) parts.push(`feedback: ${feedbackType}`);
      if (reporter) parts.push(`reported by ${reporter}`);
      break;
    }
    case "message.unsubscribed": {
      const method = text(data.method);
      if (method) parts.push(`by ${UNSUBSCRIBE_METHODS[method] ?? method}`);
      break;
    }
    default: {
      if (data.source === "dsn") parts.push(`reported later by ${text(data.reporting_mta) ?? "the receiving server"}${text(data.bounce_type) ? ` (${text(data.bounce_type)} bounce)` : ""}`);
      const response = text(data.diagnostic_code) ?? text(data.response);
      if (response) parts.push(response);
      else if (typeof data.smtp_code === "number" || typeof data.smtp_code === "string") parts.push(`SMTP ${data.smtp_code}`);
    }
  }
  if (data.simulated === true) parts.push("simulated");
  return parts;
}

/** The client an open, click, unsubscribe or complaint came from (its user agent), if known. */
export function userAgentOf(event: Event): string | undefined {
  return text((event.data as Record<string, unknown>).user_agent);
}
