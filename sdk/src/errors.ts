import type { components } from "./generated/v1.js";

/** An RFC 9457 problem document as the API sends it. */
export type Problem = components["schemas"]["Problem"];
/** One failing field of a `validation_failed` problem. */
export type FieldError = NonNullable<Problem["errors"]>[number];

/** Everything the SDK throws is a MailroomError, so one `instanceof` catches it all. */
export class MailroomError extends Error {
  override name = "MailroomError";
}

/**
 * The API answered with an error status, or with a success whose body is not JSON (see
 * `notJson`). The fields are the problem document's, unchanged (snake_case as on the wire);
 * `problem` keeps the whole document, extensions included.
 */
export class APIError extends MailroomError {
  override name = "APIError";
  readonly status: number;
  /** Stable machine-readable code, e.g. `validation_failed` (see docs/errors.md). */
  readonly code: string;
  readonly title: string;
  readonly detail: string | undefined;
  /** For `validation_failed`: one entry per failing field, with its JSON pointer. */
  readonly errors: FieldError[];
  /** The request's id: quote it when asking for help. */
  readonly request_id: string | undefined;
  readonly headers: Headers;
  /**
   * The problem document, extensions included. It may lack fields the contract's `Problem` has
   * when it comes from something in front of the API (a gateway's `{ title, status, detail }`).
   */
  readonly problem: Problem | undefined;
  /**
   * The `Idempotency-Key` the call sent (a POST's; undefined for other methods). After
   * `409 idempotency_key_in_use`, or an error whose outcome is unknown, call again with
   * `{ idempotencyKey: error.idempotency_key }` to get the first request's answer rather than
   * run it a second time.
   */
  idempotency_key: string | undefined;

  constructor(status: number, problem: Problem | undefined, headers: Headers, fallbackDetail?: string, idempotencyKey?: string) {
    // Only fields of the problem's types are taken: a document from a gateway may have others.
    const code = stringField(problem, "code") ?? `http_${status}`;
    const detail = stringField(problem, "detail") ?? fallbackDetail;
    super(`${status} ${code}${detail ? `: ${detail}` : ""}`);
    this.status = status;
    this.code = code;
    this.title = stringField(problem, "title") ?? `HTTP ${status}`;
    this.detail = detail;
    this.errors = Array.isArray(problem?.errors) ? problem.errors : [];
    this.request_id = stringField(problem, "request_id") ?? headers.get("request-id") ?? undefined;
    this.headers = headers;
    this.problem = problem;
    this.idempotency_key = idempotencyKey;
  }

  /** The subclass for a status, so callers can catch `NotFoundError` rather than compare numbers. */
  static from(status: number, body: unknown, headers: Headers, idempotencyKey?: string): APIError {
    // A redirect's body is a page for browsers: what matters is where it points.
    if (isRedirect(status)) return new RedirectError(status, undefined, headers, RedirectError.detailFor(status, headers), idempotencyKey);
    const problem = isProblem(body) ? body : undefined;
    const fallback = typeof body === "string" && body.length > 0 ? body.slice(0, 500) : undefined;
    const ErrorClass = errorClassFor(status);
    return new ErrorClass(status, problem, headers, fallback, idempotencyKey);
  }

  /**
   * A success whose body is not the JSON the contract promises: a proxy's or a captive portal's
   * page, an answer cut off on the way, or none at all. Names what arrived, so that the cause can
   * be found.
   */
  static notJson(response: Response, body: string, idempotencyKey?: string): APIError {
    const type = response.headers.get("content-type") ?? "no content-type";
    const what = body === "" ? `the body is empty (${type})` : `the body is not JSON (${type}): ${body.slice(0, 200)}`;
    return new APIError(response.status, undefined, response.headers, what, idempotencyKey);
  }
}

export class BadRequestError extends APIError {
  override name = "BadRequestError";
}
export class AuthenticationError extends APIError {
  override name = "AuthenticationError";
}
export class PermissionDeniedError extends APIError {
  override name = "PermissionDeniedError";
}
export class NotFoundError extends APIError {
  override name = "NotFoundError";
}
export class ConflictError extends APIError {
  override name = "ConflictError";
}
/** It existed, but its content was removed for good (`content_removed`, the workspace's content retention). */
export class GoneError extends APIError {
  override name = "GoneError";
}
export class UnprocessableEntityError extends APIError {
  override name = "UnprocessableEntityError";
}
export class RateLimitError extends APIError {
  override name = "RateLimitError";
  /** Seconds the server asked us to wait (`Retry-After`), when it said. */
  get retry_after(): number | undefined {
    const ms = retryAfterMs(this.headers, Date.now());
    return ms === undefined ? undefined : Math.ceil(ms / 1000);
  }
}
export class InternalServerError extends APIError {
  override name = "InternalServerError";
}

/**
 * A 3xx. The API never redirects, so the base URL points somewhere else: http for an https
 * server, a proxy, an old address. Not followed (that would send the API key wherever the
 * Location says), and not retried (a redirect answers the same every time); the request was not
 * carried out by the API.
 */
export class RedirectError extends APIError {
  override name = "RedirectError";
  /** Where the server redirected to (its `Location`, made absolute), when it said. */
  get location(): string | undefined {
    return this.headers.get("location") ?? undefined;
  }

  /** @internal the error's detail: the status, where it points, and the fix. */
  static detailFor(status: number, headers: Headers): string {
    const location = headers.get("location");
    const where = location === null ? "without saying where to (no Location)" : `redirecting to ${location}`;
    return `the server answered ${status}, ${where}: the Mailroom API does not redirect, so set the base URL to where that points.`;
  }
}

/** Whether `status` is a redirect (3xx), which the SDK neither follows nor retries. */
export function isRedirect(status: number): boolean {
  return status >= 300 && status < 400;
}

/** No HTTP answer arrived: DNS, refused or reset connection, TLS, or an aborted request. */
export class APIConnectionError extends MailroomError {
  override name = "APIConnectionError";
  /**
   * The `Idempotency-Key` the call sent (a POST's; undefined for other methods). The request may
   * have run: call again with `{ idempotencyKey: error.idempotency_key }` so that it runs at most once.
   */
  idempotency_key: string | undefined = undefined;
  /** How many attempts the call made, retries included; this error is the last one's. */
  attempts = 1;
  /** Milliseconds from the first attempt to this error, waits between attempts included. */
  elapsed_ms: number | undefined = undefined;
  constructor(message = "Could not reach the Mailroom API.", options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** No answer within the `timeout` option. */
export class APITimeoutError extends APIConnectionError {
  override name = "APITimeoutError";
  constructor(timeoutMs: number) {
    super(`The request timed out after ${timeoutMs} ms.`);
  }
}

/** The SDK was misused before any request: no API key, say. Names the fix. */
export class MailroomConfigurationError extends MailroomError {
  override name = "MailroomConfigurationError";
}

function errorClassFor(status: number): typeof APIError {
  switch (status) {
    case 400:
    case 413:
    case 415:
      return BadRequestError;
    case 401:
      return AuthenticationError;
    case 403:
      return PermissionDeniedError;
    case 404:
      return NotFoundError;
    case 409:
      return ConflictError;
    case 410:
      return GoneError;
    case 422:
      return UnprocessableEntityError;
    case 429:
      return RateLimitError;
    default:
      return status >= 500 ? InternalServerError : APIError;
  }
}

/**
 * Any JSON object with a numeric `status` is taken for a problem document (RFC 9457 makes every
 * member optional): the API's always have a `code`, but a gateway's `{ title, status, detail }`
 * should keep its title and detail too, with the code `http_<status>`.
 */
function isProblem(body: unknown): body is Problem {
  return typeof body === "object" && body !== null && !Array.isArray(body) && typeof (body as { status?: unknown }).status === "number";
}

function stringField(problem: Problem | undefined, name: "code" | "title" | "detail" | "request_id"): string | undefined {
  const value: unknown = problem?.[name];
  return typeof value === "string" ? value : undefined;
}

/**
 * `Retry-After` in milliseconds from now (RFC 9110 §10.2.3: delay-seconds or an HTTP-date), or
 * undefined when absent or unparseable.
 */
export function retryAfterMs(headers: Headers, now: number): number | undefined {
  const value = headers.get("retry-after");
  if (value === null || value.trim() === "") return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  // Anything else must be an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"); Date.parse alone
  // would read "1.5" as a date in 2001 and wait for nothing.
  if (!/GMT$/.test(value.trim())) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
