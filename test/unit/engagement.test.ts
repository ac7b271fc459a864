import { describe, expect, it } from "vitest";
import { countsRecorded, engagementEffect, happenedOnceAlready, NO_ENGAGEMENT_STAMPS, RECORDED_PER_RECIPIENT } from "../../src/domain/engagement.js";

const fresh = NO_ENGAGEMENT_STAMPS;

describe("engagementEffect", () => {
  it("marks a recipient's first open as first, stamps it, and counts it when a person opened", () => {
    expect(engagementEffect(fresh, "message.opened", { ip: "192.0.2.1" }, true)).toEqual({ data: { ip: "192.0.2.1", first_open: true }, stamp: "opened_at", counter: "opens", first: true });
  });

  it("records a repeat open as a repeat, without a new stamp", () => {
    const effect = engagementEffect({ ...fresh, opened_at: 1 }, "message.opened", {}, true);
    expect(effect).toMatchObject({ data: { first_open: false }, first: false, counter: "opens" });
  });

  it("does not count a machine open or a scanner's click, but still stamps and flags it", () => {
    expect(engagementEffect(fresh, "message.opened", { machine_open: true }, false)).toMatchObject({ counter: null, first: true, stamp: "opened_at" });
    expect(engagementEffect(fresh, "message.clicked", { machine_click: true }, false)).toMatchObject({ counter: null, data: { first_click: true } });
  });

  it("counts replies and adds no first/repeat flag to them", () => {
    expect(engagementEffect({ ...fresh, replied_at: 5 }, "message.replied", { from: "a@example.com" }, true)).toEqual({ data: { from: "a@example.com" }, stamp: "replied_at", counter: "replies", first: false });
  });

  it("records a complaint or an unsubscribe once per recipient, and never counts them", () => {
    expect(engagementEffect(fresh, "message.complained", {}, true)).toMatchObject({ stamp: "complained_at", counter: null, first: true });
    expect(engagementEffect({ ...fresh, complained_at: 1 }, "message.complained", {}, true)).toBeNull();
    expect(engagementEffect({ ...fresh, unsubscribed_at: 1 }, "message.unsubscribed", {}, true)).toBeNull();
  });

  it("takes a repeat complaint or unsubscribe again, as a repeat, when the suppression it made is gone", () => {
    const unsubscribed = { ...fresh, unsubscribed_at: 1 };
    expect(happenedOnceAlready(unsubscribed, "message.unsubscribed")).toBe(true);
    expect(happenedOnceAlready(fresh, "message.unsubscribed")).toBe(false);
    expect(happenedOnceAlready({ ...fresh, opened_at: 1 }, "message.opened")).toBe(false);
    expect(engagementEffect(unsubscribed, "message.unsubscribed", { method: "page" }, true, 0, true)).toEqual({ data: { method: "page" }, stamp: "unsubscribed_at", counter: null, first: false });
    expect(engagementEffect({ ...fresh, complained_at: 1 }, "message.complained", {}, true, 0, true)).toMatchObject({ first: false, counter: null });
  });

  it("stops recording a recipient's repeat opens and clicks once that many of the kind are recorded, and never a first one", () => {
    const opened = { ...fresh, opened_at: 1 };
    expect(engagementEffect(opened, "message.opened", {}, true, RECORDED_PER_RECIPIENT - 1)).toMatchObject({ first: false });
    expect(engagementEffect(opened, "message.opened", {}, true, RECORDED_PER_RECIPIENT)).toBeNull();
    expect(engagementEffect(fresh, "message.clicked", {}, true, RECORDED_PER_RECIPIENT)).toMatchObject({ first: true });
    expect(engagementEffect({ ...fresh, replied_at: 1 }, "message.replied", {}, true, RECORDED_PER_RECIPIENT)).toMatchObject({ counter: "replies" });
  });

  it("asks for the count only for repeats of a kind that repeats", () => {
    expect(countsRecorded({ ...fresh, opened_at: 1 }, "message.opened")).toBe(true);
    expect(countsRecorded(fresh, "message.opened")).toBe(false);
    expect(countsRecorded({ ...fresh, replied_at: 1 }, "message.replied")).toBe(false);
  });
});
