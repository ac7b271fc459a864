import { DEFAULT_BASE_URL, Mailroom } from "mailroom";
import type { Args } from "./command.js";
import type { Io } from "./io.js";

/** What to do without a key; `doctor` gives the same fix. */
export const NO_API_KEY_FIX = "Set MAILROOM_API_KEY (export MAILROOM_API_KEY=svc_test_…; `make bootstrap` in the server's repository prints one) or pass --api-key.";

/** What to do when nothing answers at the base URL; `doctor` gives the same fix. */
export const unreachableFix = (baseUrl: string) => `Is the server running at ${baseUrl}? Start one with \`make run\`, or set MAILROOM_BASE_URL.`;

/**
 * The key and the server a command works with, a flag winning over the environment. Everything
 * comes from `io`, never from the process behind the SDK's back.
 */
export function connectionOf(args: Args, io: Io): { apiKey: string | undefined; baseUrl: string } {
  return {
    apiKey: (args["api-key"] as string | undefined) ?? io.env.MAILROOM_API_KEY,
    baseUrl: (args["base-url"] as string | undefined) ?? io.env.MAILROOM_BASE_URL ?? DEFAULT_BASE_URL,
  };
}

/** The SDK client every command calls the API through (with the test's fetch when `io` has one). */
export function newClient(apiKey: string, baseUrl: string, io: Io): Mailroom {
  return new Mailroom({ apiKey, baseUrl, ...(io.fetch ? { fetch: io.fetch } : {}) });
}
