import { describe, expect, it } from "vitest";
import { AuthenticationError, PermissionDeniedError, QuotaExceededError, RateLimitedError, SenderDomainNotVerifiedError, UnavailableError, ValidationError } from "../../src/domain/errors.js";
import { replyFor } from "../../src/submission/replies.js";

describe("replyFor", () => {
  it("refuses what the message gets wrong for good (5xx), each field by the request field it became, with the problem's code", () => {
    const reply = replyFor(new ValidationError([{ location: "body", pointer: "/to", message: "a To header naming at least one of the recipients is required" }, { location: "body", pointer: "/subject", message: "is required" }]));
    expect(reply).toEqual({ code: 554, text: "5.6.0 validation_failed: /to: a To header naming at least one of the recipients is required; /subject: is required" });
  });

  it("answers a sending policy (an unverified sender domain, a key's limits) with 550 5.7.1", () => {
    expect(replyFor(new SenderDomainNotVerifiedError("acme.example", false))).toMatchObject({ code: 550, text: expect.stringMatching(/^5\.7\.1 sender_domain_not_verified: \/from: acme\.example is not a verified domain/) });
    expect(replyFor(new PermissionDeniedError("full_access", "sending_access"))).toMatchObject({ code: 550, text: expect.stringMatching(/^5\.7\.1 insufficient_permission: /) });
  });

  it("defers what may pass in time (4xx), so a relaying client queues the message and retries", () => {
    expect(replyFor(new RateLimitedError(12))).toMatchObject({ code: 451, text: expect.stringMatching(/^4\.7\.1 rate_limited: .*retry in 12 s/) });
    expect(replyFor(new UnavailableError("The database is unavailable.", 5))).toMatchObject({ code: 451, text: expect.stringMatching(/^4\.3\.0 service_unavailable: /) });
    expect(replyFor(new QuotaExceededError(100, 100, 1, "2026-12-01T00:00:00.000Z", 3600))).toMatchObject({ code: 451, text: expect.stringMatching(/^4\.7\.1 monthly_quota_exceeded: /) });
  });

  it("answers bad credentials with 535 5.7.8", () => {
    expect(replyFor(new AuthenticationError())).toMatchObject({ code: 535, text: expect.stringMatching(/^5\.7\.8 invalid_api_key: /) });
  });

  it("keeps the text one line of printable ASCII that fits a reply line", () => {
    const reply = replyFor(ValidationError.field("/from", `"Zoë\r\nBcc: x@evil.example" ${"é".repeat(600)}`));
    expect(reply.text).toMatch(/^[\x20-\x7e]+$/);
    expect(reply.text.length).toBeLessThanOrEqual(487);
    expect(reply.text.endsWith("...")).toBe(true);
  });
});
