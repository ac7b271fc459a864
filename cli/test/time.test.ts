import { describe, expect, it } from "vitest";
import { UsageError } from "../src/command.js";
import { parseDay, parseInstant, parsePastInstant } from "../src/time.js";

const NOW = Date.parse("2026-11-21T10:00:00.000Z");

describe("parseInstant (--schedule, --expires-at)", () => {
  it.each([
    ["10m", "2026-11-21T10:10:00.000Z"],
    ["2h", "2026-11-21T12:00:00.000Z"],
    ["1d", "2026-11-22T10:00:00.000Z"],
    ["30s", "2026-11-21T10:00:30.000Z"],
    ["in 10m", "2026-11-21T10:10:00.000Z"],
    ["In 2h", "2026-11-21T12:00:00.000Z"],
  ])("reads %s as a duration from now", (value, expected) => {
    expect(parseInstant(value, "schedule", NOW)).toBe(expected);
  });

  it.each([
    ["2026-12-01T09:00:00Z", "2026-12-01T09:00:00.000Z"],
    ["2026-12-01T10:00:00+01:00", "2026-12-01T09:00:00.000Z"],
    ["2026-12-01T09:00:00.250Z", "2026-12-01T09:00:00.250Z"],
  ])("reads the RFC 3339 time %s, answering it in UTC", (value, expected) => {
    expect(parseInstant(value, "schedule", NOW)).toBe(expected);
  });

  it.each(["tomorrow", "10 minutes", "-10m", "10y", "", "12/01/2026", "2026-13-45T00:00:00Z", "2026-02-30T09:00:00Z", "2026-12-01T09:00:00", "2026-12-01", "1M", "2H", "1D", "10S"])("refuses %j with a UsageError naming the flag", (value) => {
    const parse = () => parseInstant(value, "schedule", NOW);
    expect(parse).toThrow(UsageError);
    expect(parse).toThrow(`--schedule takes an RFC 3339 time with its offset (2026-12-01T09:00:00Z) or a duration from now (10m, 2h, 1d); got "${value}".`);
  });

  it.each(["99999999d", "999999999999999999999s"])("refuses %j, too far from now to be a time, with a UsageError", (value) => {
    expect(() => parseInstant(value, "schedule", NOW)).toThrow(UsageError);
    expect(() => parseInstant(value, "schedule", NOW)).toThrow(/^--schedule: .* is too far from now/);
  });
});

describe("parsePastInstant (--since, --created-after, --created-before)", () => {
  it.each([
    ["10m", "2026-11-21T09:50:00.000Z"],
    ["2h", "2026-11-21T08:00:00.000Z"],
    ["1d", "2026-11-20T10:00:00.000Z"],
  ])("reads %s as a duration ago", (value, expected) => {
    expect(parsePastInstant(value, "since", NOW)).toBe(expected);
  });

  it("reads an RFC 3339 time as that time", () => {
    expect(parsePastInstant("2026-11-01T00:00:00Z", "since", NOW)).toBe("2026-11-01T00:00:00.000Z");
  });

  it.each(["in 10m", "IN 2h"])("refuses %j, a time to come, naming the flag", (value) => {
    expect(() => parsePastInstant(value, "since", NOW)).toThrow(UsageError);
    expect(() => parsePastInstant(value, "since", NOW)).toThrow(`--since takes an RFC 3339 time with its offset (2026-11-01T00:00:00Z) or a duration ago (10m, 2h, 1d); got "${value}".`);
  });

  it.each(["99999999d", "999999999999999999999s"])("refuses %j, too far back to be a time, with a UsageError", (value) => {
    expect(() => parsePastInstant(value, "created-after", NOW)).toThrow(UsageError);
    expect(() => parsePastInstant(value, "created-after", NOW)).toThrow(/^--created-after: .* is too far from now/);
  });

  it("refuses 1M: the units are s, m, h and d, in lower case", () => {
    expect(() => parsePastInstant("1M", "since", NOW)).toThrow(UsageError);
  });

  it("refuses what is neither, naming the flag", () => {
    expect(() => parsePastInstant("yesterday", "created-after", NOW)).toThrow(/^--created-after takes /);
    expect(() => parsePastInstant("yesterday", "created-after", NOW)).toThrow(UsageError);
  });
});

describe("parseDay (--from, --to)", () => {
  it.each(["2026-11-01", "2024-02-29", " 2026-12-31 "])("reads %j as the day it names", (value) => {
    expect(parseDay(value, "from")).toBe(value.trim());
  });

  it.each(["2026-11", "2026-02-30", "2025-02-29", "2026-13-01", "11/01/2026", "2026-11-01T00:00:00Z", "1d", ""])("refuses %j with a UsageError naming the flag", (value) => {
    const parse = () => parseDay(value, "to");
    expect(parse).toThrow(UsageError);
    expect(parse).toThrow(`--to takes a day as YYYY-MM-DD (2026-11-01); got "${value}".`);
  });
});
