import { APIConnectionError, APITimeoutError, isRedirect, retryAfterMs } from "./errors.js";

export type Fetch = (input: Request) => Promise<Response>;

export interface RetryPolicy {
  /** Retries after the first attempt (so `maxRetries + 1` attempts at most). */
  maxRetries: number;
  /** Per-attempt timeout in milliseconds. */
  timeoutMs: number;
  /**
   * Waits between attempts, and should stop early when `signal` aborts; tests replace it to run
   * without real time passing.
   */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Where jitter comes from; tests pin it. */
  random?: () => number;
  /** The clock of the wait for a key in use (lockMsOf); tests move it with their sleep. */
  now?: () => number;
  /**
   * Whether a DELETE is sent again once an attempt's outcome is unknown (see followsUnknownOutcome).
   * Only where a repeat is harmless and its answer can be read: the server answers a repeated
   * delete 404, and a repeated revocation of an API key the key again. Default false.
   */
  repeatDeletes?: boolean;
  /**
   * Whether nothing at all is sent again once an attempt's outcome is unknown: for a call whose
   * success ends the credential it was sent with (leaving a workspace), so that a repeat could only
   * be refused 401. Default false.
   */
  endsCredential?: boolean;
}

/** Backoff: 0.5 s doubling to 8 s, minus up to 25% jitter so that clients do not retry in step. */
const INITIAL_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;
/** A `Retry-After` longer than this is not waited for in-process: the error reaches the caller. */
const MAX_RETRY_AFTER_MS = 60_000;

/**
 * The server's lock when its `409 idempotency_key_in_use` does not say (`lock_seconds`, which
 * servers before it did not send, nor does a mock): the default `IDEMPOTENCY_LOCK_SECONDS`.
 */
const DEFAULT_LOCK_MS = 60_000;
/** The longest lock a server may keep (IDEMPOTENCY_LOCK_SECONDS is at most 3600): a larger value is not believed. */
const MAX_LOCK_MS = 3_600_000;

/** Connection failures before the request was sent: nothing can have been done. */
const NOT_SENT_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN"]);

/**
 * The body fields that make a PATCH conditional: applied only while the object is at the revision
 * given. Once such a PATCH has been applied, the object is at another revision, and a repeat is
 * refused (409 `template_changed`) as if someone else had changed it.
 */
const PRECONDITION_FIELDS = ["base_revision"];

/** The answers that came after an attempt whose outcome is unknown, by the call they answer. */
const answersAfterUnknownOutcome = new WeakSet<Response>();

/**
 * Whether an earlier attempt of the call `response` answers may have done what it asked: it timed
 * out, lost its connection once sent, or got a 5xx. A 404 to a DELETE then means it deleted it.
 */
export function followsUnknownOutcome(response: Response): boolean {
  return answersAfterUnknownOutcome.has(response);
}

/**
 * Wraps `fetch` with the SDK's timeout and retry policy. Every attempt sends a clone of the same
 * Request, so a POST's `Idempotency-Key` header is the same on every retry and the server runs the
 * operation at most once however many attempts reach it. GET and PATCH do the same thing each
 * time. After an attempt whose outcome is unknown, a DELETE is sent again only under
 * `repeatDeletes`, and a conditional PATCH (isConditional) or a call under `endsCredential` never:
 * that attempt's error is the answer.
 */
export function retryingFetch(fetchImpl: Fetch, policy: RetryPolicy): Fetch {
  const sleep = policy.sleep ?? abortableSleep;
  const random = policy.random ?? Math.random;
  const now = policy.now ?? Date.now;
  // The caller's signal aborts the waits between attempts too: without this, an abort during a
  // Retry-After wait (up to 60 s) would only be noticed when the wait was over.
  const pause = async (ms: number, signal: AbortSignal) => {
    await sleep(ms, signal);
    if (signal.aborted) throw new APIConnectionError("The request was aborted.", { cause: signal.reason });
  };

  return async (request) => {
    const started = now();
    const repeatable = policy.endsCredential !== true && (request.method === "DELETE" ? policy.repeatDeletes === true : !(await isConditional(request)));
    let outcomeUnknown = false;
    // Until when a 409 idempotency_key_in_use is polled; set by the call's first one.
    let inUseUntil: number | undefined;
    // `attempt` counts the retries spent: polls of a key in use are not among them.
    for (let attempt = 0; ; attempt++) {
      const retriesLeft = policy.maxRetries - attempt;
      let response: Response;
      try {
        response = await fetchWithTimeout(fetchImpl, request.clone(), policy.timeoutMs);
      } catch (error) {
        outcomeUnknown ||= !wasNotSent(error);
        if (retriesLeft <= 0 || request.signal.aborted || (outcomeUnknown && !repeatable)) throw withAttempts(error, attempt + 1, now() - started);
        await pause(backoffMs(attempt, random), request.signal);
        continue;
      }
      if (outcomeUnknown) answersAfterUnknownOutcome.add(response);
      // The first request with this key is still running: wait for its answer at the pace the
      // server asks (Retry-After: 1), whatever retries are left, unless retries are off. The
      // first attempt may outlive the timeout (a batch fetching slow attachment URLs), so wait a
      // whole timeout more, plus one of the server's locks (the 409's lock_seconds): a crashed
      // attempt's claim frees one lock after its last renewal, and the next poll then runs the
      // request itself. Past that deadline, counted from the call's first such 409, the 409 is
      // the answer, and its error carries the key to try again with.
      const inUse = policy.maxRetries > 0 ? await keyInUse(response) : undefined;
      if (inUse) {
        inUseUntil ??= now() + policy.timeoutMs + inUse.lockMs;
        const delay = retryAfterMs(response.headers, now()) ?? backoffMs(0, random);
        if (now() >= inUseUntil || delay > MAX_RETRY_AFTER_MS) return response;
        await response.body?.cancel().catch(() => undefined);
        await pause(delay, request.signal);
        attempt--;
        continue;
      }
      if (retriesLeft <= 0 || !(await isRetryable(response))) return response;
      outcomeUnknown ||= response.status >= 500;
      if (outcomeUnknown && !repeatable) return response;
      const delay = retryAfterMs(response.headers, Date.now());
      if (delay !== undefined && delay > MAX_RETRY_AFTER_MS) return response;
      await response.body?.cancel().catch(() => undefined);
      await pause(delay ?? backoffMs(attempt, random), request.signal);
    }
  };
}

/**
 * The last attempt's error, with how many attempts there were and how long they took: after
 * three timeouts the caller has waited three times the timeout its message names.
 */
function withAttempts(error: unknown, attempts: number, elapsedMs: number): unknown {
  if (error instanceof APIConnectionError) {
    error.attempts = attempts;
    error.elapsed_ms = elapsedMs;
  }
  return error;
}

/** Resolves after `ms`, or as soon as `signal` aborts (clearing the timer, so it holds no process open). */
function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

async function fetchWithTimeout(fetchImpl: Fetch, request: Request, timeoutMs: number): Promise<Response> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), timeoutMs);
  try {
    const signal = AbortSignal.any([request.signal, timeout.signal]);
    // The fetch is given the signal (to close its connection) but not trusted to obey it: a
    // custom `fetch` option may ignore it, and undici's Request follows it through a WeakRef, so
    // a Request that only its own pending promise still holds stops following at the next
    // garbage collection. The wait for the headers therefore ends on the signal itself.
    const response = await untilAborted(fetchImpl(new Request(request, { signal })), signal, () => undefined);
    // A browser hides a redirect's status and Location (an opaque redirect, status 0).
    if (response.type === "opaqueredirect") throw new Error("the server answered with a redirect (which a browser does not show); the Mailroom API does not redirect, so check the base URL");
    // The timeout covers the body too: read it here (API answers are small JSON documents), so
    // that a server that stalls after its headers cannot hang the caller, whatever the fetch.
    const body = await untilAborted(response.arrayBuffer(), signal, () => void response.body?.cancel().catch(() => undefined));
    return new Response(response.status === 204 || response.status === 304 ? null : body, {
      status: response.status,
      statusText: response.statusText,
      headers: isRedirect(response.status) ? withAbsoluteLocation(response.headers, request.url) : response.headers,
    });
  } catch (error) {
    if (timeout.signal.aborted) throw new APITimeoutError(timeoutMs);
    if (request.signal.aborted) throw new APIConnectionError("The request was aborted.", { cause: error });
    throw new APIConnectionError(`Could not reach the Mailroom API: ${describe(error)}`, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A redirect's headers with its `Location` resolved against the request's URL (RFC 9110 §10.2.2),
 * so that the error can say where it points in full: the Response made of it has no URL to
 * resolve against.
 */
function withAbsoluteLocation(headers: Headers, requestUrl: string): Headers {
  const location = headers.get("location");
  if (location === null || !URL.canParse(location, requestUrl)) return headers;
  const absolute = new Headers(headers);
  absolute.set("location", new URL(location, requestUrl).href);
  return absolute;
}

/**
 * `work`, or a rejection as soon as `signal` aborts (after `onAbort` has released the work).
 * `work` is always followed, even when the signal had aborted before: its own rejection would
 * otherwise go unhandled, which ends a Node process and is a page error in a browser.
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal, onAbort: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      onAbort();
      reject(signal.reason);
    };
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
    if (signal.aborted) abort();
    else signal.addEventListener("abort", abort, { once: true });
  });
}

/** Whether `request` is a PATCH whose JSON body carries a precondition (PRECONDITION_FIELDS). */
async function isConditional(request: Request): Promise<boolean> {
  if (request.method !== "PATCH") return false;
  const body: unknown = await request.clone().json().catch(() => undefined);
  return typeof body === "object" && body !== null && PRECONDITION_FIELDS.some((field) => field in body);
}

/**
 * Worth another attempt: the server was unavailable or overloaded (408, 429, 5xx), or the same
 * Idempotency-Key is still running elsewhere (409 `idempotency_key_in_use`), which a later
 * attempt answers with the first request's result, or the conflict is one that passes, which the
 * server marks with Retry-After (409 `domain_changed`, a race lost to concurrent changes). The
 * server keeps no answer with Retry-After for replay (docs/idempotency.md), so a retry under the
 * same key runs again; any other 409 is the resource's state, which waiting does not change.
 */
async function isRetryable(response: Response): Promise<boolean> {
  const { status } = response;
  if (status === 408 || status === 429 || status >= 500) return true;
  if (status === 409 && response.headers.has("retry-after")) return true;
  return (await keyInUse(response)) !== undefined;
}

/**
 * For a `409 idempotency_key_in_use` (the first request with this Idempotency-Key is still
 * running), how long the server keeps the key locked after its request last renewed it; else
 * undefined.
 */
async function keyInUse(response: Response): Promise<{ lockMs: number } | undefined> {
  if (response.status !== 409) return undefined;
  const problem: unknown = await response.clone().json().catch(() => undefined);
  if (typeof problem !== "object" || problem === null) return undefined;
  const { code, lock_seconds: lockSeconds } = problem as { code?: unknown; lock_seconds?: unknown };
  if (code !== "idempotency_key_in_use") return undefined;
  const lockMs = typeof lockSeconds === "number" && lockSeconds > 0 ? Math.min(lockSeconds * 1000, MAX_LOCK_MS) : DEFAULT_LOCK_MS;
  return { lockMs };
}

export function backoffMs(attempt: number, random: () => number): number {
  const ceiling = Math.min(INITIAL_DELAY_MS * 2 ** attempt, MAX_DELAY_MS);
  return Math.round(ceiling * (1 - 0.25 * random()));
}

/** Whether fetchWithTimeout's error says the request never left (a refused connection, an unknown host). */
function wasNotSent(error: unknown): boolean {
  return NOT_SENT_CODES.has(systemErrorCode((error as { cause?: unknown })?.cause) ?? "");
}

function describe(error: unknown): string {
  return systemErrorCode(error) ?? (error instanceof Error ? error.message : String(error));
}

/** The system error's code (ECONNRESET, …) that undici's "fetch failed" has as its cause. */
function systemErrorCode(error: unknown): string | undefined {
  return (error as { cause?: { code?: string } })?.cause?.code;
}
