/** The SDK's version (kept equal to package.json's: a test checks). */
export const VERSION = "0.1.0";

/**
 * How the SDK names itself in `User-Agent`, so that request logs tell its calls from curl's or a
 * browser's. A program built on the SDK puts its own name first (`mailroom-cli/0.1.0 mailroom-node/0.1.0`).
 */
export const USER_AGENT = `mailroom-node/${VERSION}`;
