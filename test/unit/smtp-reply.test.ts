import { describe, expect, it } from "vitest";
import { bounceTypeFor, classifyReply, parseEnhancedStatus, parseReply } from "../../src/delivery/smtp-reply.js";

describe("parseEnhancedStatus", () => {
  it.each([
    ["550 5.1.1 <bob@example.com>: Recipient address rejected: User unknown", "5.1.1"],
    ["5.2.2 Mailbox full", "5.2.2"],
    ["250 2.0.0 Ok: queued as 4Bq", "2.0.0"],
    ["550-5.1.1 The email account that you tried to reach does not exist.\n550 5.1.1  https://support.google.com/mail/?p=NoSuchUser", "5.1.1"],
    ["550 5.1.10 Recipient address has null MX", "5.1.10"],
    ["421 4.7.0 Try again later", "4.7.0"],
    ["550 Requested action not taken: mailbox unavailable (5.1.1)", "5.1.1"],
    // A multi-line reply whose first line is a banner: the code is on a later line.
    ["550-Message rejected, see https://postmaster.example.net\n550 5.7.1 Listed on a blocklist", "5.7.1"],
    ["554-mx.example.net\r\n554-Transaction failed\r\n554 5.1.1 No such user", "5.1.1"],
  ])("finds it in %j", (text, status) => {
    expect(parseEnhancedStatus(text)).toBe(status);
  });

  it.each([
    ["550 Mailbox unavailable"],
    ["554 rejected: your IP 5.10.20.30 is listed"],
    ["250 OK server 2.4.16 ready"],
    [""],
  ])("finds none in %j", (text) => {
    expect(parseEnhancedStatus(text)).toBeNull();
  });
});

describe("parseReply", () => {
  it("splits a raw reply into code, enhanced status and text", () => {
    expect(parseReply(" 451 4.3.0 Temporary failure\r\n")).toEqual({ code: 451, enhancedStatus: "4.3.0", message: "451 4.3.0 Temporary failure" });
    expect(parseReply("garbage")).toEqual({ code: null, enhancedStatus: null, message: "garbage" });
  });
});

describe("classifyReply", () => {
  it("calls a 2xx delivered", () => {
    expect(classifyReply({ code: 250, message: "250 2.0.0 Ok: queued as ABC", stage: "data" })).toEqual({ outcome: "delivered", bounceType: null, enhancedStatus: "2.0.0" });
    expect(classifyReply({ code: 250, message: "OK" })).toEqual({ outcome: "delivered", bounceType: null, enhancedStatus: "2.0.0" });
  });

  it("calls a 4xx deferred, with the server's enhanced status or 4.0.0", () => {
    expect(classifyReply({ code: 451, message: "451 4.3.0 Try again" })).toEqual({ outcome: "deferred", bounceType: null, enhancedStatus: "4.3.0" });
    expect(classifyReply({ code: 421, message: "Service not available" })).toEqual({ outcome: "deferred", bounceType: null, enhancedStatus: "4.0.0" });
    expect(classifyReply({ code: 452, enhancedStatus: "4.2.2", message: "Mailbox full" })).toEqual({ outcome: "deferred", bounceType: null, enhancedStatus: "4.2.2" });
  });

  it.each([
    ["5.1.1", "hard"],
    ["5.1.2", "hard"],
    ["5.1.3", "hard"],
    ["5.1.6", "hard"],
    ["5.1.10", "hard"],
    ["5.2.1", "hard"],
    ["5.1.7", "soft"],
    ["5.1.8", "soft"],
    ["5.2.0", "soft"],
    ["5.2.2", "soft"],
    ["5.2.3", "soft"],
    ["5.3.4", "soft"],
    ["5.4.1", "soft"],
    ["5.4.4", "soft"],
    ["5.5.2", "soft"],
    ["5.6.0", "soft"],
    ["5.7.1", "soft"],
    ["5.7.26", "soft"],
    ["5.9.9", "soft"],
  ])("bounces %s as %s", (status, bounceType) => {
    expect(classifyReply({ code: 550, message: `550 ${status} whatever` })).toEqual({ outcome: "bounced", bounceType, enhancedStatus: status });
  });

  it.each([
    [550, "hard"],
    [551, "hard"],
    [553, "hard"],
    [521, "hard"],
    [556, "hard"],
    [552, "soft"],
    [554, "soft"],
    [500, "soft"],
  ])("without an enhanced status (or with 5.0.0), bounces %i as %s at RCPT", (code, bounceType) => {
    expect(classifyReply({ code, message: `${code} Nope` })).toEqual({ outcome: "bounced", bounceType, enhancedStatus: "5.0.0" });
    expect(classifyReply({ code, message: `${code} 5.0.0 Nope` })).toEqual({ outcome: "bounced", bounceType, enhancedStatus: "5.0.0" });
  });

  it("does not hard-bounce (and suppress) a multi-line 550 whose enhanced status, on its last line, is a policy refusal", () => {
    const reply = "550-Message rejected, see https://postmaster.example.net\n550 5.7.1 Listed on a blocklist";
    expect(classifyReply({ code: 550, message: reply })).toEqual({ outcome: "bounced", bounceType: "soft", enhancedStatus: "5.7.1" });
  });

  it("takes a 550 after DATA without a specific enhanced status as a soft (content) bounce, and 5.1.1 there as hard", () => {
    expect(classifyReply({ code: 550, message: "550 Message rejected as spam", stage: "data" })).toMatchObject({ outcome: "bounced", bounceType: "soft" });
    expect(classifyReply({ code: 550, message: "550 5.1.1 User unknown", stage: "data" })).toMatchObject({ outcome: "bounced", bounceType: "hard" });
  });

  it("never hard-bounces the recipient for a refused sender (MAIL FROM)", () => {
    expect(classifyReply({ code: 553, message: "553 5.1.8 Sender domain does not exist", stage: "mail" })).toEqual({ outcome: "bounced", bounceType: "soft", enhancedStatus: "5.1.8" });
    expect(classifyReply({ code: 550, message: "550 5.1.1 No such sender", stage: "mail" })).toMatchObject({ bounceType: "soft" });
  });

  it("defers a 5xx greeting and refused relay credentials: neither is about the recipient", () => {
    expect(classifyReply({ code: 554, message: "554 5.7.1 No SMTP service here", stage: "connect" })).toEqual({ outcome: "deferred", bounceType: null, enhancedStatus: "4.7.1" });
    expect(classifyReply({ code: 535, message: "535 5.7.8 Authentication credentials invalid", stage: "auth" })).toEqual({ outcome: "deferred", bounceType: null, enhancedStatus: "4.7.8" });
    expect(classifyReply({ code: 530, message: "530 5.7.0 Authentication required", stage: "mail" })).toEqual({ outcome: "deferred", bounceType: null, enhancedStatus: "4.7.0" });
  });

  it("makes the enhanced status agree with the basic code's class (RFC 3463 §2)", () => {
    expect(classifyReply({ code: 550, message: "550 4.7.1 Blocked" })).toEqual({ outcome: "bounced", bounceType: "soft", enhancedStatus: "5.7.1" });
    expect(classifyReply({ code: 450, message: "450 5.2.2 Mailbox full" })).toEqual({ outcome: "deferred", bounceType: null, enhancedStatus: "4.2.2" });
  });

  it("defers a reply that is neither 2xx, 4xx nor 5xx", () => {
    expect(classifyReply({ code: 354, message: "354 End data with <CR><LF>.<CR><LF>" })).toEqual({ outcome: "deferred", bounceType: null, enhancedStatus: "4.0.0" });
  });
});

describe("bounceTypeFor", () => {
  it("classifies DNS outcomes the same way as replies", () => {
    expect(bounceTypeFor("5.1.10")).toBe("hard");
    expect(bounceTypeFor("5.1.2")).toBe("hard");
    expect(bounceTypeFor("5.4.4")).toBe("soft");
  });
});
