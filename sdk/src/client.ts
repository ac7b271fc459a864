import createClient, { type Client, type Middleware } from "openapi-fetch";
import { APIError, MailroomConfigurationError } from "./errors.js";
import type { paths } from "./generated/v1.js";
import { Page, PagePromise, type PageBody } from "./pagination.js";
import { followsUnknownOutcome, retryingFetch, type Fetch, type RetryPolicy } from "./transport.js";
import type { DeletedObject } from "./types.js";
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
   * the Accounts operations need one), sent as the bearer credential. It is not checked here: the
   * server is the one judge of a credential. Default: the `MAILROOM_API_KEY` environment variable.
   */
  apiKey?: string;
  /** Where the API is served. Default: `MAILROOM_BASE_URL`, else `http://localhost:3000`. */
  baseUrl?: string;
  /** Milliseconds to wait for each attempt's response. Default 60 000. */
  timeout?: number;
  /**
   * Retries after a connection error, 408, 409 `idempotency_key_in_use`, 429 or 5xx. Default 2.
   * A DELETE whose outcome is unknown is retried only where a repeat is safe (see the README).
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
   * For POSTs: the `Idempotency-Key` to send. Default: a new random UUID per call, reused on that
   * call's retries. Pass your own (an order id, say) to make retries across processes safe too.
   */
  idempotencyKey?: string;
  /** Aborts the call (and its retries). */
  signal?: AbortSignal;
  /** Extra headers for this call. */
  headers?: Record<string, string>;
}

export const DEFAULT_BASE_URL = "http://localhost:3000";
export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_RETRIES = 2;

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
  private readonly options: ClientOptions & { apiKey: string };
  /** The fetch of the DELETEs that are sent again after an unknown outcome (see initRepeatedDelete). */
  private readonly repeatingFetch: Fetch;

  constructor(apiKeyOrOptions?: string | ClientOptions, options: ClientOptions = {}) {
    const given = typeof apiKeyOrOptions === "object" ? apiKeyOrOptions : { ...options, apiKey: apiKeyOrOptions ?? options.apiKey };
    const apiKey = given.apiKey ?? readEnv("MAILROOM_API_KEY");
    if (!apiKey) {
      throw new MailroomConfigurationError(
        "No Mailroom API key: pass one (new Mailroom(\"svc_test_…\")), or a user access token (mru_…), or set the MAILROOM_API_KEY environment variable.",
      );
    }
    this.options = { ...given, apiKey };
    this.baseUrl = checkedBaseUrl(given.baseUrl ?? readEnv("MAILROOM_BASE_URL") ?? DEFAULT_BASE_URL);
    this.timeout = given.timeout ?? DEFAULT_TIMEOUT_MS;
    this.maxRetries = given.maxRetries ?? DEFAULT_MAX_RETRIES;
    const fetchImpl: Fetch = given.fetch ?? ((request) => globalThis.fetch(request));
    const policy: RetryPolicy = { maxRetries: this.maxRetries, timeoutMs: this.timeout };
    this.repeatingFetch = retryingFetch(fetchImpl, { ...policy, repeatDeletes: true });
    this.http = createClient<paths>({
      baseUrl: this.baseUrl,
      fetch: retryingFetch(fetchImpl, policy),
      headers: { ...given.defaultHeaders, authorization: `Bearer ${apiKey}` },
      // The API answers redirects only by mistake; following one would resend the key elsewhere.
      redirect: "error",
    });
    this.http.use(jsonSuccesses);
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
    return new Mailroom({ ...this.options, baseUrl: this.baseUrl, ...options });
  }

  /** @internal the data of a successful call, or the typed error for its status. */
  async unwrap<Data>(call: Promise<FetchResult<Data>>): Promise<Data> {
    const { data, error, response } = await call;
    if (!response.ok) throw APIError.from(response.status, error, response.headers);
    return data as Data;
  }

  /**
   * @internal the answer of a DELETE made with initRepeatedDelete whose success is a
   * DeletedObject: a 404 after an attempt whose outcome is unknown means that attempt deleted it,
   * so `deleted`, what the server answered it, is the answer.
   */
  async unwrapDeleted(call: Promise<FetchResult<DeletedObject>>, deleted: DeletedObject): Promise<DeletedObject> {
    const { response } = await call;
    if (response.status === 404 && followsUnknownOutcome(response)) return deleted;
    return this.unwrap(call);
  }

  /**
   * @internal a list call as a page that knows how to fetch the next one: the same query, with
   * the previous page's cursor as `after`.
   */
  paginate<Query extends { after?: string }, Item>(query: Query, fetchPage: (query: Query) => Promise<FetchResult<PageBody<Item>>>): PagePromise<Item> {
    const next = (after: string) => this.unwrap(fetchPage({ ...query, after }));
    return new PagePromise(this.unwrap(fetchPage(query)).then((body) => new Page(body, next)));
  }

  /** @internal fetch options for a call: signal and headers, plus an Idempotency-Key on POSTs. */
  init(options: RequestOptions | undefined, method: "GET" | "POST" | "PATCH" | "DELETE" = "GET") {
    const headers: Record<string, string> = { ...options?.headers };
    if (method === "POST") headers["idempotency-key"] = options?.idempotencyKey ?? newIdempotencyKey();
    return { headers, ...(options?.signal ? { signal: options.signal } : {}) };
  }

  /**
   * @internal fetch options for a DELETE that is sent again after an attempt whose outcome is
   * unknown, as other calls are. Only for an operation whose repeat does no harm and whose answer
   * is known (unwrapDeleted, or one the server answers again): other DELETEs answer the removed
   * object, which a repeat's 404 cannot give back, so an unknown outcome is the caller's to check.
   */
  initRepeatedDelete(options: RequestOptions | undefined) {
    return { ...this.init(options, "DELETE"), fetch: this.repeatingFetch };
  }
}

/**
 * The base URL without trailing slashes, once it is known to be an absolute http(s) URL: a typo
 * such as `http//localhost:3000` fails here, named, rather than as a TypeError at the first call.
 */
function checkedBaseUrl(baseUrl: string): string {
  let protocol: string | undefined;
  try {
    protocol = new URL(baseUrl).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol !== "http:" && protocol !== "https:") {
    throw new MailroomConfigurationError(`Invalid base URL "${baseUrl}": give an absolute http or https URL, such as ${DEFAULT_BASE_URL}.`);
  }
  return baseUrl.replace(/\/+$/, "");
}

/**
 * openapi-fetch parses a success's body with JSON.parse and lets its SyntaxError through; this
 * turns a body that is not JSON into an APIError first, so that everything the SDK throws is a
 * MailroomError.
 */
const jsonSuccesses: Middleware = {
  async onResponse({ response, options }) {
    if (!response.ok || options.parseAs !== "json") return undefined;
    const body = await response.clone().text();
    if (body === "") return undefined;
    try {
      JSON.parse(body);
    } catch {
      throw APIError.notJson(response, body);
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
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const value = env?.[name]?.trim();
  return value ? value : undefined;
}
