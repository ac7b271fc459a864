import { describe, expect, it } from "vitest";
import { aggregateStatus, canSettleAttempt, canTransition, IllegalTransitionError, MESSAGE_STATUSES, moveAggregate, settleAttempt, transition } from "../../src/domain/message-status.js";

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

describe("settleAttempt", () => {
  it.each([
    ["scheduled", "delivered"],
    ["queued", "bounced"],
    ["queued", "delivered"],
    ["deferred", "bounced"],
    ["sending", "failed"],
  ] as const)("ends an attempt from %s in %s, through sending", (from, to) => {
    expect(canSettleAttempt(from, to)).toBe(true);
    expect(settleAttempt(from, to)).toBe(to);
  });

  it.each([
    ["delivered", "bounced"],
    ["bounced", "delivered"],
    ["canceled", "bounced"],
    ["queued", "canceled"],
  ] as const)("refuses an attempt from %s ending in %s", (from, to) => {
    expect(canSettleAttempt(from, to)).toBe(false);
    expect(() => settleAttempt(from, to)).toThrow(IllegalTransitionError);
  });
});

describe("moveAggregate", () => {
  it.each([
    ["queued", "queued", "queued"],
    ["queued", "canceled", "canceled"],
    ["delivered", "bounced", "bounced"],
    // A DSN bounced one recipient and the other was canceled: the report proves the attempt.
    ["queued", "bounced", "bounced"],
    ["scheduled", "bounced", "bounced"],
  ] as const)("moves a message from %s to %s", (from, to, expected) => {
    expect(moveAggregate(from, to)).toBe(expected);
  });

  it.each([
    ["bounced", "delivered"],
    ["canceled", "queued"],
  ] as const)("refuses %s -> %s", (from, to) => {
    expect(() => moveAggregate(from, to)).toThrow(IllegalTransitionError);
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

  it("is canceled, not suppressed, when a cancel stopped the recipients a suppression had not", () => {
    expect(aggregateStatus(["suppressed", "canceled"])).toBe("canceled");
    expect(aggregateStatus(["suppressed", "suppressed"])).toBe("suppressed");
  });

  it("gives a cancel of a deferred message a legal move, whatever its other recipients settled as", () => {
    const settled = ["delivered", "bounced", "failed", "suppressed"] as const;
    // Every combination of settled recipients beside the deferred ones the cancel stops.
    for (let mask = 0; mask < 2 ** settled.length; mask++) {
      const others = settled.filter((_, i) => mask & (1 << i));
      const after = aggregateStatus([...others, "canceled"]);
      expect(canTransition("deferred", after), `deferred -> ${after} (others: ${others.join(", ") || "none"})`).toBe(true);
    }
  });
});
