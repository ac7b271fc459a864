import { describe, expect, it } from "vitest";
import { hasPrefix, idTimeBound, newId, timeOfId } from "../../src/domain/ids.js";

describe("newId", () => {
  it("prefixes ids by kind", () => {
    expect(newId("message")).toMatch(/^msg_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(newId("apiKey")).toMatch(/^key_/);
    expect(hasPrefix(newId("event"), "event")).toBe(true);
    expect(hasPrefix(newId("event"), "message")).toBe(false);
  });

  it("sorts ids by creation time", () => {
    const earlier = newId("message", Date.parse("2026-01-01T00:00:00Z"));
    const later = newId("message", Date.parse("2026-01-01T00:00:00.001Z"));
    expect(earlier < later).toBe(true);
  });

  it("keeps ids made in the same millisecond strictly increasing", () => {
    const at = Date.parse("2026-06-01T12:00:00Z");
    const ids = Array.from({ length: 1000 }, () => newId("message", at));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("ids and time", () => {
  it("reads back the time an id was made", () => {
    const at = Date.parse("2026-11-21T10:42:17.123Z");
    expect(timeOfId(newId("request", at), "request")).toBe(at);
    expect(timeOfId(newId("event", at), "request")).toBeNull();
    expect(timeOfId("req_short", "request")).toBeNull();
    expect(timeOfId("req_0000000!!!aaaaaaaaaaaaaaaa", "request")).toBeNull();
  });

  it("bounds the ids made from a time on: after those made before it, before those made at or after it", () => {
    const at = Date.parse("2026-11-21T10:00:00Z");
    const bound = idTimeBound("event", at);
    expect(newId("event", at - 1) < bound).toBe(true);
    expect(newId("event", at) >= bound).toBe(true);
    expect(newId("event", at + 1) >= bound).toBe(true);
  });
});
