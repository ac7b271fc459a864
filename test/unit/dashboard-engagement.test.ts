import type { Event, MessageSummary, Recipient } from "mailroom";
import { describe, expect, it } from "vitest";
import { trackingChoice, trackingValue } from "../../dashboard/src/lib/domains.js";
import { eventDetails, stampsOf, userAgentOf } from "../../dashboard/src/lib/engagement.js";
import { dailyStats } from "../../dashboard/src/lib/stats.js";

/** The dashboard's engagement helpers (dashboard/src/lib/engagement.ts, stats.ts, domains.ts). */
const event = (type: Event["type"], data: Record<string, unknown>, transition: Partial<Event> = {}): Event =>
  ({ id: "evt_1", object: "event", type, message_id: "msg_1", recipient: "ada@example.com", from_status: null, to_status: null, data, created_at: "2026-11-21T10:00:00.000Z", ...transition }) as Event;

describe("the events timeline's details", () => {
  it("says a click's link and first or repeat, keeps its client apart, and marks link scanners", () => {
    const click = event("message.clicked", { url: "https://acme.example/a", first_click: true, machine_click: false, user_agent: "Firefox" });
    expect(eventDetails(click)).toEqual(["https://acme.example/a", "first click"]);
    expect(userAgentOf(click)).toBe("Firefox");
    expect(eventDetails(event("message.clicked", { url: "https://acme.example/a", first_click: false, machine_click: true }))).toEqual(["https://acme.example/a", "likely a link scanner", "repeat"]);
  });

  it("marks a likely machine open, and a simulated one", () => {
    expect(eventDetails(event("message.opened", { machine_open: true, first_open: true, user_agent: "GoogleImageProxy", simulated: true }))).toEqual([
      "likely a machine open (image proxy or privacy protection)",
      "first open",
      "simulated",
    ]);
    expect(userAgentOf(event("message.delivered", {}))).toBeUndefined();
  });

  it("says who replied, how a complaint and an unsubscribe came, and what a DSN reported", () => {
    expect(eventDetails(event("message.replied", { from: "Ada <ada@example.com>", subject: "Re: Hi" }))).toEqual(["from Ada <ada@example.com>", "Re: Hi"]);
    expect(eventDetails(event("message.complained", { feedback_type: "abuse", reporting_mta: "dns; fbl.example" }))).toEqual(["feedback: abuse", "reported by dns; fbl.example"]);
    expect(eventDetails(event("message.unsubscribed", { method: "one_click" }))).toEqual(["by one-click (RFC 8058)"]);
    expect(
      eventDetails(event("message.bounced", { source: "dsn", bounce_type: "hard", reporting_mta: "dns; mx.example", diagnostic_code: "smtp; 550 5.1.1 no such user" }, { from_status: "delivered", to_status: "bounced" })),
    ).toEqual(["delivered → bounced", "reported later by dns; mx.example (hard bounce)", "smtp; 550 5.1.1 no such user"]);
  });

  it("keeps a delivery's remote reply, or its SMTP code", () => {
    expect(eventDetails(event("message.delivered", { response: "250 OK" }, { from_status: "sending", to_status: "delivered" }))).toEqual(["sending → delivered", "250 OK"]);
    expect(eventDetails(event("message.deferred", { smtp_code: 451 }))).toEqual(["SMTP 451"]);
  });
});

describe("a recipient's engagement stamps", () => {
  it("lists the stamps that are set, in the order they usually happen", () => {
    const recipient = { opened_at: "2026-11-21T10:01:00Z", clicked_at: null, replied_at: "2026-11-21T10:05:00Z", complained_at: null, unsubscribed_at: null } as Recipient;
    expect(stampsOf(recipient).map(({ stamp, at }) => [stamp.label, at])).toEqual([
      ["Opened", "2026-11-21T10:01:00Z"],
      ["Replied", "2026-11-21T10:05:00Z"],
    ]);
  });
});

describe("the overview's opens and clicks per day", () => {
  it("adds each message's engagement to the day it was created on", () => {
    const since = new Date(2026, 10, 20);
    const summary = (day: number, opens: number, clicks: number) => ({ status: "delivered", created_at: new Date(2026, 10, day, 12).toISOString(), engagement: { opens, clicks, replies: 0 } }) as MessageSummary;
    const stats = dailyStats([summary(20, 2, 1), summary(21, 3, 0), summary(21, 1, 1), summary(19, 9, 9)], since, 2);
    expect(stats.engagement).toEqual({ opens: [2, 4], clicks: [1, 1] });
    expect([stats.opens, stats.clicks]).toEqual([6, 2]);
  });
});

describe("a domain's tracking default in the form", () => {
  it("maps null, true and false to Workspace default, On and Off, and back", () => {
    expect([null, true, false].map(trackingChoice)).toEqual(["workspace", "on", "off"]);
    expect(["workspace", "on", "off"].map(trackingValue)).toEqual([null, true, false]);
  });
});
