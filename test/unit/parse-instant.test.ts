import { describe, expect, it } from "vitest";
import { fullFormats } from "ajv-formats/dist/formats.js";
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

  it("reads an offset without minutes (+01) or without a colon (-0230), as the contract's format admits them", () => {
    expect(parseInstant("2026-11-23T11:00:00+01")).toBe(Date.UTC(2026, 10, 23, 10));
    expect(parseInstant("2026-11-23T07:30:00-0230")).toBe(Date.UTC(2026, 10, 23, 10));
  });

  it("reads a space (or any whitespace) as the date and time separator, also before a leap second", () => {
    expect(parseInstant("2026-11-23 10:00:00Z")).toBe(Date.UTC(2026, 10, 23, 10));
    expect(parseInstant("2000-01-01 23:59:60Z")).toBe(Date.UTC(2000, 0, 1, 23, 59, 59, 999));
    expect(parseInstant("2000-01-02\t00:59:60.25+01")).toBe(Date.UTC(2000, 0, 1, 23, 59, 59, 999));
  });

  it("reads years before 100 as themselves, and fractions past milliseconds truncated", () => {
    expect(parseInstant("0042-03-04T05:06:07.891234Z")).toBe(new Date("0042-03-04T05:06:07.891Z").getTime());
  });

  it("is finite for every date-time the contract's format checker (ajv-formats) admits but hour 24", () => {
    const admitted = fullFormats["date-time"] as { validate: (s: string) => boolean };
    const samples = ["2026-11-23T10:00:00Z", "2026-11-23t10:00:00.5z", "2026-11-23 10:00:00+01", "2026-11-23\u00a010:00:00-0000", "2024-02-29T00:00:60+00:01", "2016-12-31T23:59:60.999-00:00", "2026-11-23T23:59:59+23:59", "0000-01-01T00:59:60+01:00"];
    for (const sample of samples) {
      expect(admitted.validate(sample), sample).toBe(true);
      expect(Number.isFinite(parseInstant(sample)), sample).toBe(true);
    }
  });

  it("is NaN for what is no date-time, or names no instant", () => {
    for (const value of ["yesterday", "2026-11-23", "2026-02-29T10:00:00Z", "2026-11-23T10:00:00", "2026-11-23T12:00:60Z", "2016-12-31T24:59:60+01:00", "2026-11-23T10:00:00+24:00", " 2026-11-23T10:00:00Z"]) {
      expect(parseInstant(value), value).toBeNaN();
    }
  });
});
