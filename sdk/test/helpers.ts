import { readFileSync } from "node:fs";
import { expect } from "vitest";
import { parse } from "yaml";
import { Mailroom, type ClientOptions, type CreateMessageParams, type RequestBody } from "../src/index.js";

/** What a fake fetch saw of one attempt: enough to assert on headers, URL and body. */
export interface SeenRequest {
  method: string;
  url: URL;
  headers: Headers;
  body: string;
}

/**
 * What a fake fetch does for one attempt: answer with a Response, fail as a dropped connection
 * does (a thrown Error), `"hang"` until the SDK aborts it (a timeout), or `"deaf"`: hang and never
 * notice the abort, as a custom fetch may, and as `"hang"` itself does once a garbage collection
 * has cut its Request's signal off from the SDK's (undici follows it through a WeakRef).
 */
export type Reply = Response | Error | "hang" | "deaf";

export interface FakeFetch {
  fetch: (request: Request) => Promise<Response>;
  requests: SeenRequest[];
}

/**
 * A fetch that records every attempt and answers from a script: a list (one reply per attempt,
 * in order; a further attempt fails the test) or a function of the request.
 */
export function fakeFetch(script: Reply[] | ((request: Request) => Reply | Promise<Reply>)): FakeFetch {
  const requests: SeenRequest[] = [];
  const fetch = async (request: Request): Promise<Response> => {
    requests.push({ method: request.method, url: new URL(request.url), headers: request.headers, body: await request.clone().text() });
    const reply = Array.isArray(script) ? script[requests.length - 1] : await script(request);
    if (reply === undefined) throw new Error(`unexpected attempt ${requests.length}: the script has ${(script as Reply[]).length} replies`);
    if (reply === "hang") return hangUntilAborted(request);
    if (reply === "deaf") return new Promise<Response>(() => undefined);
    if (reply instanceof Error) throw reply;
    return reply;
  };
  return { fetch, requests };
}

function hangUntilAborted(request: Request): Promise<Response> {
  return new Promise((_resolve, reject) => {
    if (request.signal.aborted) return reject(request.signal.reason);
    request.signal.addEventListener("abort", () => reject(request.signal.reason), { once: true });
  });
}

/** A JSON success (or any JSON) response. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

/**
 * An RFC 9457 problem response as the API sends it. `Retry-After: 0` is worth adding to
 * retryable ones so that tests do not wait for the backoff.
 */
export function problem(status: number, code: string, options: { headers?: Record<string, string>; extra?: Record<string, unknown> } = {}): Response {
  const body = {
    type: `https://mailroom.dev/problems/${code}`,
    title: `Title of ${code}`,
    status,
    detail: `Detail of ${code}.`,
    code,
    request_id: "req_fake",
    ...options.extra,
  };
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/problem+json", ...options.headers } });
}

/** Retryable answers with `Retry-After: 0`, so the retry happens at once. */
export const NOW = { "retry-after": "0" };

/** A connection that dropped before any answer, as undici reports it. */
export const connectionReset = () => new TypeError("fetch failed", { cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }) });

/** A connection refused, as undici reports it: the request was never sent. */
export const connectionRefused = () => new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:3000"), { code: "ECONNREFUSED" }) });

/** A client over a fake fetch; nothing leaves the process. */
export function fakeClient(fake: FakeFetch, options: ClientOptions = {}): Mailroom {
  return new Mailroom({ apiKey: "svc_test_fake", baseUrl: "http://mailroom.test", fetch: fake.fetch, ...options });
}

/** The smallest message the test server accepts (its workspace has no default sender). */
export const aMessage = (overrides: Partial<Omit<RequestBody<"createMessage">, "template">> = {}): CreateMessageParams => ({
  from: "Acme <hello@acme.example>",
  to: "ada@example.com",
  subject: "Hi",
  html: "<p>Hi</p>",
  ...overrides,
});

/** Enough of a Message for the SDK, which does not validate responses. */
export const acceptedMessage = (id = "msg_01jd3k8m2q5v7w9x1y3z5a7b9c") => json(202, { id, object: "message", status: "queued" });

/** A named example of openapi/v1.yaml (`components.examples`): the contract's own picture of an answer. */
export function contractExample<T>(name: string): T {
  const spec = parse(readFileSync(new URL("../../openapi/v1.yaml", import.meta.url), "utf8")) as { components: { examples: Record<string, { value: unknown }> } };
  return spec.components.examples[name]?.value as T;
}

/**
 * What the one request of a call looked like: method, path and query, JSON body, key header.
 * Fails the test when the call made more than one attempt.
 */
export function theRequest(fake: FakeFetch) {
  expect(fake.requests).toHaveLength(1);
  const [request] = fake.requests;
  return {
    method: request?.method,
    target: `${request?.url.pathname}${request?.url.search}`,
    body: request?.body ? (JSON.parse(request.body) as unknown) : undefined,
    idempotencyKey: request?.headers.get("idempotency-key"),
  };
}

/** A list answer as the API sends it; a cursor means there is a next page. */
export const page = <Item>(data: Item[], next_cursor: string | null = null) => json(200, { data, has_more: next_cursor !== null, next_cursor });

/**
 * Two pages of a list: `first` without `after`, then `second` for `after=cur_2`, the way the API
 * pages. Answers any number of attempts, so a test can walk the list more than once.
 */
export const twoPages = <Item>(first: Item, second: Item) =>
  fakeFetch((request) => (new URL(request.url).searchParams.get("after") === "cur_2" ? page([second]) : page([first], "cur_2")));

/** A fresh Idempotency-Key as the SDK makes them: a random UUID. */
export const ANY_KEY = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/) as unknown as string;
