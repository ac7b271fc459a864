import { basename } from "node:path";
import type { Argv } from "yargs";
import type { CreateMessageParams, MessageContent } from "mailroom";
import type { Args } from "../command.js";
import { UsageError, optionalString, pairs, stringList } from "../command.js";
import { readFileOrStdin, readUserFile, type Io } from "../io.js";
import { parseInstant } from "../time.js";
import { TRACKING_FLAGS, trackingFlags, trackingValues } from "./tracking-flags.js";
import { hasVariableFlags, variableFlags, variableValues } from "./variable-flags.js";

/** The flags of `mailroom send` / `mailroom messages create`: one per createMessage field. */
export function messageFlags(yargs: Argv): Argv {
  return trackingFlags(variableFlags(yargs), "Turn on")
    .option("to", { type: "string", array: true, describe: "Recipient (repeatable, or comma-separated)", demandOption: "Give at least one --to." })
    .option("template", { type: "string", describe: "Send this template (slug, or slug@version) instead of --subject and a body" })
    .option("subject", { type: "string", describe: "Subject line" })
    .option("html", { type: "string", describe: "HTML body" })
    // requiresArg: takes the next word whatever it is, so that `-` (stdin) is not read as a positional.
    .option("html-file", { type: "string", requiresArg: true, describe: "Read the HTML body from a file; - reads stdin", conflicts: "html" })
    .option("text", { type: "string", describe: "Plain-text body (derived from the HTML when absent)" })
    .option("text-file", { type: "string", requiresArg: true, describe: "Read the plain-text body from a file; - reads stdin", conflicts: "text" })
    .option("from", { type: "string", describe: "Sender (default: the workspace's default sender)" })
    .option("cc", { type: "string", array: true, describe: "Cc recipient (repeatable)" })
    .option("bcc", { type: "string", array: true, describe: "Bcc recipient (repeatable)" })
    .option("reply-to", { type: "string", array: true, describe: "Reply-To address (repeatable)" })
    .option("attach", { type: "string", array: true, describe: "Attach a file (repeatable)" })
    .option("attach-url", { type: "string", array: true, describe: "Attach the file at this http(s) URL, fetched by the server before it answers (repeatable)" })
    .option("tag", { type: "string", array: true, describe: "Tag (repeatable)" })
    .option("header", { type: "string", array: true, describe: 'Extra header "Name: value" (repeatable)' })
    .option("metadata", { type: "string", array: true, describe: "Metadata key=value (repeatable)" })
    .option("schedule", { type: "string", describe: "Send later: RFC 3339 time or a delay (10m, 2h, 1d)" })
    .option("expires-at", { type: "string", describe: "Stop retrying a deferred delivery then: RFC 3339 time or a delay (10m); for mail worthless late" })
    .option("idempotency-key", { type: "string", describe: "Make retries of this send safe (default: a new key per run); applies to the send only, not to a dry run" })
    .group(["var", "var-json", "variables-file"], "Template variables (with --template):")
    .group(
      TRACKING_FLAGS.map(({ flag }) => flag),
      "Tracking (default: the sending domain's, else the workspace's):",
    );
}

/** The createMessage body the flags describe; files are read here, so a typo fails before sending. */
export async function messageBody(args: Args, io: Io): Promise<CreateMessageParams> {
  const content = await messageContent(args, io);
  const schedule = optionalString(args, "schedule");
  const expiresAt = optionalString(args, "expires-at");
  const files = await Promise.all((stringList(args, "attach") ?? []).map(async (path) => ({ filename: basename(path), content: (await readUserFile(io, path, "attach")).toString("base64") })));
  const attachments = [...files, ...(stringList(args, "attach-url") ?? []).map((url) => ({ url }))];
  const body: CreateMessageParams = {
    to: addresses(args, "to") as string[],
    ...defined("from", optionalString(args, "from")),
    ...defined("cc", addresses(args, "cc")),
    ...defined("bcc", addresses(args, "bcc")),
    ...defined("reply_to", addresses(args, "reply-to")),
    ...content,
    ...defined("headers", pairs(args, "header", ":")),
    ...defined("metadata", pairs(args, "metadata", "=")),
    ...defined("tags", stringList(args, "tag", { splitCommas: true })),
    ...defined("scheduled_at", schedule && parseInstant(schedule, "schedule")),
    ...defined("expires_at", expiresAt && parseInstant(expiresAt, "expires-at")),
    ...(attachments.length > 0 ? { attachments } : {}),
    ...trackingValues(args, "messageField"),
  };
  return body;
}

/** The content flags given, excluded by --template (which brings its own subject and body). */
const CONTENT_FLAGS = ["subject", "html", "html-file", "text", "text-file"] as const;

/**
 * The message's content: a template with its variables, or the subject and body given. The API
 * refuses both at once too; refused here, the mistake is named in terms of flags.
 */
async function messageContent(args: Args, io: Io): Promise<MessageContent> {
  const template = optionalString(args, "template");
  if (template !== undefined) {
    const given = CONTENT_FLAGS.filter((flag) => args[flag] !== undefined);
    if (given.length > 0) {
      throw new UsageError(`--template brings its own subject and body: leave out ${given.map((flag) => `--${flag}`).join(" and ")} (or drop --template).`);
    }
    const variables = await variableValues(args, io);
    return { template: { slug: template, ...defined("variables", variables) } };
  }
  if (hasVariableFlags(args)) throw new UsageError("--var, --var-json and --variables-file give a template's variables: add --template <slug>.");
  const html = await textOrFile(args, "html", io);
  const text = await textOrFile(args, "text", io);
  const subject = optionalString(args, "subject");
  if (subject !== undefined && html !== undefined) return { subject, html, ...defined("text", text) };
  if (subject !== undefined && text !== undefined) return { subject, text };
  if (html === undefined && text === undefined) throw new UsageError("Give a body (--html, --html-file, --text or --text-file), or a --template.");
  throw new UsageError("Give a --subject (the message's subject line), or a --template.");
}


/**
 * Addresses from a repeatable flag. Commas split only outside quotes and angle brackets, so
 * `--to "Doe, Jane <jane@x.com>"` stays one address.
 */
function addresses(args: Args, key: string): string[] | undefined {
  const values = stringList(args, key);
  return values?.flatMap(splitAddressList).filter(Boolean);
}

export function splitAddressList(list: string): string[] {
  const parts: string[] = [];
  let current = "";
  let quoted = false;
  let angle = 0;
  for (const char of list) {
    if (char === '"') quoted = !quoted;
    else if (char === "<" && !quoted) angle++;
    else if (char === ">" && !quoted) angle = Math.max(0, angle - 1);
    if (char === "," && !quoted && angle === 0) {
      parts.push(current.trim());
      current = "";
    } else current += char;
  }
  parts.push(current.trim());
  return parts;
}

/**
 * `--html` or the contents of `--html-file`, all of stdin for `-` (likewise text); yargs keeps the
 * two from being combined. Stdin holds one body, so only one of the files can be `-`.
 */
export async function textOrFile(args: Args, key: "html" | "text", io: Io): Promise<string | undefined> {
  const path = optionalString(args, `${key}-file`);
  if (path === undefined) return optionalString(args, key);
  if (optionalString(args, "html-file") === "-" && optionalString(args, "text-file") === "-") {
    throw new UsageError("--html-file - and --text-file - would both read stdin, which holds one body: give a path for the other.");
  }
  return (await readFileOrStdin(io, path, `${key}-file`)).content.toString("utf8");
}

function defined<Key extends string, Value>(key: Key, value: Value | undefined): { [K in Key]?: Value } {
  return (value === undefined ? {} : { [key]: value }) as { [K in Key]?: Value };
}
