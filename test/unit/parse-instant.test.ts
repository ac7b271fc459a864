import { describe, expect, it } from "vitest";
import { parseInstant } from "../../src/domain/clock.js";

describe("parseInstant", () => {
  it("reads RFC 3339 date-times as Date.parse does", () => {
    expect(parseInstant("2026-11-23T10:00:00Z")).toBe(Date.UTC(2026, 10, 23, 10));
    expect(parseInstant("2026-11-23T11:00:00.250+01:00")).toBe(Date.UTC(2026, 10, 23, 10, 0, 0, 250));
  });

  it("reads a leap second as the last millisecond of its minute, in any offset and case", () => {
    expect(parseInstant("2016-12-31T23:59:60Z")).toBe(Date.UTC(2016, 11, 31, 23, 59, 59, 999));
    expect(parseInstant("2017-01-01t00:59:60.5+01:00")).toBe(Date.UTC(2016, 11, 31, 23, 59, 59, 999));
  });

  it("is NaN for what is no date-time", () => {
    expect(parseInstant("yesterday")).toBeNaN();
  });
});
