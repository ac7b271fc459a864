import type { Argv } from "yargs";
import type { Args } from "../command.js";

/**
 * The four tracking switches, as `mailroom send` and `mailroom workspace update` spell them:
 * `--track-opens` turns one on, `--no-track-opens` off (yargs' negation), absent leaves it to
 * the defaults. One table, so that both commands name them alike: `field` is the workspace's
 * `tracking` key, `messageField` the createMessage field.
 */
export const TRACKING_FLAGS = [
  { flag: "track-opens", field: "opens", messageField: "track_opens", describe: "open tracking (a 1x1 image at the end of the HTML)" },
  { flag: "track-clicks", field: "clicks", messageField: "track_clicks", describe: "click tracking (http(s) links rewritten to signed redirects)" },
  { flag: "track-replies", field: "replies", messageField: "track_replies", describe: "reply threading (a reply+… Reply-To address)" },
  { flag: "unsubscribe", field: "unsubscribe", messageField: "unsubscribe", describe: "one-click unsubscribe headers (RFC 8058)" },
] as const;

type Flag = (typeof TRACKING_FLAGS)[number];

/** Adds the four switches; `prefix` begins each description ("Turn on", "Default:"). */
export function trackingFlags(yargs: Argv, prefix: string): Argv {
  return TRACKING_FLAGS.reduce((chain, { flag, describe }) => chain.option(flag, { type: "boolean", describe: `${prefix} ${describe}; --no-${flag} for off` }), yargs);
}

/**
 * The switches given, named by `key` (`{ opens: true, unsubscribe: false }` for "field");
 * those absent left out.
 */
export function trackingValues<Key extends "field" | "messageField">(args: Args, key: Key): Partial<Record<Flag[Key], boolean>> {
  const values: Partial<Record<Flag[Key], boolean>> = {};
  for (const flag of TRACKING_FLAGS) {
    const value = args[flag.flag];
    if (typeof value === "boolean") values[flag[key]] = value;
  }
  return values;
}
