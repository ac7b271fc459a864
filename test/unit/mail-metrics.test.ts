import { describe, expect, it } from "vitest";
import { addEvents, addUniqueEngagers, bucketStart, emptyTally, withRates } from "../../src/domain/mail-metrics.js";

describe("mail metrics", () => {
  it("starts hour and day buckets on whole UTC hours and days", () => {
    const at = Date.parse("2026-11-21T10:42:17.123Z");
    expect(new Date(bucketStart(at, "hour")).toISOString()).toBe("2026-11-21T10:00:00.000Z");
    expect(new Date(bucketStart(at, "day")).toISOString()).toBe("2026-11-21T00:00:00.000Z");
    expect(bucketStart(Date.parse("2026-11-21T00:00:00Z"), "day")).toBe(Date.parse("2026-11-21T00:00:00Z"));
  });

  it("counts a message once, by its first event, and opens by machines apart from people's", () => {
    const tally = emptyTally();
    addEvents(tally, { type: "message.queued", automated: false, events: 5, firsts: 3, bounceType: null });
    addEvents(tally, { type: "message.scheduled", automated: false, events: 4, firsts: 2, bounceType: null });
    addEvents(tally, { type: "message.opened", automated: true, events: 7, firsts: 0, bounceType: null });
    addEvents(tally, { type: "message.opened", automated: false, events: 2, firsts: 0, bounceType: null });
    addEvents(tally, { type: "message.clicked", automated: true, events: 1, firsts: 0, bounceType: null });
    addEvents(tally, { type: "message.delivered", automated: false, events: 4, firsts: 0, bounceType: null });
    addUniqueEngagers(tally, "message.opened", 1);
    addUniqueEngagers(tally, "message.delivered", 9); // not an engagement: ignored
    expect(tally).toMatchObject({ accepted: 5, opened: 2, machine_opened: 7, clicked: 0, machine_clicked: 1, delivered: 4, unique_opened: 1 });
  });

  it("counts hard and soft bounces within bounced; a bounce of no known type only in bounced", () => {
    const tally = emptyTally();
    addEvents(tally, { type: "message.bounced", automated: false, bounceType: "hard", events: 3, firsts: 0 });
    addEvents(tally, { type: "message.bounced", automated: false, bounceType: "soft", events: 2, firsts: 0 });
    addEvents(tally, { type: "message.bounced", automated: false, bounceType: null, events: 1, firsts: 0 });
    expect(tally).toMatchObject({ bounced: 6, hard_bounced: 3, soft_bounced: 2 });
  });

  it("derives rates over ended hand-offs and deliveries, null when there is nothing to divide by", () => {
    expect(withRates(emptyTally())).toMatchObject({ delivery_rate: null, bounce_rate: null, complaint_rate: null, open_rate: null, click_rate: null });
    const rates = withRates({ ...emptyTally(), delivered: 3, bounced: 1, failed: 2, complained: 1, unique_opened: 2, unique_clicked: 0 });
    expect(rates).toMatchObject({ delivery_rate: 0.5, bounce_rate: 0.1667, complaint_rate: 0.3333, open_rate: 0.6667, click_rate: 0 });
  });
});
