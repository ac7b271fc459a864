import { describe, expect, it } from "vitest";
import { ConflictError, NotFoundError, UnprocessableEntityError, type DeletedObject, type Domain } from "../src/index.js";
import { ANY_KEY, contractExample, fakeClient, fakeFetch, json, page, problem, theRequest, twoPages } from "./helpers.js";

/**
 * `mr.domains` (tag `Domains`) over a fake fetch: each method's request (method, path, query,
 * body, Idempotency-Key) and how its answer comes back. The answers are the contract's examples;
 * `prism.test.ts` checks the requests against the contract itself.
 */
const DOMAIN_ID = "dom_01jd3k8m2q5v7w9x1y3z5a7b9c";
const pending = contractExample<Domain>("PendingDomain");
const verified = contractExample<Domain>("VerifiedDomain");
const deleted = contractExample<DeletedObject>("DeletedDomain");

describe("domains.create", () => {
  it("POSTs the name to /v1/domains with an Idempotency-Key and resolves to the domain with its DNS records", async () => {
    const fake = fakeFetch([json(201, pending)]);
    const domain = await fakeClient(fake).domains.create({ name: "acme.example" });
    expect(domain).toEqual(pending);
    expect(domain.records.map((record) => [record.type, record.name])).toContainEqual(["TXT", "_dmarc.acme.example"]);
    expect(theRequest(fake)).toEqual({ method: "POST", target: "/v1/domains", body: { name: "acme.example" }, idempotencyKey: ANY_KEY });
  });

  it("sends return_path_subdomain and the caller's own Idempotency-Key when given", async () => {
    const fake = fakeFetch([json(201, pending)]);
    await fakeClient(fake).domains.create({ name: "acme.example", return_path_subdomain: "mail" }, { idempotencyKey: "add-acme" });
    expect(theRequest(fake)).toMatchObject({ body: { name: "acme.example", return_path_subdomain: "mail" }, idempotencyKey: "add-acme" });
  });

  it("throws ConflictError domain_exists for a domain the workspace already has", async () => {
    const fake = fakeFetch([problem(409, "domain_exists")]);
    const error = await fakeClient(fake).domains.create({ name: "acme.example" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ status: 409, code: "domain_exists" });
    expect(fake.requests).toHaveLength(1);
  });
});

describe("domains.list", () => {
  it("GETs /v1/domains with the query and resolves to a page of domains", async () => {
    const fake = fakeFetch([page([verified])]);
    const first = await fakeClient(fake).domains.list({ limit: 10 });
    expect(first.data).toEqual([verified]);
    expect(first.hasNextPage()).toBe(false);
    expect(theRequest(fake)).toEqual({ method: "GET", target: "/v1/domains?limit=10", body: undefined, idempotencyKey: null });
  });

  it("sends the status filter, to list only the domains in that status", async () => {
    const fake = fakeFetch([page([])]);
    await fakeClient(fake).domains.list({ status: "temporary_failure", limit: 100 });
    expect(theRequest(fake).target).toBe("/v1/domains?status=temporary_failure&limit=100");
  });

  it("walks every page with for await, sending the cursor as after", async () => {
    const fake = twoPages(verified, { ...pending, id: "dom_2" });
    const ids: string[] = [];
    for await (const domain of fakeClient(fake).domains.list({ limit: 1 })) ids.push(domain.id);
    expect(ids).toEqual([DOMAIN_ID, "dom_2"]);
    expect(fake.requests.map((request) => request.url.search)).toEqual(["?limit=1", "?limit=1&after=cur_2"]);
  });
});

describe("domains.get", () => {
  it("GETs /v1/domains/{domain_id} and resolves to the domain", async () => {
    const fake = fakeFetch([json(200, verified)]);
    await expect(fakeClient(fake).domains.get(DOMAIN_ID)).resolves.toEqual(verified);
    expect(theRequest(fake)).toEqual({ method: "GET", target: `/v1/domains/${DOMAIN_ID}`, body: undefined, idempotencyKey: null });
  });

  it("escapes the domain id in the path", async () => {
    const fake = fakeFetch([json(200, verified)]);
    await fakeClient(fake).domains.get("dom/../1");
    expect(theRequest(fake).target).toBe("/v1/domains/dom%2F..%2F1");
  });

  it("throws NotFoundError for a domain the workspace does not have", async () => {
    const fake = fakeFetch([problem(404, "not_found")]);
    await expect(fakeClient(fake).domains.get(DOMAIN_ID)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("domains.update", () => {
  it("PATCHes the tracking settings to /v1/domains/{domain_id}, without an Idempotency-Key, and resolves to the domain", async () => {
    const updated = { ...verified, track_clicks: true, tracking_domain: "track.acme.example" };
    const fake = fakeFetch([json(200, updated)]);
    await expect(fakeClient(fake).domains.update(DOMAIN_ID, { track_clicks: true, tracking_domain: "track.acme.example" })).resolves.toEqual(updated);
    expect(theRequest(fake)).toEqual({ method: "PATCH", target: `/v1/domains/${DOMAIN_ID}`, body: { track_clicks: true, tracking_domain: "track.acme.example" }, idempotencyKey: null });
  });

  it("sends null as null: back to the workspace's default, or no tracking domain", async () => {
    const fake = fakeFetch([json(200, verified)]);
    await fakeClient(fake).domains.update(DOMAIN_ID, { track_opens: null, tracking_domain: null });
    expect(theRequest(fake).body).toEqual({ track_opens: null, tracking_domain: null });
  });

  it("throws UnprocessableEntityError with the field's pointer for a tracking domain that is not a host name", async () => {
    const fake = fakeFetch([problem(422, "validation_failed", { extra: { errors: [{ pointer: "/tracking_domain", message: "must be a host name" }] } })]);
    const error = await fakeClient(fake).domains.update(DOMAIN_ID, { tracking_domain: "not a host" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/tracking_domain" }] });
  });
});

describe("domains.delete", () => {
  it("DELETEs /v1/domains/{domain_id}, without an Idempotency-Key, and resolves to the deleted object", async () => {
    const fake = fakeFetch([json(200, deleted)]);
    await expect(fakeClient(fake).domains.delete(DOMAIN_ID)).resolves.toEqual({ id: DOMAIN_ID, object: "domain", deleted: true });
    expect(theRequest(fake)).toEqual({ method: "DELETE", target: `/v1/domains/${DOMAIN_ID}`, body: undefined, idempotencyKey: null });
  });
});

describe("domains.verify", () => {
  it("POSTs to /v1/domains/{domain_id}/verify with an Idempotency-Key and no body, and resolves to the domain with each record's status", async () => {
    const fake = fakeFetch([json(200, verified)]);
    const domain = await fakeClient(fake).domains.verify(DOMAIN_ID);
    expect(domain.status).toBe("verified");
    expect(domain.records.map((record) => record.status)).toEqual(["verified", "verified", "verified", "verified", "missing"]);
    expect(theRequest(fake)).toEqual({ method: "POST", target: `/v1/domains/${DOMAIN_ID}/verify`, body: undefined, idempotencyKey: ANY_KEY });
  });
});
