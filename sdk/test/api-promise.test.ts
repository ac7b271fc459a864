import { describe, expect, expectTypeOf, it } from "vitest";
import { NotFoundError, type APIPromise, type Mailroom, type PagePromise, type Suppression } from "../src/index.js";
import { contractExample, fakeClient, fakeFetch, json, problem } from "./helpers.js";

/**
 * What every call returns besides its data: `withResponse()` gives the HTTP response too, for
 * what the body does not say (201 created or 200 already there, Request-Id, Idempotent-Replayed,
 * RateLimit).
 */
const manual = contractExample<Suppression>("ManualSuppression");

/** The resources of the client (the nouns: `mr.messages`, `mr.domains`, ...), not its openapi-fetch client `http`. */
type Resources = { [Name in Exclude<keyof Mailroom, "http"> as Mailroom[Name] extends object ? (Mailroom[Name] extends (...args: never[]) => unknown ? never : Name) : never]: Mailroom[Name] };

/** "resource.method" of every call that resolves to one object of the API without being an APIPromise. */
type PlainPromiseCalls = {
  [R in keyof Resources & string]: {
    [M in keyof Resources[R] & string]: Resources[R][M] extends (...args: never[]) => infer Result
      ? Result extends APIPromise<unknown> | PagePromise<unknown>
        ? never
        : Result extends Promise<infer Value>
          ? Value extends Uint8Array | void
            ? never
            : `${R}.${M}`
          : never
      : never;
  }[keyof Resources[R] & string];
}[keyof Resources & string];

describe("withResponse()", () => {
  it("tells a suppression just added (201) from one already there (200), which resolve alike", async () => {
    const fake = fakeFetch([json(201, manual, { "request-id": "req_1" }), json(200, manual, { "request-id": "req_2" })]);
    const mr = fakeClient(fake);

    const added = await mr.suppressions.create({ email: "ada@example.com" }).withResponse();
    const again = await mr.suppressions.create({ email: "ada@example.com" }).withResponse();

    expect([added.response.status, again.response.status]).toEqual([201, 200]);
    expect([added.data, again.data]).toEqual([manual, manual]);
    expect(again.response.headers.get("request-id")).toBe("req_2");
  });

  it("shows that an answer was replayed under its Idempotency-Key", async () => {
    const fake = fakeFetch([json(201, manual, { "idempotent-replayed": "true" })]);
    const { response } = await fakeClient(fake).suppressions.create({ email: "ada@example.com" }, { idempotencyKey: "once" }).withResponse();
    expect(response.headers.get("idempotent-replayed")).toBe("true");
  });

  it("rejects with the same typed error as the call itself", async () => {
    const fake = fakeFetch([problem(404, "not_found")]);
    await expect(fakeClient(fake).suppressions.get("sup_missing").withResponse()).rejects.toThrow(NotFoundError);
  });

  it("sends the request once, however the call is awaited", async () => {
    const fake = fakeFetch([json(200, manual)]);
    const call = fakeClient(fake).suppressions.get("sup_1");
    const [data, { response }] = await Promise.all([call, call.withResponse()]);
    expect(data).toEqual(manual);
    expect(response.status).toBe(200);
    expect(fake.requests).toHaveLength(1);
  });

  it("is offered by every call that answers one object of the API; webhooks' verify and sign check and make signatures locally", () => {
    expectTypeOf<PlainPromiseCalls>().toEqualTypeOf<"webhooks.verify" | "webhooks.sign">();
  });

  it("is offered by the calls that answer one object, and the call still is a Promise of its data", async () => {
    const mr = fakeClient(fakeFetch([json(200, manual)]));
    const call = mr.suppressions.get("sup_1");
    expectTypeOf(call).toEqualTypeOf<APIPromise<Suppression>>();
    expectTypeOf(call).toMatchTypeOf<Promise<Suppression>>();
    expect(call).toBeInstanceOf(Promise);
    await expect(call.finally(() => undefined)).resolves.toEqual(manual);
  });
});
