import { unsendableCredentials } from "./url-credentials.js";

/**
 * Secrets that travel inside other values (a password in a connection URL or a webhook URL, an
 * invitation's secret in a request's URL) and the one way each is hidden before a log line,
 * stderr or a reader not allowed the secret (a viewer, webhooks.ts) shows it.
 */

/** What stands in for a secret in the logs (pino's censor too, app.ts). */
export const REDACTED = "[redacted]";

/**
 * What is wrong with a URL that carries a password (DATABASE_URL, SMTP_RELAY_URL), worded
 * without quoting any of it; null when it parses as written. A #, / or ? left raw in a password
 * ends the credentials early: the URL then fails to parse, or parses as another host and port.
 */
export function credentialUrlProblem(value: string): string | null {
  const url = URL.parse(value);
  if (url === null) return "is not a valid URL (a password with #, / or ? must be percent-encoded)";
  if (url.hash !== "") return "has a # that ends it early (a password with # must be percent-encoded as %23)";
  if (`${url.pathname}${url.search}`.includes("@")) return "has an @ after its host (a password with / or ? must be percent-encoded as %2F or %3F)";
  if (url.hostname === "") return "has no host";
  // Drivers decode the credentials with decodeURIComponent, which throws on a stray % and on an escape that is not UTF-8.
  if (unsendableCredentials(url) !== null) return "has a % that starts no escape, or an escape that is not UTF-8 (a user name or password with % must be percent-encoded as %25, and é as %C3%A9)";
  return null;
}

/**
 * A URL fit for the logs: user name and password masked. Parsed, not pattern-matched: a password
 * may hold an @ (the last one ends the credentials). A URL that does not parse is not shown.
 */
export function maskUrlCredentials(value: string): string {
  const url = URL.parse(value);
  if (url === null) return "[a URL that does not parse]";
  // Unchanged, not re-serialised: a sqlite: path stays exactly as given.
  if (url.username === "" && url.password === "") return value;
  if (url.username !== "") url.username = "***";
  if (url.password !== "") url.password = "***";
  return url.href;
}

/**
 * The error as a top-level printer may show it: Node's URL parser (and so every driver that parses
 * a connection URL) keeps the whole URL, password included, in the error's `input`. Removed in
 * place, along the cause chain: the error is printed next, and the process exits.
 */
export function withoutInput(error: unknown): unknown {
  for (let current = error; current !== null && typeof current === "object"; current = (current as { cause?: unknown }).cause) {
    delete (current as { input?: unknown }).input;
  }
  return error;
}

/**
 * A path that names an invitation by its secret: the dashboard's page (the link sent to the
 * invitee, members.ts) and its preview (auth-routes.ts); not POST /auth/invitations/accept.
 */
const INVITATION_PATH = /^(\/(?:auth\/)?invitations\/)(?!accept(?:[/?#]|$))[^/?#]+/;

/**
 * A request URL fit for the logs: an invitation's secret masked, in the path and in a query value
 * holding such a path (the sign-in page's ?next= returns to the invitation).
 */
export function redactRequestUrl(url: string): string {
  const query = url.indexOf("?");
  const path = query === -1 ? url : url.slice(0, query);
  const masked = path.replace(INVITATION_PATH, `$1${REDACTED}`);
  if (query === -1) return masked;
  return `${masked}?${url.slice(query + 1).split("&").map(redactParameter).join("&")}`;
}

function redactParameter(parameter: string): string {
  const equals = parameter.indexOf("=");
  if (equals === -1) return parameter;
  const value = decoded(parameter.slice(equals + 1)) ?? parameter.slice(equals + 1);
  if (!INVITATION_PATH.test(value)) return parameter;
  return `${parameter.slice(0, equals + 1)}${encodeURIComponent(value.replace(INVITATION_PATH, `$1${REDACTED}`))}`;
}

function decoded(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}
