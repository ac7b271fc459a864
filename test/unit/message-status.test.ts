import { describe, expect, it } from "vitest";
import { aggregateStatus, canTransition, IllegalTransitionError, MESSAGE_STATUSES, transition } from "../../src/domain/message-status.js";

describe("transition", () => {
  it.each([
    ["scheduled", "queued"],
    ["queued", "sending"],
    ["sending", "delivered"],
    ["sending", "deferred"],
    ["deferred", "sending"],
    ["delivered", "bounced"],
    ["scheduled", "canceled"],
  ] as const)("allows %s -> %s", (from, to) => {
    expect(transition(from, to)).toBe(to);
  });

  it.each([
    ["delivered", "queued"],
    ["bounced", "delivered"],
    ["canceled", "queued"],
    ["queued", "delivered"],
    ["failed", "sending"],
  ] as const)("refuses %s -> %s", (from, to) => {
    expect(() => transition(from, to)).toThrow(IllegalTransitionError);
  });

  it("lets nothing leave bounced, failed, suppressed or canceled", () => {
    for (const from of ["bounced", "failed", "suppressed", "canceled"] as const) for (const to of MESSAGE_STATUSES) expect(canTransition(from, to)).toBe(false);
  });
});

describe("aggregateStatus", () => {
  it("shows the earliest stage while recipients are in flight", () => {
    expect(aggregateStatus(["delivered", "deferred"])).toBe("deferred");
    expect(aggregateStatus(["queued", "delivered"])).toBe("queued");
    expect(aggregateStatus(["scheduled", "scheduled"])).toBe("scheduled");
  });

  it("is delivered when any settled recipient was delivered", () => {
    expect(aggregateStatus(["delivered", "bounced"])).toBe("delivered");
    expect(aggregateStatus(["bounced", "failed"])).toBe("bounced");
    expect(aggregateStatus(["canceled"])).toBe("canceled");
  });
});
