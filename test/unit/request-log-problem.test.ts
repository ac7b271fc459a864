import { describe, expect, it } from "vitest";
import { fittedProblem } from "../../src/http/request-log.js";

const problem = (errors: number, detail = "2 fields are invalid.") => ({
  type: "https://mailroom.dev/problems/validation_failed",
  title: "Validation failed",
  status: 422,
  detail,
  code: "validation_failed",
  request_id: "req_01jd3k8m2q5v7w9x1y3z5a7b9c",
  errors: Array.from({ length: errors }, (_, i) => ({ location: "body", pointer: `/messages/${i}/to/0`, message: "must be an email address, such as ada@example.com" })),
});

describe("the problem a request log entry keeps", () => {
  it("is the problem as it was answered when it fits in 8 KB", () => {
    const small = problem(3);
    expect(JSON.parse(fittedProblem(small))).toEqual(small);
  });

  it("keeps the first field errors that fit, and everything else, when there are too many", () => {
    const large = problem(500);
    const kept = fittedProblem(large);
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(8 * 1024);
    const parsed = JSON.parse(kept) as ReturnType<typeof problem>;
    expect(parsed.errors.length).toBeGreaterThan(50);
    expect(parsed.errors).toEqual(large.errors.slice(0, parsed.errors.length));
    expect({ ...parsed, errors: [] }).toEqual({ ...large, errors: [] });
  });

  it("keeps only the problem's identity when even its detail is too long", () => {
    const kept = JSON.parse(fittedProblem(problem(0, "x".repeat(10_000))));
    expect(kept).toEqual({ type: "https://mailroom.dev/problems/validation_failed", title: "Validation failed", status: 422, code: "validation_failed", request_id: "req_01jd3k8m2q5v7w9x1y3z5a7b9c" });
  });
});
