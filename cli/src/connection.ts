import { APITimeoutError, DEFAULT_BASE_URL, isSendableApiKey, Mailroom, MailroomConfigurationError, readEnvVar, USER_AGENT, type APIConnectionError } from "mailroom";
import type { Args } from "./command.js";
import type { Io } from "./io.js";
import { VERSION } from "./version.js";

/** What to do without a key; `doctor` gives the same fix. */
export const NO_API_KEY_FIX = "Set MAILROOM_API_KEY (export MAILROOM_API_KEY=svc_test_…; `make bootstrap` in the server's repository prints one) or pass --api-key.";

/** What to do when nothing answers at the base URL; `doctor` gives the same fix. */
export const unreachableFix = (baseUrl: string) => `Is the server running at ${baseUrl}? Start one with \`make run\`, or set MAILROOM_BASE_URL.`;

/**
 * What to do when no answer came: a timeout is a server that is slow (or a network that drops the
 * request), not one to start; anything else, unreachableFix. `doctor` gives the same fix.
 */
export function noAnswerFix(error: APIConnectionError, baseUrl: string): string {
  if (!(error instanceof APITimeoutError)) return unreachableFix(baseUrl);
  return `No answer came from ${baseUrl} in time: the server may be overloaded or slow to answer this request, or the network between may be dropping it. Try again later, or check the server's logs.`;
}

/**
 * The key and the server a command works with, a flag winning over the environment. Everything
 * comes from `io`, never from the process behind the SDK's back; the environment is read as the
 * SDK reads it (readEnvVar: trimmed, empty as unset), a flag taken as given, as the SDK takes an
 * `apiKey` or `baseUrl` passed to it.
 */
export function connectionOf(args: Args, io: Io): { apiKey: string | undefined; baseUrl: string } {
  return {
    apiKey: (args["api-key"] as string | undefined) ?? readEnvVar(io.env, "MAILROOM_API_KEY"),
    baseUrl: (args["base-url"] as string | undefined) ?? readEnvVar(io.env, "MAILROOM_BASE_URL") ?? DEFAULT_BASE_URL,
  };
}

/**
 * What is wrong with a key that cannot be sent, or undefined. A key is printable ASCII without
 * spaces (the SDK's isSendableApiKey, which its constructor applies: one predicate, so that the
 * CLI and the SDK refuse the same keys); anything else (a line break a copy and paste added, say)
 * is refused here, as a usage error, rather than as the SDK's configuration error. Says where the
 * key came from, never the key.
 */
export function keyProblem(apiKey: string, source: string): string | undefined {
  if (isSendableApiKey(apiKey)) return undefined;
  return `The API key in ${source} holds a character no key has (a line break, a space, or one outside printable ASCII): copy the key again, whole and alone.`;
}

/** Where the key in use comes from: a flag wins over the environment. */
export const keySource = (args: Args) => (args["api-key"] === undefined ? "MAILROOM_API_KEY" : "--api-key");

/**
 * What is wrong with a base URL that ends in /v1 (`http://localhost:3000/v1`), or undefined. Every
 * path the SDK requests already starts with /v1, so such a URL could only ever be answered
 * `404 No route GET /v1/v1/messages`; it is refused before any request instead. Anything that is
 * not a URL is left to the SDK, which refuses it in its own words.
 */
export function baseUrlProblem(baseUrl: string): string | undefined {
  if (!URL.canParse(baseUrl)) return undefined;
  const url = new URL(baseUrl);
  const path = url.pathname.replace(/\/+$/, "");
  if (!path.endsWith("/v1")) return undefined;
  url.pathname = path.slice(0, -"/v1".length) || "/";
  return `Invalid base URL "${baseUrl}": every request's path already starts with /v1, so drop the /v1: give ${url.href.replace(/\/+$/, "")}.`;
}

/**
 * The SDK client every command calls the API through (with the test's fetch when `io` has one).
 * A base URL ending in /v1 is refused as the SDK refuses one that is not a URL: a configuration
 * error, exit 2 (or the failed check of `doctor`).
 */
export function newClient(apiKey: string, baseUrl: string, io: Io): Mailroom {
  const problem = baseUrlProblem(baseUrl);
  if (problem) throw new MailroomConfigurationError(problem);
  return new Mailroom({ apiKey, baseUrl, defaultHeaders: { "user-agent": `mailroom-cli/${VERSION} ${USER_AGENT}` }, ...(io.fetch ? { fetch: io.fetch } : {}) });
}
