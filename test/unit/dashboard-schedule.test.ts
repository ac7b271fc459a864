import type { Event } from "mailroom";
import { describe, expect, it } from "vitest";
import { SCHEDULE_LIMIT_DAYS, dateTimeInputToInstant, dateTimeInputValue, isDueNow, isSentNow, scheduleBounds, scheduleChangeOf } from "../../dashboard/src/lib/schedule.js";

/**
 * The message page's Reschedule form and the timeline's words for a move
 * (dashboard/src/lib/schedule.ts). Datetime-local values are local wall-clock time, whatever time
 * zone the tests run in, so expectations are built with Date's local constructor.
 */
describe("datetime-local values", () => {
  it("reads a local date and time as the UTC instant it names", () => {
    expect(dateTimeInputToInstant("2026-11-23T09:00")).toBe(new Date(2026, 10, 23, 9, 0).toISOString());
    expect(dateTimeInputToInstant("2026-11-23T09:00:30")).toBe(new Date(2026, 10, 23, 9, 0, 30).toISOString());
  });

  it("answers RFC 3339 in UTC, as the API wants it", () => {
    expect(dateTimeInputToInstant("2026-11-23T09:00")).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/);
  });

  it.each(["", "2026-11-23", "2026-11-23 09:00", "2026-02-30T09:00", "2026-13-01T09:00", "2026-11-23T24:00", "2026-11-23T09:60", "tomorrow"])(
    "names no instant for %j",
    (value) => {
      expect(dateTimeInputToInstant(value)).toBeUndefined();
    },
  );

  it("writes an instant as its local date and time to the minute, which reads back as that minute", () => {
    const instant = new Date(2026, 10, 23, 9, 41, 27, 500);
    expect(dateTimeInputValue(instant)).toBe("2026-11-23T09:41");
    expect(dateTimeInputValue(instant.toISOString())).toBe("2026-11-23T09:41");
    expect(dateTimeInputToInstant(dateTimeInputValue(instant))).toBe(new Date(2026, 10, 23, 9, 41).toISOString());
  });

  it("pads single-digit months, days, hours and minutes", () => {
    expect(dateTimeInputValue(new Date(2027, 0, 5, 7, 3))).toBe("2027-01-05T07:03");
  });
});

describe("the range offered for a new send time", () => {
  const now = new Date(2026, 10, 21, 10, 0, 30).getTime();

  it("runs from now to 30 days ahead", () => {
    expect(SCHEDULE_LIMIT_DAYS).toBe(30);
    expect(scheduleBounds(null, now)).toEqual({ min: "2026-11-21T10:00", max: dateTimeInputValue(now + 30 * 86_400_000) });
  });

  it("ends before the message's expires_at, which the API refuses as a send time", () => {
    const expiresAt = new Date(2026, 10, 22, 18, 0).toISOString();
    expect(scheduleBounds(expiresAt, now).max).toBe("2026-11-22T17:59");
    expect(scheduleBounds(new Date(2026, 10, 22, 18, 0, 30).toISOString(), now).max).toBe("2026-11-22T18:00");
  });

  it("keeps the 30 days when expires_at is later", () => {
    expect(scheduleBounds(new Date(2027, 5, 1).toISOString(), now).max).toBe(dateTimeInputValue(now + 30 * 86_400_000));
  });
});

describe("what a message.scheduled event says of the send time", () => {
  const event = (type: Event["type"], data: Record<string, unknown>): Event =>
    ({ id: "evt_1", object: "event", type, message_id: "msg_1", recipient: null, from_status: "scheduled", to_status: "scheduled", data, created_at: "2026-11-21T10:00:00.000Z" }) as Event;

  it("gives the time a message was accepted for, with no previous one", () => {
    expect(scheduleChangeOf(event("message.scheduled", { scheduled_at: "2026-11-22T09:00:00.000Z" }))).toEqual({ at: "2026-11-22T09:00:00.000Z", previous: null });
  });

  it("gives both times of a reschedule", () => {
    expect(scheduleChangeOf(event("message.scheduled", { scheduled_at: "2026-11-23T09:00:00.000Z", previous_scheduled_at: "2026-11-22T09:00:00.000Z" }))).toEqual({
      at: "2026-11-23T09:00:00.000Z",
      previous: "2026-11-22T09:00:00.000Z",
    });
  });

  it("says nothing of another event, or of one without a time", () => {
    expect(scheduleChangeOf(event("message.queued", { scheduled_at: "2026-11-23T09:00:00.000Z" }))).toBeUndefined();
    expect(scheduleChangeOf(event("message.scheduled", {}))).toBeUndefined();
  });
});

describe("a scheduled message due now", () => {
  const at = "2030-05-01T09:00:00.000Z";

  it("is due once its send time is no later than its last change, as Send now leaves it, whatever the page reads of the server's clock", () => {
    expect(isDueNow({ status: "scheduled", scheduled_at: at, updated_at: at }, false)).toBe(true);
    expect(isDueNow({ status: "scheduled", scheduled_at: "2030-05-01T08:59:00.000Z", updated_at: at }, false)).toBe(true);
  });

  it("is due once its send time has come by the server's clock", () => {
    expect(isDueNow({ status: "scheduled", scheduled_at: "2030-05-01T10:00:00.000Z", updated_at: at }, true)).toBe(true);
  });

  it("is not due while its send time is ahead, nor once it is no longer scheduled", () => {
    expect(isDueNow({ status: "scheduled", scheduled_at: "2030-05-01T10:00:00.000Z", updated_at: at }, false)).toBe(false);
    expect(isDueNow({ status: "queued", scheduled_at: at, updated_at: at }, true)).toBe(false);
  });
});

describe("a scheduled message sent now", () => {
  const at = "2030-05-01T09:00:00.000Z";

  it("was sent now when its send time is no later than its last change, and not when its time is still ahead", () => {
    expect(isSentNow({ scheduled_at: at, updated_at: at })).toBe(true);
    expect(isSentNow({ scheduled_at: "2030-05-01T10:00:00.000Z", updated_at: at })).toBe(false);
    expect(isSentNow({ scheduled_at: null, updated_at: at })).toBe(false);
  });
});
