import { describe, expect, it } from "vitest";
import { fixedWindow } from "../../src/domain/fixed-window.js";

describe("fixedWindow", () => {
  it("answers the window an instant falls in, its end, and the wait until then in whole seconds", () => {
    expect(fixedWindow(125_400, 60_000)).toEqual({ start: 120_000, end: 180_000, retryAfterSeconds: 55 });
    expect(fixedWindow(120_000, 60_000)).toEqual({ start: 120_000, end: 180_000, retryAfterSeconds: 60 });
  });

  it("never answers a wait under one second", () => {
    expect(fixedWindow(179_999, 60_000).retryAfterSeconds).toBe(1);
  });
});
