import { describe, expect, it } from "vitest";
import { BadRequestError, type CreateSuppressionBatchParams, type SuppressionBatch } from "../src/index.js";
import { ANY_KEY, contractExample, fakeClient, fakeFetch, json, NOW, problem, theRequest } from "./helpers.js";

/** `mr.suppressions.createBatch` (`createSuppressionBatch`) over a fake fetch; the answer is the contract's example. */
const batch = contractExample<SuppressionBatch>("SuppressionBatch");
const suppressions: CreateSuppressionBatchParams["suppressions"] = [
  { email: "ada@example.com" },
  { email: "grace@example.com", reason: "unsubscribe", detail: "Imported from the old provider" },
  { email: "not-an-address" },
];

describe("suppressions.createBatch", () => {
  it("POSTs the addresses to /v1/suppressions/batch with an Idempotency-Key", async () => {
    const fake = fakeFetch([json(200, batch)]);
    await fakeClient(fake).suppressions.createBatch({ suppressions });
    expect(theRequest(fake)).toEqual({ method: "POST", target: "/v1/suppressions/batch", body: { suppressions }, idempotencyKey: ANY_KEY });
  });

  it("resolves, without throwing, to one answer per address: added, already suppressed or refused", async () => {
    const fake = fakeFetch([json(200, batch)]);
    const answer = await fakeClient(fake).suppressions.createBatch({ suppressions });
    expect(answer.data.map((item) => [item.index, item.status, item.suppression?.email ?? item.error?.errors?.[0]?.pointer])).toEqual([
      [0, 201, "ada@example.com"],
      [1, 200, "grace@example.com"],
      [2, 422, "/email"],
    ]);
  });

  it("sends the caller's own Idempotency-Key, and the same key and body on a retry", async () => {
    const fake = fakeFetch([problem(503, "service_unavailable", { headers: NOW }), json(200, batch)]);
    await fakeClient(fake).suppressions.createBatch({ suppressions }, { idempotencyKey: "import-2026-11-22#1" });
    expect(fake.requests.map((request) => request.headers.get("idempotency-key"))).toEqual(["import-2026-11-22#1", "import-2026-11-22#1"]);
    expect(fake.requests[1]?.body).toBe(fake.requests[0]?.body);
  });

  it("throws the typed error when the batch as a whole is refused", async () => {
    const fake = fakeFetch([problem(400, "invalid_json")]);
    await expect(fakeClient(fake).suppressions.createBatch({ suppressions })).rejects.toBeInstanceOf(BadRequestError);
  });
});
