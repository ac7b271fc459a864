import type { ApiKey, ListRequestLogsParams, RequestLog, Role } from "mailroom";
import type { KeyNames, MemberEmails } from "./actors.js";

/** The least role that may read the log: listRequestLogs' and getRequestLog's x-mailroom-role. */
export const REQUEST_LOG_ROLE: Role = "developer";

export const REQUEST_LOG_PATH = "/developers/request-log";

/** One request's page, by its `Request-Id` (an error's `request_id`). */
export function requestLogHref(requestId: string): string {
  return `${REQUEST_LOG_PATH}/${encodeURIComponent(requestId)}`;
}

/** The log's own pages, whose reads the log does not record (so their request ids lead nowhere). */
export function isRequestLogPath(location: string): boolean {
  return location === REQUEST_LOG_PATH || location.startsWith(`${REQUEST_LOG_PATH}/`);
}

/**
 * The list's filters, by their names in the query string: `status` a class (`4xx`), `code` an
 * exact status typed in (`422`), both sent as listRequestLogs' `status`; the rest as the API names them.
 */
export const FILTER_NAMES = ["status", "code", "method", "operation", "credential_id"] as const;

/** The Status select's classes (the API takes `3xx` too, which `/v1` never answers). */
export const STATUS_CLASS_OPTIONS = [
  { value: "2xx", label: "Succeeded (2xx)" },
  { value: "4xx", label: "Client errors (4xx)" },
  { value: "5xx", label: "Server errors (5xx)" },
] as const;

type Method = NonNullable<ListRequestLogsParams["method"]>;
export const METHODS = ["GET", "POST", "PATCH", "PUT", "DELETE"] as const satisfies readonly Method[];

// Fails to compile when the contract's `method` gains a value this list lacks.
type MissingMethod = Exclude<Method, (typeof METHODS)[number]>;
export const _everyMethodListed: [MissingMethod] extends [never] ? true : never = true;

const EXACT_STATUS = /^[1-5][0-9]{2}$/;
const STATUS_CLASS = /^[1-5]xx$/;
const OPERATION = /^[a-zA-Z]{1,100}$/;

function isMethod(value: string | null): value is Method {
  return (METHODS as readonly (string | null)[]).includes(value);
}

/**
 * listRequestLogs' `status` from the two fields: an exact code typed in wins over the class
 * picked; neither, or anything the API would refuse, filters nothing.
 */
export function statusQuery(statusClass: string | null, code: string | null): string | undefined {
  const exact = code?.trim() ?? "";
  if (EXACT_STATUS.test(exact)) return exact;
  // An exact code in `status` too: a link may carry the API's own parameter.
  if (statusClass !== null && (STATUS_CLASS.test(statusClass) || EXACT_STATUS.test(statusClass))) return statusClass;
  return undefined;
}

/** The page's query string as listRequestLogs' filters, leaving out what the API would refuse. */
export function toRequestLogQuery(params: URLSearchParams): ListRequestLogsParams {
  const status = statusQuery(params.get("status"), params.get("code"));
  const method = params.get("method");
  const operation = params.get("operation")?.trim() ?? "";
  const credential = params.get("credential_id")?.trim() ?? "";
  return {
    ...(status ? { status } : {}),
    ...(isMethod(method) ? { method } : {}),
    // Any operationId, not only today's; never one the API would refuse.
    ...(OPERATION.test(operation) ? { operation } : {}),
    ...(credential.length > 0 && credential.length <= 100 ? { credential_id: credential } : {}),
  };
}

export type StatusClass = "1xx" | "2xx" | "3xx" | "4xx" | "5xx";

/** 422 -> "4xx". */
export function statusClassOf(status: number): StatusClass {
  const hundreds = Math.min(5, Math.max(1, Math.floor(status / 100)));
  return `${hundreds}xx` as StatusClass;
}

/** The status badge's classes, coloured by its class (styles.css): success, redirect, client error, server error. */
export function statusBadgeClass(status: number): string {
  return `badge badge--http badge--http-${statusClassOf(status)}`;
}

const shortDuration = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });
const longDuration = new Intl.NumberFormat(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** The server's time for a request: "3.2 ms", "48 ms", "1.25 s". */
export function formatDuration(ms: number): string {
  if (ms >= 1000) return `${longDuration.format(ms / 1000)} s`;
  return `${shortDuration.format(ms < 10 ? ms : Math.round(ms))} ms`;
}

export type { KeyNames } from "./actors.js";

export interface CredentialView {
  /** "API key" or "Member". */
  kind: string;
  /** A key's name when known, else its id; a member's address when known, else "member" (their user id is in `id`). */
  label: string;
  /** The label is the id itself (set in monospace). */
  isId: boolean;
  id: string;
  /** Where the credential can be seen: the API keys page for a key. */
  href: string | null;
}

/** Who made a request, as the log shows it: keys named by `keyNames`, members by `emails` where they are known. */
export function describeCredential(credential: RequestLog["credential"], keyNames: KeyNames, emails: MemberEmails = new Map()): CredentialView {
  if (credential.type === "user") return { kind: "Member", label: emails.get(credential.id) ?? "member", isId: false, id: credential.id, href: null };
  const name = keyNames.get(credential.id);
  return { kind: "API key", label: name ?? credential.id, isId: name === undefined, id: credential.id, href: "/developers/api-keys" };
}

/**
 * The Credential select: the environment's keys by name (a revoked one says so), and the id in
 * the query string when it is no key of the list (a member's user id, from a request's page: with
 * their address when `emails` has it).
 */
export function credentialOptions(
  keys: ReadonlyArray<Pick<ApiKey, "id" | "name" | "revoked_at">>,
  current: string | null,
  emails: MemberEmails = new Map(),
): Array<{ value: string; label: string }> {
  const options = keys.map((key) => ({ value: key.id, label: key.revoked_at ? `${key.name} (revoked)` : key.name }));
  if (current && !keys.some((key) => key.id === current)) {
    const email = emails.get(current);
    options.push({ value: current, label: current.startsWith("usr_") ? `Member ${email === undefined ? current : `${email} (${current})`}` : current });
  }
  return options;
}

/** A problem's field errors as "pointer: message" lines (the location when the pointer is the whole part). */
export function fieldErrors(problem: RequestLog["error"]): Array<{ at: string; message: string }> {
  return (problem?.errors ?? []).map((error) => ({ at: error.pointer || error.location, message: error.message }));
}
