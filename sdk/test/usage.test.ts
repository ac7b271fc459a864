import { describe, expect, it } from "vitest";
import { UnprocessableEntityError, type Usage } from "../src/index.js";
import { contractExample, fakeClient, fakeFetch, json, problem, theRequest } from "./helpers.js";

/** `mr.usage` (tag `Usage`) over a fake fetch; the answer is the contract's example. */
const usage = contractExample<Usage>("Usage");

describe("usage.get", () => {
  it("GETs /v1/usage with from and to and resolves to the days, months, totals and quota", async () => {
    const fake = fakeFetch([json(200, usage)]);
    const answer = await fakeClient(fake).usage.get({ from: "2026-11-19", to: "2026-11-21" });
    expect(answer).toEqual(usage);
    expect(answer.days.map((day) => day.messages)).toEqual([400, 500, 350]);
    expect(answer.quota.remaining).toBe(40200);
    expect(theRequest(fake)).toEqual({ method: "GET", target: "/v1/usage?from=2026-11-19&to=2026-11-21", body: undefined, idempotencyKey: null });
  });

  it("sends no query without one, leaving the range to the API's default (this month)", async () => {
    const fake = fakeFetch([json(200, usage)]);
    await fakeClient(fake).usage.get();
    expect(theRequest(fake).target).toBe("/v1/usage");
  });

  it("throws UnprocessableEntityError when the API refuses the range", async () => {
    const fake = fakeFetch([problem(422, "validation_failed")]);
    await expect(fakeClient(fake).usage.get({ from: "2026-11-30", to: "2026-11-01" })).rejects.toBeInstanceOf(UnprocessableEntityError);
  });
});
