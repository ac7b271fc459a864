import { describe, expect, it } from "vitest";
import { isDomainStatus } from "../../dashboard/src/lib/domains.js";
import type { Webhook } from "mailroom";
import { EVENT_TYPE_GROUPS, isWebhookEventType, withoutSecret } from "../../dashboard/src/lib/webhooks.js";

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

describe("the endpoint page after a rotation", () => {
  it("keeps the endpoint without its new signing secret, which is shown once and then forgotten", () => {
    const rotated: Webhook = {
      id: "whk_01jd3k8m2q5v7w9x1y3z5a7b9c",
      object: "webhook",
      url: "https://acme.example/hooks/mailroom",
      description: "Orders",
      event_types: ["message.delivered"],
      environment: "sandbox",
      enabled: true,
      status: "enabled",
      disabled_reason: null,
      disabled_at: null,
      failing_since: null,
      created_at: "2026-11-20T09:00:00.000Z",
      updated_at: "2026-11-21T09:00:00.000Z",
      secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    };
    const kept = withoutSecret(rotated);
    expect(kept).not.toHaveProperty("secret");
    expect(JSON.stringify(kept)).not.toContain("whsec_");
    const { secret: _secret, ...rest } = rotated;
    expect(kept).toEqual(rest);
  });
});
