import { describe, expect, it } from "vitest";
import {
  APIError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  GoneError,
  InternalServerError,
  type Mailroom,
  MailroomError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
  retryAfterMs,
} from "../src/index.js";
import { fakeClient, fakeFetch, problem, type Reply } from "./helpers.js";

/** The error one call throws when the API answers `reply` (no retries, so 5xx arrive as they are). */
async function errorFor(reply: Reply): Promise<APIError> {
  const error = await fakeClient(fakeFetch([reply]), { maxRetries: 0 }).messages.get("msg_1").catch((e: unknown) => e);
  if (!(error instanceof APIError)) throw new Error(`expected an APIError, got ${String(error)}`);
  return error;
}

describe("the error class for each status", () => {
  it.each([
    { status: 400, code: "invalid_json", ErrorClass: BadRequestError },
    { status: 413, code: "payload_too_large", ErrorClass: BadRequestError },
    { status: 415, code: "unsupported_media_type", ErrorClass: BadRequestError },
    { status: 401, code: "invalid_api_key", ErrorClass: AuthenticationError },
    { status: 403, code: "insufficient_permission", ErrorClass: PermissionDeniedError },
    { status: 404, code: "not_found", ErrorClass: NotFoundError },
    { status: 409, code: "message_not_cancelable", ErrorClass: ConflictError },
    { status: 410, code: "content_removed", ErrorClass: GoneError },
    { status: 422, code: "validation_failed", ErrorClass: UnprocessableEntityError },
    { status: 429, code: "rate_limited", ErrorClass: RateLimitError },
    { status: 500, code: "internal_error", ErrorClass: InternalServerError },
    { status: 503, code: "service_unavailable", ErrorClass: InternalServerError },
  ])("throws a $status $code as $ErrorClass.name", async ({ status, code, ErrorClass }) => {
    const error = await errorFor(problem(status, code));
    expect(error).toBeInstanceOf(ErrorClass);
    expect(error.name).toBe(ErrorClass.name);
    expect({ status: error.status, code: error.code }).toEqual({ status, code });
  });

  it("throws a plain APIError for a status without a class of its own", async () => {
    const error = await errorFor(problem(405, "method_not_allowed"));
    expect(error.constructor).toBe(APIError);
    expect(error.code).toBe("method_not_allowed");
  });

  it("makes every API error a MailroomError, so one instanceof catches everything the SDK throws", async () => {
    expect(await errorFor(problem(404, "not_found"))).toBeInstanceOf(MailroomError);
  });
});

describe("the fields of an API error", () => {
  it("are the problem document's, unchanged", async () => {
    const errors = [{ location: "body", pointer: "/to", message: "is not a valid email address" }];
    const error = await errorFor(problem(422, "validation_failed", { extra: { title: "Validation failed", detail: "1 field is invalid.", request_id: "req_123", errors } }));
    expect(error).toMatchObject({ status: 422, code: "validation_failed", title: "Validation failed", detail: "1 field is invalid.", request_id: "req_123", errors });
    expect(error.problem).toMatchObject({ type: "https://mailroom.dev/problems/validation_failed", errors });
    expect(error.message).toBe("422 validation_failed: 1 field is invalid.");
  });

  it("keep the problem's own extensions in `problem`", async () => {
    const error = await errorFor(problem(409, "message_not_cancelable", { extra: { current_status: "delivered" } }));
    expect(error.problem).toMatchObject({ current_status: "delivered" });
  });

  it("have an empty errors list when the problem has none", async () => {
    expect((await errorFor(problem(404, "not_found"))).errors).toEqual([]);
  });

  it("take request_id from the Request-Id header when the body has none", async () => {
    const error = await errorFor(new Response("Bad Gateway", { status: 502, headers: { "request-id": "req_from_header" } }));
    expect(error.request_id).toBe("req_from_header");
  });

  it("expose the response headers", async () => {
    const error = await errorFor(problem(404, "not_found", { headers: { "ratelimit-policy": '"default";q=1200;w=60' } }));
    expect(error.headers.get("ratelimit-policy")).toBe('"default";q=1200;w=60');
  });
});

describe("a non-JSON error body", () => {
  it("gives an http_<status> code, a generic title and the body as detail, as a proxy's error page would need", async () => {
    const error = await errorFor(new Response("upstream connect error", { status: 502, headers: { "content-type": "text/plain" } }));
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status: 502, code: "http_502", title: "HTTP 502", detail: "upstream connect error", errors: [], problem: undefined });
  });

  it("is cut to 500 characters in detail", async () => {
    const error = await errorFor(new Response("x".repeat(2_000), { status: 500 }));
    expect(error.detail).toHaveLength(500);
  });

  it("keeps the title and detail of a problem document without a code (a gateway's), with code http_<status>", async () => {
    const gateway = { title: "Service Unavailable", status: 503, detail: "The upstream is restarting." };
    const error = await errorFor(new Response(JSON.stringify(gateway), { status: 503, headers: { "content-type": "application/problem+json" } }));
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status: 503, code: "http_503", title: "Service Unavailable", detail: "The upstream is restarting.", errors: [] });
    expect(error.problem).toEqual(gateway);
    expect(error.message).toBe("503 http_503: The upstream is restarting.");
  });

  it("ignores fields of a problem document that are not of the problem's types", async () => {
    const odd = { status: 400, code: 7, title: ["x"], detail: { text: "y" }, errors: "none" };
    const error = await errorFor(new Response(JSON.stringify(odd), { status: 400, headers: { "content-type": "application/json" } }));
    expect(error).toMatchObject({ status: 400, code: "http_400", title: "HTTP 400", detail: undefined, errors: [] });
  });

  it("is not mistaken for a problem when it is JSON of another shape", async () => {
    const error = await errorFor(new Response(JSON.stringify({ message: "Not Found" }), { status: 404, headers: { "content-type": "application/json" } }));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ code: "http_404", problem: undefined });
  });

  it("leaves detail empty when the body is empty", async () => {
    const error = await errorFor(new Response(null, { status: 401 }));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error.detail).toBeUndefined();
    expect(error.message).toBe("401 http_401");
  });
});

describe("a success whose body is not JSON", () => {
  /** What one call throws when the API answers `reply`, whatever it is. */
  const thrownBy = (reply: Reply, call: (mr: Mailroom) => PromiseLike<unknown>) => Promise.resolve(call(fakeClient(fakeFetch([reply]), { maxRetries: 0 }))).catch((e: unknown) => e);

  it("throws an APIError naming the status and the content-type, as a captive portal's sign-in page would need", async () => {
    const page = new Response("<html><body>Sign in to the Wi-Fi</body></html>", { status: 200, headers: { "content-type": "text/html; charset=utf-8" } });
    const error = await thrownBy(page, (mr) => mr.messages.get("msg_1"));
    expect(error).toBeInstanceOf(APIError);
    expect(error).toMatchObject({ status: 200, code: "http_200", problem: undefined });
    expect((error as APIError).message).toMatch(/^200 http_200: .*not JSON.*text\/html; charset=utf-8.*Sign in to the Wi-Fi/);
  });

  it.each([
    ["without Content-Length", {}],
    ["with Content-Length: 0", { "content-length": "0" }],
  ])("throws an APIError for an empty body where the operation promises JSON (%s)", async (_what, headers) => {
    const empty = () => new Response("", { status: 200, headers: { "content-type": "application/json", ...headers } });
    const read = await thrownBy(empty(), (mr) => mr.messages.get("msg_1"));
    expect(read).toBeInstanceOf(APIError);
    expect(read).toMatchObject({ status: 200, code: "http_200" });
    expect((read as APIError).message).toMatch(/empty/);
    const accepted = await thrownBy(new Response(null, { status: 202, headers }), (mr) => mr.messages.create({ to: "ada@example.com", subject: "Hi", html: "<p>Hi</p>" }));
    expect(accepted).toBeInstanceOf(APIError);
    expect(accepted).toMatchObject({ status: 202, code: "http_202" });
  });

  it("still answers an empty attachment, whose body is bytes, as empty", async () => {
    const empty = new Response(new Uint8Array(0), { status: 200, headers: { "content-type": "application/octet-stream", "content-length": "0" } });
    const bytes = await fakeClient(fakeFetch([empty])).inbound.getAttachment("inb_1", 0);
    expect(bytes).toEqual(new Uint8Array(0));
  });

  it("throws an APIError for a JSON answer cut off on the way, for a list too", async () => {
    const cutOff = new Response('{"data":[{"id":"msg_1"', { status: 200, headers: { "content-type": "application/json" } });
    const error = await thrownBy(cutOff, (mr) => mr.messages.list());
    expect(error).toBeInstanceOf(APIError);
    expect(error).toMatchObject({ status: 200, code: "http_200" });
    expect((error as APIError).message).toMatch(/application\/json/);
  });
});

describe("RateLimitError.retry_after", () => {
  it("is the Retry-After seconds", async () => {
    const error = await errorFor(problem(429, "rate_limited", { headers: { "retry-after": "42" } }));
    expect((error as RateLimitError).retry_after).toBe(42);
  });

  it("is the seconds until a Retry-After HTTP-date, rounded up", async () => {
    const in90s = new Date(Date.now() + 90_000).toUTCString();
    const error = await errorFor(problem(429, "rate_limited", { headers: { "retry-after": in90s } }));
    // The HTTP-date drops the milliseconds, so the wait is 89 or 90 s.
    expect((error as RateLimitError).retry_after).toBeGreaterThanOrEqual(89);
    expect((error as RateLimitError).retry_after).toBeLessThanOrEqual(90);
  });

  it("is undefined when Retry-After is neither whole seconds nor an HTTP-date", async () => {
    const error = await errorFor(problem(429, "rate_limited", { headers: { "retry-after": "1.5" } }));
    expect((error as RateLimitError).retry_after).toBeUndefined();
  });

  it("is undefined when the server did not say", async () => {
    const error = await errorFor(problem(429, "rate_limited"));
    expect((error as RateLimitError).retry_after).toBeUndefined();
  });
});

describe("retryAfterMs", () => {
  const now = Date.parse("2026-11-30T10:00:00Z");
  const after = (value?: string) => retryAfterMs(new Headers(value === undefined ? {} : { "retry-after": value }), now);

  it("reads whole seconds and an HTTP-date as milliseconds from now", () => {
    expect(after("42")).toBe(42_000);
    expect(after(" 7 ")).toBe(7_000);
    expect(after("Mon, 30 Nov 2026 10:01:30 GMT")).toBe(90_000);
    expect(after("Mon, 30 Nov 2026 09:00:00 GMT")).toBe(0);
  });

  it("is undefined when Retry-After is absent, empty or neither form", () => {
    for (const value of [undefined, "", "1.5", "-3", "soon", "2026-11-30T10:01:30Z"]) expect(after(value), String(value)).toBeUndefined();
  });
});

describe("APIError.from", () => {
  it("builds the same typed error from a status, a parsed body and headers", () => {
    const body = { type: "https://mailroom.dev/problems/not_found", title: "Not found", status: 404, code: "not_found", request_id: "req_1" };
    const error = APIError.from(404, body, new Headers());
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ code: "not_found", request_id: "req_1" });
  });
});
