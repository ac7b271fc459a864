import createClient, { createQuerySerializer, defaultPathSerializer, type Client, type Middleware } from "openapi-fetch";
import { APIPromise, type WithResponse } from "./api-promise.js";
import { APIConnectionError, APIError, MailroomConfigurationError, MailroomError } from "./errors.js";
import type { paths } from "./generated/v1.js";
import { Page, PagePromise, type PageBody } from "./pagination.js";
import { followsUnknownOutcome, retryingFetch, type Fetch, type RetryPolicy } from "./transport.js";
import type { DeletedObject } from "./types.js";
import { USER_AGENT } from "./version.js";
import { Accounts } from "./resources/accounts.js";
import { ApiKeys } from "./resources/api-keys.js";
import { Domains } from "./resources/domains.js";
import { Events } from "./resources/events.js";
import { AuditEvents } from "./resources/audit-events.js";
import { RequestLogs } from "./resources/request-logs.js";
import { Inbound } from "./resources/inbound.js";
import { Messages } from "./resources/messages.js";
import { Suppressions } from "./resources/suppressions.js";
import { System } from "./resources/system.js";
import { Templates } from "./resources/templates.js";
import { UsageResource } from "./resources/usage.js";
import { MetricsResource } from "./resources/metrics.js";
import { WorkspaceResource } from "./resources/workspace.js";
import { Webhooks } from "./resources/webhooks.js";

export interface ClientOptions {
  /**
   * An API key (`svc_live_…`, `svc_test_…`) or a user access token (`mru_live_…`, `mru_test_…`;
   * the Accounts operations need one), sent as the bearer credential. Only checked for characters
   * a header cannot carry (isSendableApiKey): the server is the one judge of a credential.
   * Default: the `MAILROOM_API_KEY` environment variable.
   */
  apiKey?: string;
  /** Where the API is served. Default: `MAILROOM_BASE_URL`, else `http://localhost:3000`. */
  baseUrl?: string;
  /** Milliseconds to wait for each attempt's response: more than 0, at most 2^31 - 1. Default 60 000. */
  timeout?: number;
  /**
   * Retries after a connection error, 408, 429, 5xx or a 409 with Retry-After (`domain_changed`):
   * a whole number, 0 or more. Default 2. A 409 `idempotency_key_in_use` is waited out without
   * spending them (unless 0), for up to `timeout` plus the server's lock (the 409's
   * `lock_seconds`; 60 s when it does not say). A DELETE whose outcome is unknown is retried only
   * where a repeat is safe, and a PATCH carrying `base_revision` never (see the README).
   */
  maxRetries?: number;
  /** A `fetch` to use instead of the global one (proxies, tests, other runtimes). */
  fetch?: (input: Request) => Promise<Response>;
  /** Headers sent with every request. */
  defaultHeaders?: Record<string, string>;
}

/** Options for one call. */
export interface RequestOptions {
  /**
   * For POSTs: the `Idempotency-Key` to send. Default: an `Idempotency-Key` header in `headers`,
   * else a new random UUID per call, reused on that call's retries. Pass your own (an order id,
   * say) to make retries across processes safe too.
   */
  idempotencyKey?: string;
  /** Aborts the call (and its retries). */
  signal?: AbortSignal;
  /** Extra headers for this call. */
  headers?: Record<string, string>;
  /** Milliseconds each attempt of this call may take; default: the client's `timeout`. */
  timeout?: number;
  /** Retries for this call (0 turns them off); default: the client's `maxRetries`. */
  maxRetries?: number;
}

/** The rules of calls that a retry could harm or cannot answer (see initRepeatedDelete, initEndingCredential). */
type RetryRules = Pick<RetryPolicy, "repeatDeletes" | "endsCredential">;

export const DEFAULT_BASE_URL = "http://localhost:3000";
export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_RETRIES = 2;
/** The longest timeout setTimeout keeps: a longer one would fire at once. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** What openapi-fetch answers: data on success, the parsed error body otherwise. */
interface FetchResult<Data> {
  data?: Data;
  error?: unknown;
  response: Response;
}

/**
 * The Mailroom API client: one property per resource (a tag of the contract), one method per
 * operation. Works in Node >= 20 and in browsers.
 *
 * ```ts
 * const mr = new Mailroom(process.env.MAILROOM_API_KEY);
 * const message = await mr.messages.create({ to: "ada@example.com", subject: "Hi", html: "<p>Hi</p>" });
 * ```
 */
export class Mailroom {
  readonly messages: Messages;
  readonly events: Events;
  readonly auditEvents: AuditEvents;
  readonly requestLogs: RequestLogs;
  readonly apiKeys: ApiKeys;
  readonly workspace: WorkspaceResource;
  readonly domains: Domains;
  readonly suppressions: Suppressions;
  readonly templates: Templates;
  readonly usage: UsageResource;
  readonly metrics: MetricsResource;
  /** Replies received by the inbound SMTP server, and their attachments. */
  readonly inbound: Inbound;
  readonly accounts: Accounts;
  readonly system: System;
  /** Webhook endpoints, and the verification of their deliveries (which needs no API key). */
  readonly webhooks: Webhooks;

  readonly baseUrl: string;
  readonly timeout: number;
  readonly maxRetries: number;
  /** @internal the typed HTTP client the resources call. */
  readonly http: Client<paths>;
  /** A true private field, so that the key does not show in console.log, util.inspect or a logger. */
  readonly #options: ClientOptions & { apiKey: string };
  /** The fetch the retrying fetches wrap, and the client's timeout and retries, for calls that set their own. */
  readonly #fetch: Fetch;
  readonly #policy: RetryPolicy;

  constructor(apiKeyOrOptions?: string | ClientOptions, options: ClientOptions = {}) {
    // null is no key (typeof null is "object", so it is tested first), as undefined is.
    const given = apiKeyOrOptions !== null && typeof apiKeyOrOptions === "object" ? apiKeyOrOptions : { ...options, apiKey: apiKeyOrOptions ?? options.apiKey };
    const apiKey = given.apiKey ?? readEnv("MAILROOM_API_KEY");
    if (!apiKey) {
      throw new MailroomConfigurationError(
        "No Mailroom API key: pass one (new Mailroom(\"svc_test_…\")), or a user access token (mru_…), or set the MAILROOM_API_KEY environment variable.",
      );
    }
    // A key a header cannot carry would make every call fail with a TypeError that quotes it.
    if (!isSendableApiKey(apiKey)) {
      throw new MailroomConfigurationError(
        "The Mailroom API key has a character an HTTP header cannot carry (a space, a line break, a control or non-ASCII character): check how it was copied.",
      );
    }
    this.#options = { ...given, apiKey };
    this.baseUrl = checkedBaseUrl(given.baseUrl ?? readEnv("MAILROOM_BASE_URL") ?? DEFAULT_BASE_URL);
    this.timeout = checkedTimeout(given.timeout ?? DEFAULT_TIMEOUT_MS);
    this.maxRetries = checkedMaxRetries(given.maxRetries ?? DEFAULT_MAX_RETRIES);
    checkDefaultHeaders(given.defaultHeaders);
    const fetchImpl: Fetch = given.fetch ?? ((request) => globalThis.fetch(request));
    const policy: RetryPolicy = { maxRetries: this.maxRetries, timeoutMs: this.timeout };
    this.#fetch = fetchImpl;
    this.#policy = policy;
    this.http = createClient<paths>({
      baseUrl: this.baseUrl,
      fetch: retryingFetch(fetchImpl, policy),
      headers: { ...identity(), ...given.defaultHeaders, authorization: `Bearer ${apiKey}` },
      pathSerializer: safePathSerializer,
      querySerializer,
      // The API answers redirects only by mistake; following one would resend the key elsewhere.
      // "manual" hands the 3xx over as it came (in Node; a browser hides it: an opaque redirect),
      // so that the RedirectError made of it can name the status and the Location.
      redirect: "manual",
    });
    this.http.use(jsonSuccesses, idempotencyKeyOnErrors);
    this.messages = new Messages(this);
    this.events = new Events(this);
    this.auditEvents = new AuditEvents(this);
    this.requestLogs = new RequestLogs(this);
    this.apiKeys = new ApiKeys(this);
    this.workspace = new WorkspaceResource(this);
    this.domains = new Domains(this);
    this.suppressions = new Suppressions(this);
    this.templates = new Templates(this);
    this.usage = new UsageResource(this);
    this.metrics = new MetricsResource(this);
    this.inbound = new Inbound(this);
    this.accounts = new Accounts(this);
    this.system = new System(this);
    this.webhooks = new Webhooks(this);
  }

  /** A client like this one with some options changed: `mr.withOptions({ maxRetries: 0 })`. */
  withOptions(options: ClientOptions): Mailroom {
    return new Mailroom({ ...this.#options, baseUrl: this.baseUrl, ...options });
  }

  /** @internal the data of a successful call (and its response), or the typed error for its status. */
  unwrap<Data>(call: Promise<FetchResult<Data>>): APIPromise<Data> {
    return new APIPromise(answerOf(call));
  }

  /**
   * @internal the answer of a DELETE made with initRepeatedDelete whose success is a
   * DeletedObject: a 404 after an attempt whose outcome is unknown means that attempt deleted it,
   * so `deleted`, what the server answered it, is the answer (with that 404 as its response).
   */
  unwrapDeleted(call: Promise<FetchResult<DeletedObject>>, deleted: DeletedObject): APIPromise<DeletedObject> {
    const answer = settled(call).then(({ response }) => (response.status === 404 && followsUnknownOutcome(response) ? { data: deleted, response } : answerOf(call)));
    return new APIPromise(answer);
  }

  /**
   * @internal a list call as a page that knows how to fetch the next one: the same query, with
   * the previous page's cursor as `after`.
   */
  paginate<Query extends { after?: string }, Item>(query: Query, fetchPage: (query: Query) => Promise<FetchResult<PageBody<Item>>>): PagePromise<Item> {
    const next = (after: string) => this.unwrap(fetchPage({ ...query, after }));
    return new PagePromise(answerOf(fetchPage(query)).then(({ data, response }) => ({ data: new Page(data, next), response })));
  }

  /**
   * @internal fetch options for a call: signal and headers, plus an Idempotency-Key on POSTs:
   * `idempotencyKey`, else one given among the headers (in any case), else a new one.
   */
  init(options: RequestOptions | undefined, method: "GET" | "POST" | "PATCH" | "DELETE" = "GET") {
    return this.#init(options, method, {});
  }

  #init(options: RequestOptions | undefined, method: "GET" | "POST" | "PATCH" | "DELETE", rules: RetryRules) {
    const headers: Record<string, string> = { ...options?.headers };
    if (method === "POST") {
      let givenKey: string | undefined;
      for (const name of Object.keys(headers)) {
        if (name.toLowerCase() !== "idempotency-key") continue;
        givenKey ??= headers[name];
        delete headers[name];
      }
      headers["idempotency-key"] = options?.idempotencyKey ?? givenKey ?? newIdempotencyKey();
    }
    return { headers, ...(options?.signal ? { signal: options.signal } : {}), ...this.#fetchFor(options, rules) };
  }

  /**
   * The fetch of a call that sets its own `timeout` or `maxRetries`, or follows its own retry
   * rules (initRepeatedDelete, initEndingCredential); none, and the client's fetch serves it.
   * A bad option is refused as the constructor refuses it, before anything is sent.
   */
  #fetchFor(options: RequestOptions | undefined, rules: RetryRules): { fetch?: Fetch } {
    const timeoutMs = options?.timeout === undefined ? this.#policy.timeoutMs : checkedTimeout(options.timeout);
    const maxRetries = options?.maxRetries === undefined ? this.#policy.maxRetries : checkedMaxRetries(options.maxRetries);
    const ownPolicy = timeoutMs !== this.#policy.timeoutMs || maxRetries !== this.#policy.maxRetries;
    if (!ownPolicy && !rules.repeatDeletes && !rules.endsCredential) return {};
    return { fetch: retryingFetch(this.#fetch, { ...this.#policy, ...rules, timeoutMs, maxRetries }) };
  }

  /**
   * @internal fetch options for a DELETE that is sent again after an attempt whose outcome is
   * unknown, as other calls are. Only for an operation whose repeat does no harm and whose answer
   * is known (unwrapDeleted, or one the server answers again): other DELETEs answer the removed
   * object, which a repeat's 404 cannot give back, so an unknown outcome is the caller's to check.
   */
  initRepeatedDelete(options: RequestOptions | undefined) {
    return this.#init(options, "DELETE", { repeatDeletes: true });
  }

  /**
   * @internal fetch options for a POST whose success ends the credential it was sent with
   * (leaveWorkspace): not sent again once an attempt's outcome is unknown, since a repeat would
   * be refused 401 whether or not the first attempt did it. That attempt's error is thrown.
   */
  initEndingCredential(options: RequestOptions | undefined) {
    return this.#init(options, "POST", { endsCredential: true });
  }
}

/** The data of a successful call with its response, or the typed error for its status. */
async function answerOf<Data>(call: Promise<FetchResult<Data>>): Promise<WithResponse<Data>> {
  const { data, error, response } = await settled(call);
  if (!response.ok) throw APIError.from(response.status, error, response.headers, sentIdempotencyKeys.get(response));
  return { data: data as Data, response };
}

/**
 * The `User-Agent` to send: the SDK's, outside a browser. A page keeps the browser's own, which
 * says more, and which Chromium would not let a script replace anyway.
 */
function identity(): Record<string, string> {
  return "document" in globalThis ? {} : { "user-agent": USER_AGENT };
}

/**
 * Whether a bearer header can carry `apiKey`: one or more printable ASCII characters, no space.
 * Not whether it is a Mailroom key: the server alone judges that (prefix, body and checksum),
 * and the client also carries user access tokens and, in tests, whatever a mock accepts. The
 * constructor refuses what this refuses, and the CLI refuses keys with it too, so the two agree.
 */
export function isSendableApiKey(apiKey: string): boolean {
  return /^[\x21-\x7e]+$/.test(apiKey);
}

/**
 * The base URL without trailing slashes, once it is known to be an absolute http(s) URL: a typo
 * such as `http//localhost:3000` fails here, named, rather than as a TypeError at the first call.
 */
function checkedBaseUrl(baseUrl: string): string {
  let url: URL | undefined;
  try {
    url = new URL(baseUrl);
  } catch {
    url = undefined;
  }
  if (url?.protocol !== "http:" && url?.protocol !== "https:") {
    throw new MailroomConfigurationError(`Invalid base URL "${baseUrl}": give an absolute http or https URL, such as ${DEFAULT_BASE_URL}.`);
  }
  // fetch refuses such a URL at every call (quoting it, password and all); the API key is the credential.
  if (url.username !== "" || url.password !== "") {
    throw new MailroomConfigurationError(`Invalid base URL for ${url.host}: it has a user name or password, which is never sent; the API key is the credential.`);
  }
  return baseUrl.replace(/\/+$/, "");
}

/** Milliseconds setTimeout can wait: NaN, 0 or more than MAX_TIMEOUT_MS would time out at once, Infinity never. */
function checkedTimeout(timeout: number): number {
  if (!Number.isFinite(timeout) || timeout <= 0 || timeout > MAX_TIMEOUT_MS) {
    throw new MailroomConfigurationError(`Invalid timeout ${String(timeout)}: give the milliseconds each attempt may take, more than 0 and at most ${MAX_TIMEOUT_MS}.`);
  }
  return timeout;
}

/** A whole number, 0 or more: NaN would retry for ever (no count is ever reached). */
function checkedMaxRetries(maxRetries: number): number {
  if (!Number.isSafeInteger(maxRetries) || maxRetries < 0) {
    throw new MailroomConfigurationError(`Invalid maxRetries ${String(maxRetries)}: give a whole number, 0 or more (0 turns retries off).`);
  }
  return maxRetries;
}

/** Each default header must be one fetch can send; named here rather than at every call, its value unquoted. */
function checkDefaultHeaders(headers: Record<string, string> | undefined): void {
  for (const [name, value] of Object.entries(headers ?? {})) {
    try {
      new Headers([[name, value]]);
    } catch {
      throw new MailroomConfigurationError(
        `The default header ${JSON.stringify(name)} cannot be sent: its name or value has a character a header cannot carry (a line break, say).`,
      );
    }
  }
}

/**
 * openapi-fetch's path serializer, refusing the values it would let through as dot segments:
 * encodeURIComponent keeps "." and "..", the URL parser then resolves them (and %2e%2e too), and
 * `getSecret("..")` would GET /v1/secret. An empty value would do the same with the slashes.
 */
function safePathSerializer(pathname: string, pathParams: Record<string, unknown>): string {
  for (const [name, value] of Object.entries(pathParams)) {
    if (value === "" || value === "." || value === ".." || value === undefined || value === null) {
      throw new MailroomConfigurationError(`Invalid ${name} ${JSON.stringify(value) ?? "undefined"}: give the id (or slug) of the object.`);
    }
  }
  return defaultPathSerializer(pathname, pathParams);
}

const defaultQuerySerializer = createQuerySerializer();

/** openapi-fetch's query serializer, with a Date as ISO 8601 (RFC 3339) rather than dropped as an empty object. */
function querySerializer(query: Record<string, unknown>): string {
  const iso = (value: unknown) => (value instanceof Date ? value.toISOString() : value);
  const values = Object.fromEntries(Object.entries(query).map(([name, value]) => [name, Array.isArray(value) ? value.map(iso) : iso(value)]));
  return defaultQuerySerializer(values);
}

/**
 * The call's result, with anything but a MailroomError thrown while building the request (a
 * header value with a line break, a body JSON cannot hold) as a MailroomConfigurationError, so
 * that everything the SDK throws is a MailroomError. The message does not quote the original,
 * which may hold a header's value; it is the cause.
 */
async function settled<Data>(call: Promise<FetchResult<Data>>): Promise<FetchResult<Data>> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof MailroomError) throw error;
    throw new MailroomConfigurationError(
      `The request could not be built (${error instanceof Error ? error.name : typeof error}): check the headers, path and query values and body given; the cause has the details.`,
      { cause: error },
    );
  }
}

/** The Idempotency-Key each answer's request was sent with, for the error made of it. */
const sentIdempotencyKeys = new WeakMap<Response, string>();

/**
 * Puts the Idempotency-Key on what a POST ends with, so that the caller can try again under it:
 * remembered for the answer (see unwrap), set on an APIConnectionError (a timeout included).
 */
const idempotencyKeyOnErrors: Middleware = {
  onResponse({ request, response }) {
    const key = request.headers.get("idempotency-key");
    if (key !== null) sentIdempotencyKeys.set(response, key);
    return undefined;
  },
  onError({ request, error }) {
    const key = request.headers.get("idempotency-key");
    if (key !== null && error instanceof APIConnectionError) error.idempotency_key = key;
    return undefined;
  },
};

/**
 * openapi-fetch parses a success's body with JSON.parse and lets its SyntaxError through, and
 * answers an empty one as undefined; this turns a body that is not JSON, or none, into an
 * APIError first, so that everything the SDK throws is a MailroomError and a method resolves to
 * what its type says. (Every JSON operation of the contract has a body; a 204 has none by
 * definition and is left to resolve to undefined.)
 */
const jsonSuccesses: Middleware = {
  async onResponse({ request, response, options }) {
    if (!response.ok || options.parseAs !== "json" || response.status === 204) return undefined;
    const body = await response.clone().text();
    const key = request.headers.get("idempotency-key") ?? undefined;
    if (body === "") throw APIError.notJson(response, body, key);
    try {
      JSON.parse(body);
    } catch {
      throw APIError.notJson(response, body, key);
    }
    return undefined;
  },
};

/** A random UUID v4 (RFC 9562) from Web Crypto, which Node >= 20 and every browser have. */
export function newIdempotencyKey(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** An environment variable where there is a `process` (Node, Bun, Deno's compat), else undefined. */
function readEnv(name: string): string | undefined {
  return readEnvVar((globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env, name);
}

/**
 * `env[name]` as the client reads its settings from the environment (MAILROOM_API_KEY,
 * MAILROOM_BASE_URL): without the spaces and line breaks around it (a key pasted with its line
 * break), and undefined when that leaves nothing. For a program that reads them from an
 * environment of its own (the CLI), so that it takes the same values as the client would.
 */
export function readEnvVar(env: Record<string, string | undefined> | undefined, name: string): string | undefined {
  const value = env?.[name]?.trim();
  return value ? value : undefined;
}
