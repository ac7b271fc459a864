import type { Argv } from "yargs";
import type { Mailroom, OperationId } from "mailroom";
import type { Io } from "./io.js";
import type { Output } from "./output.js";

/** Exit codes: 0 success, 1 the API answered with an error (or could not be reached, or a `doctor` check failed), 2 usage. */
export const EXIT = { ok: 0, apiError: 1, usage: 2 } as const;

/** Parsed flags and positionals, as yargs hands them over (kebab-case keys included). */
export type Args = Record<string, unknown>;

export interface Context {
  /** The API client, created on first use so that `--help` and usage errors need no key. */
  client(): Mailroom;
  output: Output;
  io: Io;
  /**
   * Runs `call` with `key` as the Idempotency-Key that `--idempotency-key` should be given to run
   * the command again, in place of the ones its requests are sent with, or none (undefined) where
   * a rerun takes none: what the CLI names when the call fails with its outcome unknown, or is
   * stopped before its answer came. For commands whose requests are sent under keys of their own
   * making, or whose rerun needs no key.
   */
  rerunWith<T>(key: string | undefined, call: () => Promise<T>): Promise<T>;
}

/**
 * One `mailroom <noun> <verb>` command: the CLI face of one contract operation (STYLE: one name,
 * four doors). `operationId` ties it to the contract; a test fails when an operation has no command.
 */
export interface Command {
  /** yargs command syntax, e.g. `get <message_id>`. */
  command: string;
  aliases?: string[];
  describe: string;
  /** The operation this command calls; undefined for client-side helpers such as `events tail`. */
  operationId: OperationId | undefined;
  examples: Array<[command: string, description: string]>;
  builder?: (yargs: Argv) => Argv;
  /**
   * The text flags whose `--no-` form the command reads, as yargs gives it (false): to clear a
   * setting (`--no-layout` is `layout: null`) or as the flag's off value (`--no-enabled`). yargs
   * takes `--no-<flag>` for any flag, so without this a text flag would send the text "false";
   * every other text flag given so is refused before the command runs (run.ts).
   */
  noForms?: readonly string[];
  /**
   * Does the work and prints its result; errors are thrown and reported in one place. Answers an
   * exit code only when a result that printed fine still means failure (`doctor` with a failed
   * check); otherwise the exit code is 0.
   */
  run(context: Context, args: Args): Promise<number | void>;
}

/** A command's verb, the first word of its syntax: `get` for `get <message_id>`. */
export const verbOf = (command: Command) => command.command.split(" ")[0] ?? command.command;

/** The words a command requires after its verb, as its syntax names them: `message_id` for `get <message_id>`. */
export const requiredWordsOf = (command: Command) => [...command.command.matchAll(/<([^>]+)>/g)].map(([, name]) => name as string);

/** A command group: the kebab-case form of a contract tag (`ApiKeys` -> `api-keys`). */
export interface Noun {
  name: string;
  describe: string;
  commands: Command[];
}

/** A mistake in how the CLI was called: exit code 2, with a message that names the fix. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** A question the person at the terminal answered no to (confirm.ts): exit code 1, nothing sent. */
export class DeclinedError extends Error {
  override name = "DeclinedError";
}

/**
 * A whole-number flag's value: decimal digits only, exactly as written, from `min` (to `max`).
 * The one parser for every such flag: Number() would take "0x10", "5e1", " 5" and "" (as 0), and
 * yargs' own number type turns "abc" into NaN, so a refusal could not even say what was given.
 * `what` is how the refusal names the flag (`--limit`, `<attachment_index>`).
 */
export function wholeNumber(value: unknown, what: string, { min, max, unit }: { min: number; max?: number; unit?: string }): number {
  const text = String(value);
  const number = /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!(number >= min && (max === undefined || number <= max))) {
    const range = max === undefined ? `, ${min} or more` : ` from ${min} to ${max}`;
    throw new UsageError(`${what} takes a whole number${unit ? ` of ${unit}` : ""}${range}; got "${text}".`);
  }
  return number;
}

/**
 * yargs options for a whole-number flag with a default. A string, so that wholeNumber() judges
 * what was typed (yargs' number type would make "abc" NaN), and shown in --help as the number it
 * is (`[default: 20]`), not as the string yargs is given (`[default: "20"]`).
 */
export const wholeNumberDefault = (value: number) => ({ type: "string", default: String(value), defaultDescription: String(value) }) as const;

/** `--overlap-seconds` of a secret's rotation (api-keys, webhooks): how long the old one keeps working. */
export const overlapSecondsOf = (args: Args) => (args["overlap-seconds"] === undefined ? undefined : wholeNumber(args["overlap-seconds"], "--overlap-seconds", { min: 0, unit: "seconds" }));

/**
 * The call succeeded but some of what it asked for was refused (a batch with refused messages):
 * exit code 1, once the command has printed its result. `details` joins the message in JSON mode.
 */
export class RefusedError extends Error {
  override name = "RefusedError";
  constructor(
    message: string,
    readonly details: Record<string, unknown>,
  ) {
    super(message);
  }
}

export function optionalString(args: Args, key: string): string | undefined {
  const value = args[key];
  return value === undefined || value === null ? undefined : String(value);
}

export function requiredString(args: Args, key: string): string {
  const value = optionalString(args, key);
  if (value === undefined) throw new UsageError(`Missing --${key}.`);
  return value;
}

/** A repeatable flag (`--tag a --tag b`, or `--tag a,b` where commas are allowed). */
export function stringList(args: Args, key: string, { splitCommas = false } = {}): string[] | undefined {
  const value = args[key];
  if (value === undefined) return undefined;
  const values = (Array.isArray(value) ? value : [value]).map(String);
  return splitCommas ? values.flatMap((item) => item.split(",").map((part) => part.trim())).filter(Boolean) : values;
}

/** `none`, or a flag's `--no-` form (which yargs gives as false; see Command.noForms): how a flag asks for null, lifting a setting. */
export function isNone(value: unknown): boolean {
  return value === false || String(value).trim().toLowerCase() === "none";
}

/**
 * A comma-separated (or repeated) list flag that may instead be `none` to lift the limit it sets
 * (null); undefined when absent. An empty list is a usage error rather than [], which the API
 * refuses: no limit is null.
 */
export function listOrNone(args: Args, key: string): string[] | null | undefined {
  if (args[key] === undefined) return undefined;
  if (isNone(args[key])) return null;
  const values = stringList(args, key, { splitCommas: true }) ?? [];
  if (values.length === 0 || values.some(isNone)) throw new UsageError(`--${key} takes a comma-separated list, or none on its own; got "${stringList(args, key)?.join(",") ?? ""}".`);
  return [...new Set(values)];
}

/** Splits `key=value` (for --metadata) or `Name: value` (for --header) flags into a record. */
export function pairs(args: Args, key: string, separator: "=" | ":"): Record<string, string> | undefined {
  const values = stringList(args, key);
  if (!values) return undefined;
  const record: Record<string, string> = {};
  for (const value of values) {
    const at = value.indexOf(separator);
    if (at <= 0) throw new UsageError(`--${key} takes ${separator === "=" ? "key=value" : '"Name: value"'}; got "${value}".`);
    record[value.slice(0, at).trim()] = value.slice(at + 1).trim();
  }
  return record;
}

/** Query flags that are set, for a list call (undefined ones left out). */
export function definedOnly<T extends Record<string, unknown>>(record: T): Partial<T> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as Partial<T>;
}
