import { describe, expect, it } from "vitest";
import { isDomainStatus } from "../../dashboard/src/lib/domains.js";
import { EVENT_TYPE_GROUPS, isWebhookEventType } from "../../dashboard/src/lib/webhooks.js";

/** The event types the webhook pages offer (dashboard/src/lib/webhooks.ts), and the Domains page's status filter. */
describe("the event types an endpoint can subscribe to", () => {
  it("are grouped as Messages, in lifecycle order, then Domains, each type once", () => {
    expect(EVENT_TYPE_GROUPS.map((group) => group.label)).toEqual(["Messages", "Domains"]);
    const [messages, domains] = EVENT_TYPE_GROUPS.map((group) => group.types);
    expect(messages?.slice(0, 3)).toEqual(["message.queued", "message.scheduled", "message.delivered"]);
    expect(messages?.every((type) => type.startsWith("message."))).toBe(true);
    expect(domains).toEqual(["domain.verified", "domain.temporary_failure", "domain.failed", "domain.dkim_rotated"]);
    const all = EVENT_TYPE_GROUPS.flatMap((group) => group.types);
    expect(new Set(all).size).toBe(all.length);
  });

  it("take a domain's type as well as a message's, and nothing else", () => {
    expect(["message.bounced", "domain.temporary_failure", "domain.failed"].every(isWebhookEventType)).toBe(true);
    expect(["message.sent", "domain.deleted", "domain", ""].some(isWebhookEventType)).toBe(false);
  });
});

describe("the Domains page's status filter", () => {
  it("takes the four domain statuses from the query string, and ignores anything else", () => {
    expect(["pending", "verified", "temporary_failure", "failed"].every(isDomainStatus)).toBe(true);
    expect(isDomainStatus("missing")).toBe(false);
    expect(isDomainStatus("toString")).toBe(false);
    expect(isDomainStatus(null)).toBe(false);
  });
});
