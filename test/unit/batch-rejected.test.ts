import { describe, expect, it } from "vitest";
import { BatchRejectedError, QuotaExceededError, ValidationError } from "../../src/domain/errors.js";

describe("BatchRejectedError", () => {
  it("lists each refused message's problems under /messages/<index>, and names one without pointers by its code", () => {
    const error = new BatchRejectedError([
      { index: 1, error: new ValidationError([{ location: "body", pointer: "/to", message: "bad" }, { location: "body", pointer: "/subject", message: "missing" }]) },
      { index: 4, error: new QuotaExceededError(10, 10, 1, "2026-12-01T00:00:00.000Z", 60) },
    ]);
    expect(error).toMatchObject({ kind: "unprocessable", code: "batch_rejected" });
    expect(error.message).toContain("messages 1, 4");
    expect(error.extra.errors).toEqual([
      { location: "body", pointer: "/messages/1/to", message: "bad" },
      { location: "body", pointer: "/messages/1/subject", message: "missing" },
      { location: "body", pointer: "/messages/4", message: expect.stringMatching(/^monthly_quota_exceeded: /) },
    ]);
  });
});
