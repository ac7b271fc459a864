import { describe, expect, it } from "vitest";
import { NotFoundError, UnprocessableEntityError, type DeletedObject, type Suppression } from "../src/index.js";
import { ANY_KEY, contractExample, fakeClient, fakeFetch, json, page, problem, theRequest, twoPages } from "./helpers.js";

/**
 * `mr.suppressions` (tag `Suppressions`) over a fake fetch: each method's request and how its
 * answer comes back, the answers being the contract's examples.
 */
const SUPPRESSION_ID = "sup_01jd3k8m2q5v7w9x1y3z5a7b9c";
const manual = contractExample<Suppression>("ManualSuppression");
const bounce = contractExample<Suppression>("BounceSuppression");
const deleted = contractExample<DeletedObject>("DeletedSuppression");

describe("suppressions.list", () => {
  it("GETs /v1/suppressions with the reason and email filters and resolves to a page", async () => {
    const fake = fakeFetch([page([bounce])]);
    const first = await fakeClient(fake).suppressions.list({ reason: "hard_bounce", email: "gone@example.com", limit: 5 });
    expect(first.data).toEqual([bounce]);
    expect(theRequest(fake)).toEqual({ method: "GET", target: "/v1/suppressions?reason=hard_bounce&email=gone%40example.com&limit=5", body: undefined, idempotencyKey: null });
  });

  it("walks every page with for await, sending the filters and the cursor with each", async () => {
    const fake = twoPages(bounce, { ...manual, id: "sup_2" });
    const ids: string[] = [];
    for await (const suppression of fakeClient(fake).suppressions.list({ reason: "manual" })) ids.push(suppression.id);
    expect(ids).toEqual([SUPPRESSION_ID, "sup_2"]);
    expect(fake.requests.map((request) => request.url.search)).toEqual(["?reason=manual", "?reason=manual&after=cur_2"]);
  });
});

describe("suppressions.create", () => {
  it("POSTs the address to /v1/suppressions with an Idempotency-Key and resolves to the new suppression", async () => {
    const fake = fakeFetch([json(201, manual)]);
    await expect(fakeClient(fake).suppressions.create({ email: "ada@example.com", reason: "manual", detail: "Asked to stop receiving receipts" })).resolves.toEqual(manual);
    expect(theRequest(fake)).toEqual({
      method: "POST",
      target: "/v1/suppressions",
      body: { email: "ada@example.com", reason: "manual", detail: "Asked to stop receiving receipts" },
      idempotencyKey: ANY_KEY,
    });
  });

  it("resolves to the existing suppression when the address was already suppressed (200)", async () => {
    const fake = fakeFetch([json(200, bounce)]);
    await expect(fakeClient(fake).suppressions.create({ email: "gone@example.com" })).resolves.toEqual(bounce);
    expect(theRequest(fake).body).toEqual({ email: "gone@example.com" });
  });

  it("throws UnprocessableEntityError with the failing field for an address that is not one", async () => {
    const fake = fakeFetch([problem(422, "validation_failed", { extra: { errors: [{ location: "body", pointer: "/email", message: "not an address" }] } })]);
    const error = await fakeClient(fake).suppressions.create({ email: "ada@" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect((error as UnprocessableEntityError).errors.map((field) => field.pointer)).toEqual(["/email"]);
  });
});

describe("suppressions.get", () => {
  it("GETs /v1/suppressions/{suppression_id} and resolves to the suppression", async () => {
    const fake = fakeFetch([json(200, bounce)]);
    await expect(fakeClient(fake).suppressions.get(SUPPRESSION_ID)).resolves.toEqual(bounce);
    expect(theRequest(fake)).toEqual({ method: "GET", target: `/v1/suppressions/${SUPPRESSION_ID}`, body: undefined, idempotencyKey: null });
  });

  it("throws NotFoundError for an id the environment does not have", async () => {
    await expect(fakeClient(fakeFetch([problem(404, "not_found")])).suppressions.get("sup_nope")).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("suppressions.delete", () => {
  it("DELETEs /v1/suppressions/{suppression_id}, without an Idempotency-Key, and resolves to the deleted object", async () => {
    const fake = fakeFetch([json(200, deleted)]);
    await expect(fakeClient(fake).suppressions.delete(SUPPRESSION_ID)).resolves.toEqual({ id: SUPPRESSION_ID, object: "suppression", deleted: true });
    expect(theRequest(fake)).toEqual({ method: "DELETE", target: `/v1/suppressions/${SUPPRESSION_ID}`, body: undefined, idempotencyKey: null });
  });
});
