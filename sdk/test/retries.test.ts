import { describe, expect, it } from "vitest";
import {
  APIConnectionError,
  APITimeoutError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  type Mailroom,
  NotFoundError,
  RateLimitError,
  UnprocessableEntityError,
} from "../src/index.js";
import { backoffMs, retryingFetch } from "../src/transport.js";
import { acceptedMessage, aMessage, connectionRefused, connectionReset, fakeClient, fakeFetch, json, NOW, problem } from "./helpers.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("which answers are retried", () => {
  it.each([
    [500, "internal_error"],
    [502, "bad_gateway"],
    [503, "service_unavailable"],
    [429, "rate_limited"],
    [408, "request_timeout"],
  ])("retries a %i and returns the answer that follows it", async (status, code) => {
    const fake = fakeFetch([problem(status, code, { headers: NOW }), acceptedMessage("msg_after_retry")]);
    const message = await fakeClient(fake).messages.create(aMessage());
    expect(message.id).toBe("msg_after_retry");
    expect(fake.requests).toHaveLength(2);
  });

  it("retries a 409 idempotency_key_in_use, whose retry gets the first request's answer", async () => {
    const fake = fakeFetch([problem(409, "idempotency_key_in_use", { headers: NOW }), acceptedMessage("msg_first")]);
    await expect(fakeClient(fake).messages.create(aMessage())).resolves.toMatchObject({ id: "msg_first" });
    expect(fake.requests).toHaveLength(2);
  });

  it("keeps waiting out 409 idempotency_key_in_use after a timeout, without spending the retries, until the first attempt's answer arrives", async () => {
    // The first attempt (a batch fetching slow attachments, say) outlives the timeout; the server
    // is still running it, so every retry is told 409 until it finishes.
    const inUse = Array.from({ length: 6 }, () => problem(409, "idempotency_key_in_use", { headers: NOW }));
    const fake = fakeFetch(["hang", ...inUse, acceptedMessage("msg_slow_batch")]);
    await expect(fakeClient(fake, { timeout: 50, maxRetries: 1 }).messages.create(aMessage())).resolves.toMatchObject({ id: "msg_slow_batch" });
    expect(new Set(fake.requests.map((request) => request.headers.get("idempotency-key"))).size).toBe(1);
    expect(fake.requests).toHaveLength(8);
  });

  it("does not wait out 409 idempotency_key_in_use with maxRetries: 0", async () => {
    const fake = fakeFetch([problem(409, "idempotency_key_in_use", { headers: NOW })]);
    await expect(fakeClient(fake, { maxRetries: 0 }).messages.create(aMessage())).rejects.toBeInstanceOf(ConflictError);
    expect(fake.requests).toHaveLength(1);
  });

  it("retries a 409 domain_changed, a race lost to concurrent changes, under the same Idempotency-Key", async () => {
    const fake = fakeFetch([problem(409, "domain_changed", { headers: NOW }), json(200, { id: "dom_1", object: "domain" })]);
    await expect(fakeClient(fake).domains.rotateDkim("dom_1")).resolves.toMatchObject({ id: "dom_1" });
    expect(fake.requests).toHaveLength(2);
    expect(new Set(fake.requests.map((request) => request.headers.get("idempotency-key"))).size).toBe(1);
  });

  it("spends the retries on a 409 domain_changed, then throws it", async () => {
    const fake = fakeFetch(Array.from({ length: 3 }, () => problem(409, "domain_changed", { headers: NOW })));
    const error = await fakeClient(fake).domains.verify("dom_1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ code: "domain_changed" });
    expect(fake.requests).toHaveLength(3);
  });

  it("does not retry a 409 without Retry-After: the resource's state will not change by waiting", async () => {
    const fake = fakeFetch([problem(409, "message_not_cancelable")]);
    const error = await fakeClient(fake).messages.cancel("msg_1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ code: "message_not_cancelable" });
    expect(fake.requests).toHaveLength(1);
  });

  it.each([
    [400, "invalid_json", BadRequestError],
    [401, "invalid_api_key", AuthenticationError],
    [404, "not_found", NotFoundError],
    [422, "validation_failed", UnprocessableEntityError],
  ])("does not retry a %i (%s): the same request would fail the same way", async (status, code, ErrorClass) => {
    const fake = fakeFetch([problem(status, code, { headers: NOW })]);
    await expect(fakeClient(fake).messages.create(aMessage())).rejects.toBeInstanceOf(ErrorClass);
    expect(fake.requests).toHaveLength(1);
  });

  it("retries reads too", async () => {
    const fake = fakeFetch([problem(503, "service_unavailable", { headers: NOW }), json(200, { id: "msg_1" })]);
    await expect(fakeClient(fake).messages.get("msg_1")).resolves.toEqual({ id: "msg_1" });
    expect(fake.requests.map((request) => request.method)).toEqual(["GET", "GET"]);
  });
});

describe("maxRetries", () => {
  it("makes three attempts by default, then throws the last answer as a typed error", async () => {
    const fake = fakeFetch([503, 503, 503].map((status) => problem(status, "service_unavailable", { headers: NOW })));
    const error = await fakeClient(fake).messages.create(aMessage()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status: 503, code: "service_unavailable" });
    expect(fake.requests).toHaveLength(3);
  });

  it("makes a single attempt with maxRetries: 0", async () => {
    const fake = fakeFetch([problem(429, "rate_limited", { headers: NOW })]);
    await expect(fakeClient(fake, { maxRetries: 0 }).messages.create(aMessage())).rejects.toBeInstanceOf(RateLimitError);
    expect(fake.requests).toHaveLength(1);
  });

  it("makes maxRetries + 1 attempts when set higher", async () => {
    const fake = fakeFetch(Array.from({ length: 5 }, () => problem(500, "internal_error", { headers: NOW })));
    await expect(fakeClient(fake, { maxRetries: 4 }).messages.create(aMessage())).rejects.toBeInstanceOf(InternalServerError);
    expect(fake.requests).toHaveLength(5);
  });
});

describe("per-call timeout and maxRetries", () => {
  it("makes a single attempt for a call given maxRetries: 0, while the client's other calls retry", async () => {
    const fake = fakeFetch([problem(503, "service_unavailable", { headers: NOW }), problem(503, "service_unavailable", { headers: NOW }), acceptedMessage("msg_retried")]);
    const mr = fakeClient(fake);
    await expect(mr.messages.create(aMessage(), { maxRetries: 0 })).rejects.toBeInstanceOf(InternalServerError);
    expect(fake.requests).toHaveLength(1);
    await expect(mr.messages.create(aMessage())).resolves.toMatchObject({ id: "msg_retried" });
    expect(fake.requests).toHaveLength(3);
  });

  it("makes maxRetries + 1 attempts for a call given more than the client's", async () => {
    const fake = fakeFetch(Array.from({ length: 4 }, () => problem(500, "internal_error", { headers: NOW })));
    await expect(fakeClient(fake, { maxRetries: 0 }).messages.list({}, { maxRetries: 3 })).rejects.toBeInstanceOf(InternalServerError);
    expect(fake.requests).toHaveLength(4);
  });

  it("times out a call given a shorter timeout than the client's, naming that timeout", async () => {
    const fake = fakeFetch(["hang"]);
    const error = await fakeClient(fake, { timeout: 60_000 }).messages.create(aMessage(), { timeout: 50, maxRetries: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APITimeoutError);
    expect((error as APITimeoutError).message).toMatch(/50 ms/);
  });

  it("keeps a DELETE's own rules under per-call options: repeated where that is safe, not where it is not", async () => {
    const repeated = fakeFetch([connectionReset(), json(200, { id: "key_1", object: "api_key", revoked_at: "2026-11-21T10:00:00Z" })]);
    await expect(fakeClient(repeated, { maxRetries: 0 }).apiKeys.revoke("key_1", { maxRetries: 1 })).resolves.toMatchObject({ id: "key_1" });
    expect(repeated.requests).toHaveLength(2);

    const notRepeated = fakeFetch(["hang"]);
    await expect(fakeClient(notRepeated).accounts.removeMember("usr_1", { timeout: 50, maxRetries: 2 })).rejects.toBeInstanceOf(APITimeoutError);
    expect(notRepeated.requests).toHaveLength(1);
  });

  it.each([
    [{ timeout: 0 }, /Invalid timeout 0/],
    [{ timeout: Number.NaN }, /Invalid timeout NaN/],
    [{ maxRetries: -1 }, /Invalid maxRetries -1/],
    [{ maxRetries: 1.5 }, /Invalid maxRetries 1.5/],
  ])("refuses the call option %j as the client option would be, sending nothing", async (options, message) => {
    const fake = fakeFetch([acceptedMessage("msg_never")]);
    expect(() => fakeClient(fake).messages.create(aMessage(), options)).toThrow(message);
    expect(fake.requests).toHaveLength(0);
  });
});

describe("Idempotency-Key", () => {
  it("sends the same key and the same body on every attempt of one call", async () => {
    const fake = fakeFetch([problem(503, "service_unavailable", { headers: NOW }), problem(500, "internal_error", { headers: NOW }), acceptedMessage()]);
    await fakeClient(fake).messages.create(aMessage({ subject: "Once only" }));
    const keys = fake.requests.map((request) => request.headers.get("idempotency-key"));
    expect(keys[0]).toMatch(UUID);
    expect(new Set(keys)).toEqual(new Set([keys[0]]));
    expect(fake.requests.map((request) => JSON.parse(request.body))).toEqual(Array(3).fill(aMessage({ subject: "Once only" })));
  });

  it("sends a new key with each call, so two sends are two messages", async () => {
    const fake = fakeFetch([acceptedMessage("msg_a"), acceptedMessage("msg_b")]);
    const mr = fakeClient(fake);
    await mr.messages.create(aMessage());
    await mr.messages.create(aMessage());
    const [first, second] = fake.requests.map((request) => request.headers.get("idempotency-key"));
    expect(first).toMatch(UUID);
    expect(second).toMatch(UUID);
    expect(first).not.toBe(second);
  });

  it("sends the caller's own key when given, on every attempt", async () => {
    const fake = fakeFetch([problem(503, "service_unavailable", { headers: NOW }), acceptedMessage()]);
    await fakeClient(fake).messages.create(aMessage(), { idempotencyKey: "order-1234-receipt" });
    expect(fake.requests.map((request) => request.headers.get("idempotency-key"))).toEqual(["order-1234-receipt", "order-1234-receipt"]);
  });

  it.each(["Idempotency-Key", "idempotency-key", "IDEMPOTENCY-KEY"])("takes the key from a %s header given in options.headers, on every attempt", async (name) => {
    const fake = fakeFetch([problem(503, "service_unavailable", { headers: NOW }), acceptedMessage()]);
    await fakeClient(fake).messages.create(aMessage(), { headers: { [name]: "order-77" } });
    expect(fake.requests.map((request) => request.headers.get("idempotency-key"))).toEqual(["order-77", "order-77"]);
  });

  it("prefers idempotencyKey to an Idempotency-Key header", async () => {
    const fake = fakeFetch([acceptedMessage()]);
    await fakeClient(fake).messages.create(aMessage(), { idempotencyKey: "from-option", headers: { "Idempotency-Key": "from-header" } });
    expect(fake.requests[0]?.headers.get("idempotency-key")).toBe("from-option");
  });

  it("is sent with every POST: cancel, reschedule, key creation and rotation too", async () => {
    const fake = fakeFetch([json(200, {}), json(200, {}), json(201, {}), json(200, {})]);
    const mr = fakeClient(fake);
    await mr.messages.cancel("msg_1");
    await mr.messages.reschedule("msg_1", { scheduled_at: null });
    await mr.apiKeys.create({ name: "CI" });
    await mr.apiKeys.rotate("key_1");
    for (const request of fake.requests) expect(request.headers.get("idempotency-key")).toMatch(UUID);
  });

  it("is not sent with GET, PATCH or DELETE, which are idempotent by nature", async () => {
    const fake = fakeFetch([json(200, { id: "msg_1" }), json(200, {}), json(200, {})]);
    const mr = fakeClient(fake);
    await mr.messages.get("msg_1");
    await mr.workspace.update({ name: "Acme" });
    await mr.apiKeys.revoke("key_1");
    expect(fake.requests.map((request) => [request.method, request.headers.get("idempotency-key")])).toEqual([
      ["GET", null],
      ["PATCH", null],
      ["DELETE", null],
    ]);
  });
});

describe("connection failures", () => {
  it("retries a dropped connection with the same key and returns the answer that follows", async () => {
    const fake = fakeFetch([connectionReset(), acceptedMessage("msg_after_reset")]);
    await expect(fakeClient(fake, { maxRetries: 1 }).messages.create(aMessage())).resolves.toMatchObject({ id: "msg_after_reset" });
    const [first, second] = fake.requests.map((request) => request.headers.get("idempotency-key"));
    expect(second).toBe(first);
  });

  it("throws APIConnectionError, with the cause, once the retries are spent", async () => {
    const fake = fakeFetch([connectionReset(), connectionReset()]);
    const error = await fakeClient(fake, { maxRetries: 1 }).messages.create(aMessage()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect((error as APIConnectionError).message).toMatch(/ECONNRESET$/);
    expect((error as APIConnectionError).attempts).toBe(2);
    expect((error as APIConnectionError).cause).toBeInstanceOf(TypeError);
    expect(fake.requests).toHaveLength(2);
  });

  it("throws APITimeoutError when no answer arrives within the timeout", async () => {
    const fake = fakeFetch(["hang"]);
    const error = await fakeClient(fake, { timeout: 50, maxRetries: 0 }).messages.create(aMessage()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect((error as APITimeoutError).message).toMatch(/50 ms/);
  });

  it("times out a fetch that never notices the abort, without waiting on it", async () => {
    const fake = fakeFetch(["deaf"]);
    const error = await fakeClient(fake, { timeout: 50, maxRetries: 0 }).messages.create(aMessage()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APITimeoutError);
  });

  it("times out a response whose body stalls after its headers", async () => {
    const stalledBody = new ReadableStream<Uint8Array>({ start: (controller) => controller.enqueue(new TextEncoder().encode('{"id":')) });
    const fake = fakeFetch([new Response(stalledBody, { status: 202, headers: { "content-type": "application/json" } })]);
    const error = await fakeClient(fake, { timeout: 50, maxRetries: 0 }).messages.create(aMessage()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APITimeoutError);
  });

  it("says, once the retries are spent, how many attempts were made and how long they took in all", async () => {
    const fake = fakeFetch(["hang", connectionReset(), "hang"]);
    const started = Date.now();
    const error = (await fakeClient(fake, { timeout: 50, maxRetries: 2 }).messages.create(aMessage()).catch((e: unknown) => e)) as APITimeoutError;
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(error.message).toBe("The request timed out after 50 ms.");
    expect(error.attempts).toBe(3);
    // Two timeouts, and the backoff of 0.5 s then 1 s less up to a quarter.
    expect(error.elapsed_ms).toBeGreaterThanOrEqual(100 + 375 + 750);
    expect(error.elapsed_ms).toBeLessThanOrEqual(Date.now() - started);
    const single = (await fakeClient(fakeFetch(["hang"]), { timeout: 50, maxRetries: 0 }).messages.create(aMessage()).catch((e: unknown) => e)) as APITimeoutError;
    expect({ attempts: single.attempts, elapsed_ms: single.elapsed_ms }).toEqual({ attempts: 1, elapsed_ms: expect.any(Number) });
  });

  it("retries an attempt that timed out", async () => {
    const fake = fakeFetch(["hang", acceptedMessage("msg_second_try")]);
    await expect(fakeClient(fake, { timeout: 50, maxRetries: 1 }).messages.create(aMessage())).resolves.toMatchObject({ id: "msg_second_try" });
    expect(fake.requests).toHaveLength(2);
  });
});

describe("a DELETE after an attempt whose outcome is unknown", () => {
  it.each([
    ["timed out", "hang" as const],
    ["lost its connection", connectionReset()],
    ["got a 5xx", problem(503, "service_unavailable", { headers: NOW })],
  ])("answers deleted when the attempt that %s did delete it, and the retry gets 404", async (_what, first) => {
    const fake = fakeFetch([first, problem(404, "not_found")]);
    const deleted = await fakeClient(fake, { timeout: 50 }).webhooks.delete("whk_1");
    expect(deleted).toEqual({ id: "whk_1", object: "webhook", deleted: true });
    expect(fake.requests.map((request) => request.method)).toEqual(["DELETE", "DELETE"]);
  });

  it.each([
    ["suppressions", (mr: Mailroom) => mr.suppressions.delete("sup_1"), { id: "sup_1", object: "suppression", deleted: true }],
    ["domains", (mr: Mailroom) => mr.domains.delete("dom_1"), { id: "dom_1", object: "domain", deleted: true }],
    ["templates, by id", (mr: Mailroom) => mr.templates.delete("tpl_1"), { id: "tpl_1", object: "template", deleted: true }],
  ])("does the same for %s", async (_resource, remove, answer) => {
    const fake = fakeFetch([connectionReset(), problem(404, "not_found")]);
    await expect(remove(fakeClient(fake))).resolves.toEqual(answer);
  });

  it("throws NotFoundError for a 404 after a refused connection, which was never sent", async () => {
    const fake = fakeFetch([connectionRefused(), problem(404, "not_found")]);
    await expect(fakeClient(fake).webhooks.delete("whk_nope")).rejects.toBeInstanceOf(NotFoundError);
    expect(fake.requests).toHaveLength(2);
  });

  it("throws NotFoundError for a 404 to the first attempt", async () => {
    const fake = fakeFetch([problem(404, "not_found")]);
    await expect(fakeClient(fake).webhooks.delete("whk_nope")).rejects.toBeInstanceOf(NotFoundError);
  });

  it("sends a revocation of an API key again, which the server answers with the revoked key", async () => {
    const fake = fakeFetch([connectionReset(), json(200, { id: "key_1", object: "api_key", revoked_at: "2026-11-21T10:00:00Z" })]);
    await expect(fakeClient(fake).apiKeys.revoke("key_1")).resolves.toMatchObject({ id: "key_1" });
    expect(fake.requests).toHaveLength(2);
  });

  // Each answers the removed object, which a 404 to a repeat cannot give back; by slug, the
  // template's id is unknown, and the slug may name a newer template by then.
  it.each([
    ["accounts.removeMember", (mr: Mailroom) => mr.accounts.removeMember("usr_1")],
    ["accounts.revokeInvitation", (mr: Mailroom) => mr.accounts.revokeInvitation("inv_1")],
    ["templates.delete by slug", (mr: Mailroom) => mr.templates.delete("welcome")],
  ])("is not sent again for %s once an attempt's outcome is unknown: that attempt's error is thrown", async (_operation, remove) => {
    const timedOut = fakeFetch(["hang"]);
    await expect(remove(fakeClient(timedOut, { timeout: 50 }))).rejects.toBeInstanceOf(APITimeoutError);
    expect(timedOut.requests).toHaveLength(1);

    const failed = fakeFetch([problem(503, "service_unavailable", { headers: NOW })]);
    await expect(remove(fakeClient(failed))).rejects.toBeInstanceOf(InternalServerError);
    expect(failed.requests).toHaveLength(1);
  });

  it("is still sent again for those after an answer that says nothing was done (429), or a refused connection", async () => {
    const fake = fakeFetch([problem(429, "rate_limited", { headers: NOW }), connectionRefused(), json(200, { user_id: "usr_1" })]);
    await expect(fakeClient(fake).accounts.removeMember("usr_1")).resolves.toEqual({ user_id: "usr_1" });
    expect(fake.requests).toHaveLength(3);
  });
});

/**
 * Calls that a repeat would answer wrongly once an attempt may have done them: a PATCH carrying a
 * precondition (if stored, the edit moved the revision on, and a repeat would be refused 409
 * template_changed as if someone else had changed the template), and leaving a workspace (which
 * ends the token it was sent with, so a repeat would be refused 401, as for a bad token).
 */
describe.each([
  {
    call: "a PATCH carrying a precondition (base_revision)",
    make: (mr: Mailroom) => mr.templates.update("welcome", { subject: "Hello", base_revision: 3 }),
    repeatAnswer: problem(409, "template_changed"),
    success: { slug: "welcome", revision: 4 },
  },
  { call: "leaving a workspace", make: (mr: Mailroom) => mr.accounts.leaveWorkspace(), repeatAnswer: problem(401, "invalid_api_key"), success: { user_id: "usr_1" } },
])("$call after an attempt whose outcome is unknown", ({ make, repeatAnswer, success }) => {
  it.each([
    ["timed out", "hang" as const, APITimeoutError],
    ["lost its connection", connectionReset(), APIConnectionError],
    ["got a 5xx", problem(502, "bad_gateway", { headers: NOW }), InternalServerError],
  ])("is not sent again after an attempt that %s: that attempt's error is thrown", async (_what, first, ErrorClass) => {
    const fake = fakeFetch([first, repeatAnswer]);
    await expect(make(fakeClient(fake, { timeout: 50 }))).rejects.toBeInstanceOf(ErrorClass);
    expect(fake.requests).toHaveLength(1);
  });

  it("is still sent again after an answer that says nothing was done (429), or a refused connection", async () => {
    const fake = fakeFetch([problem(429, "rate_limited", { headers: NOW }), connectionRefused(), json(200, success)]);
    await expect(make(fakeClient(fake))).resolves.toEqual(success);
    expect(fake.requests).toHaveLength(3);
  });
});

describe("a PATCH without a precondition", () => {
  it("is retried after a 5xx: it does the same thing each time", async () => {
    const fake = fakeFetch([problem(503, "service_unavailable", { headers: NOW }), json(200, { slug: "welcome", revision: 4 })]);
    await expect(fakeClient(fake).templates.update("welcome", { subject: "Hello" })).resolves.toEqual({ slug: "welcome", revision: 4 });
    expect(fake.requests).toHaveLength(2);
  });
});

describe("aborting", () => {
  it("stops at once, without retrying, when the caller aborts during an attempt", async () => {
    const fake = fakeFetch(["hang", "hang", "hang"]);
    const controller = new AbortController();
    const call = fakeClient(fake).messages.create(aMessage(), { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    const error = await call.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error).not.toBeInstanceOf(APITimeoutError);
    expect(fake.requests).toHaveLength(1);
  });

  it("stops at once, without retrying, when the caller aborts during the wait between attempts", async () => {
    const fake = fakeFetch([problem(429, "rate_limited", { headers: { "retry-after": "5" } }), acceptedMessage()]);
    const controller = new AbortController();
    const started = performance.now();
    const call = fakeClient(fake).messages.create(aMessage(), { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    const error = await call.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error).toMatchObject({ message: "The request was aborted." });
    // Well short of the 5 s Retry-After: the wait itself was cut short.
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(fake.requests).toHaveLength(1);
  });
  it("rejects a call whose signal was aborted before it began, and leaves no rejection of its fetch unhandled", async () => {
    // A browser reports an unhandled rejection as a page error, and Node ends the process on one.
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => void unhandled.push(reason);
    process.on("unhandledRejection", record);
    try {
      const fake = fakeFetch(["hang"]);
      const error = await fakeClient(fake).messages.list({}, { signal: AbortSignal.abort() }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(APIConnectionError);
      expect(error).toMatchObject({ message: "The request was aborted." });
      // Node reports an unhandled rejection once the microtasks of the turn have run.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", record);
    }
  });
});

describe("Retry-After", () => {
  it("waits as long as the server asks before retrying", async () => {
    const fake = fakeFetch([problem(429, "rate_limited", { headers: { "retry-after": "1" } }), acceptedMessage()]);
    const started = performance.now();
    await fakeClient(fake).messages.create(aMessage());
    // Timing is the behaviour here: a 1 s Retry-After must not be cut short.
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
  });
});

/** retryingFetch with a recording sleep and pinned jitter: the waits it asks for, without waiting. */
function recordingPolicy(maxRetries = 2) {
  const sleeps: number[] = [];
  return { sleeps, policy: { maxRetries, timeoutMs: 1_000, random: () => 0, sleep: async (ms: number) => void sleeps.push(ms) } };
}

const request = () => new Request("http://mailroom.test/v1/messages", { method: "POST", body: "{}" });

describe("retryingFetch", () => {
  it("waits the Retry-After seconds", async () => {
    const { sleeps, policy } = recordingPolicy();
    const fake = fakeFetch([problem(429, "rate_limited", { headers: { "retry-after": "7" } }), json(202, {})]);
    await retryingFetch(fake.fetch, policy)(request());
    expect(sleeps).toEqual([7_000]);
  });

  it("waits until a Retry-After HTTP-date", async () => {
    const { sleeps, policy } = recordingPolicy();
    const in30s = new Date(Date.now() + 30_000).toUTCString();
    const fake = fakeFetch([problem(503, "service_unavailable", { headers: { "retry-after": in30s } }), json(202, {})]);
    await retryingFetch(fake.fetch, policy)(request());
    // An HTTP-date has whole seconds, so up to one second of the 30 is lost to rounding.
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThan(28_000);
    expect(sleeps[0]).toBeLessThanOrEqual(30_000);
  });

  it("returns a 429 at once when its Retry-After is over 60 s, rather than blocking the caller", async () => {
    const { sleeps, policy } = recordingPolicy();
    const fake = fakeFetch([problem(429, "rate_limited", { headers: { "retry-after": "61" } })]);
    const response = await retryingFetch(fake.fetch, policy)(request());
    expect(response.status).toBe(429);
    expect(sleeps).toEqual([]);
    expect(fake.requests).toHaveLength(1);
  });

  it("waits a full 60 s Retry-After", async () => {
    const { sleeps, policy } = recordingPolicy();
    const fake = fakeFetch([problem(429, "rate_limited", { headers: { "retry-after": "60" } }), json(202, {})]);
    await retryingFetch(fake.fetch, policy)(request());
    expect(sleeps).toEqual([60_000]);
  });

  it("waits the Retry-After seconds of a 409 domain_changed", async () => {
    const { sleeps, policy } = recordingPolicy();
    const fake = fakeFetch([problem(409, "domain_changed", { headers: { "retry-after": "1" } }), json(200, {})]);
    await retryingFetch(fake.fetch, policy)(request());
    expect(sleeps).toEqual([1_000]);
  });

  it("backs off 0.5 s, then 1 s, when the server does not say how long to wait", async () => {
    const { sleeps, policy } = recordingPolicy();
    const fake = fakeFetch([problem(500, "internal_error"), problem(500, "internal_error"), json(202, {})]);
    await retryingFetch(fake.fetch, policy)(request());
    expect(sleeps).toEqual([500, 1_000]);
  });

  it("backs off the same way after a dropped connection", async () => {
    const { sleeps, policy } = recordingPolicy();
    const fake = fakeFetch([connectionReset(), connectionReset(), json(202, {})]);
    await retryingFetch(fake.fetch, policy)(request());
    expect(sleeps).toEqual([500, 1_000]);
  });

  it("does not wait after the last attempt", async () => {
    const { sleeps, policy } = recordingPolicy(1);
    const fake = fakeFetch([problem(500, "internal_error"), problem(500, "internal_error")]);
    const response = await retryingFetch(fake.fetch, policy)(request());
    expect(response.status).toBe(500);
    expect(sleeps).toEqual([500]);
  });
});

describe("retryingFetch and 409 idempotency_key_in_use", () => {
  /** A policy whose waits move a fake clock forward instead of taking time. */
  function clockPolicy(maxRetries = 2, timeoutMs = 1_000) {
    let now = 1_000_000;
    const sleeps: number[] = [];
    const policy = {
      maxRetries,
      timeoutMs,
      random: () => 0,
      now: () => now,
      sleep: async (ms: number) => {
        sleeps.push(ms);
        now += ms;
      },
    };
    return { sleeps, policy };
  }

  it("polls at the Retry-After pace, without spending the retries, for up to the timeout plus the server's 60 s lock, then returns the 409", async () => {
    const { sleeps, policy } = clockPolicy(2, 1_000);
    const fake = fakeFetch(() => problem(409, "idempotency_key_in_use", { headers: { "retry-after": "1" } }));
    const response = await retryingFetch(fake.fetch, policy)(request());
    expect(response.status).toBe(409);
    expect(new Set(sleeps)).toEqual(new Set([1_000]));
    // 1 s timeout + 60 s lock: 61 waits of 1 s, then the 409 of the last poll is the answer.
    expect(sleeps.reduce((sum, ms) => sum + ms, 0)).toBe(61_000);
    expect(fake.requests).toHaveLength(62);
  });

  it("waits for the timeout plus the lock the 409 says the server keeps (lock_seconds), not the default 60 s", async () => {
    const { sleeps, policy } = clockPolicy(2, 1_000);
    const fake = fakeFetch(() => problem(409, "idempotency_key_in_use", { headers: { "retry-after": "1" }, extra: { lock_seconds: 5 } }));
    const response = await retryingFetch(fake.fetch, policy)(request());
    expect(response.status).toBe(409);
    // 1 s timeout + a 5 s lock: 6 waits of 1 s, then the 409 of the last poll is the answer.
    expect(sleeps.reduce((sum, ms) => sum + ms, 0)).toBe(6_000);
    expect(fake.requests).toHaveLength(7);
  });

  it("waits a longer lock out too, up to the longest the server allows (3600 s)", async () => {
    const longer = clockPolicy(2, 1_000);
    // Polled every 10 s: the first poll at or past 1 s + 300 s is at 310 s.
    const fake = fakeFetch(() => problem(409, "idempotency_key_in_use", { headers: { "retry-after": "10" }, extra: { lock_seconds: 300 } }));
    await retryingFetch(fake.fetch, longer.policy)(request());
    expect(longer.sleeps.reduce((sum, ms) => sum + ms, 0)).toBe(310_000);

    // Polled each minute: the first poll at or past 1 s + 3600 s is the 61st minute.
    const absurd = clockPolicy(2, 1_000);
    const forEver = fakeFetch(() => problem(409, "idempotency_key_in_use", { headers: { "retry-after": "60" }, extra: { lock_seconds: 1e9 } }));
    await retryingFetch(forEver.fetch, absurd.policy)(request());
    expect(absurd.sleeps.reduce((sum, ms) => sum + ms, 0)).toBe(61 * 60_000);
    expect(forEver.requests).toHaveLength(62);
  });

  it.each([["none", undefined], ["not a number", "60"], ["zero", 0], ["negative", -5]])("falls back to the default 60 s lock when lock_seconds is %s", async (_what, lockSeconds) => {
    const { sleeps, policy } = clockPolicy(2, 1_000);
    const extra = lockSeconds === undefined ? {} : { lock_seconds: lockSeconds };
    const fake = fakeFetch(() => problem(409, "idempotency_key_in_use", { headers: { "retry-after": "1" }, extra }));
    await retryingFetch(fake.fetch, policy)(request());
    expect(sleeps.reduce((sum, ms) => sum + ms, 0)).toBe(61_000);
  });

  it("still has its retries for other failures after polling", async () => {
    const { policy } = clockPolicy(1);
    const inUse = () => problem(409, "idempotency_key_in_use", { headers: { "retry-after": "1" } });
    const fake = fakeFetch([inUse(), inUse(), inUse(), problem(503, "service_unavailable"), json(202, {})]);
    const response = await retryingFetch(fake.fetch, policy)(request());
    expect(response.status).toBe(202);
    expect(fake.requests).toHaveLength(5);
  });
});

describe("the Idempotency-Key on errors", () => {
  it("is on the ConflictError of a call whose first attempt is still running, so that it can be retried under it", async () => {
    const fake = fakeFetch([problem(409, "idempotency_key_in_use")]);
    const error = await fakeClient(fake, { maxRetries: 0 }).messages.createBatch({ messages: [aMessage()] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as ConflictError).idempotency_key).toMatch(UUID);
    expect((error as ConflictError).idempotency_key).toBe(fake.requests[0]?.headers.get("idempotency-key"));
  });

  it("is on the APITimeoutError and APIConnectionError of a POST", async () => {
    const timedOut = fakeFetch(["hang"]);
    const timeout = await fakeClient(timedOut, { timeout: 50, maxRetries: 0 }).messages.create(aMessage(), { idempotencyKey: "order-9" }).catch((e: unknown) => e);
    expect(timeout).toBeInstanceOf(APITimeoutError);
    expect((timeout as APITimeoutError).idempotency_key).toBe("order-9");

    const reset = fakeFetch([connectionReset()]);
    const lost = await fakeClient(reset, { maxRetries: 0 }).messages.create(aMessage()).catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(APIConnectionError);
    expect((lost as APIConnectionError).idempotency_key).toBe(reset.requests[0]?.headers.get("idempotency-key"));
  });

  it("is on any other APIError of a POST, and undefined for a GET", async () => {
    const refused = await fakeClient(fakeFetch([problem(422, "validation_failed")])).messages.create(aMessage(), { idempotencyKey: "order-10" }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 422, idempotency_key: "order-10" });
    const missing = await fakeClient(fakeFetch([problem(404, "not_found")])).messages.get("msg_1").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as NotFoundError).idempotency_key).toBeUndefined();
  });
});

describe("backoffMs", () => {
  it("doubles from 0.5 s and stops growing at 8 s", () => {
    expect([0, 1, 2, 3, 4, 5, 10].map((attempt) => backoffMs(attempt, () => 0))).toEqual([500, 1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
  });

  it("takes off up to 25% as jitter, so clients that failed together do not retry together", () => {
    expect([0, 1, 4].map((attempt) => backoffMs(attempt, () => 0.5))).toEqual([438, 875, 7_000]);
    // Math.random() < 1, so the shortest wait is just above three quarters of the ceiling.
    expect([0, 1, 4].map((attempt) => backoffMs(attempt, () => 0.999_999))).toEqual([375, 750, 6_000]);
  });
});
