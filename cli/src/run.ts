import yargs, { type Argv } from "yargs";
import { APIConnectionError, APIError, APITimeoutError, MailroomConfigurationError, RedirectError, type Mailroom } from "mailroom";
import type { Args, Command, Context } from "./command.js";
import { DeclinedError, EXIT, RefusedError, UsageError, requiredWordsOf, verbOf } from "./command.js";
import { addressedBy, commandsByOperation, nouns, shortcuts, tools } from "./commands/index.js";
import { NO_API_KEY_FIX, connectionOf, keyProblem, keySource, newClient, noAnswerFix } from "./connection.js";
import type { Io } from "./io.js";
import { Output, problemLines } from "./output.js";
import { Unanswered } from "./unanswered.js";
import { VERSION } from "./version.js";

export { EXIT } from "./command.js";

/**
 * Runs `mailroom <argv…>` and answers its exit code. Everything goes through `io`, so tests can
 * run the CLI in-process exactly as the binary does.
 */
export async function run(argv: string[], io: Io): Promise<number> {
  let exitCode: number = EXIT.ok;
  const failures: string[] = [];
  const handle = (command: Command) => async (args: Args) => {
    // yargs calls the handler even after a failed check (the fail callback below returns), so
    // without this `send --to x --typo` would send, and only then report the typo.
    if (failures.length > 0) return;
    exitCode = await execute(command, args, io);
  };
  const parser = build(
    yargs().parserConfiguration({
      // Every word a command takes that has no type of its own stays a string: yargs would otherwise
      // read a template slug 0x10 as 16 and an id 1e3 as 1000, and address another object.
      "parse-numbers": false,
      // Flags are read by their dashed names only. A camelCase twin of each would be another name
      // no one documents, and an unknown flag's error would name both (`no-enabled, noEnabled`).
      "camel-case-expansion": false,
    }),
    handle,
    io,
  );
  let helpText = "";
  let parsed: Args = {};
  await parser
    .fail((message, error) => {
      failures.push(message ?? error?.message ?? "Invalid usage.");
    })
    .parseAsync(argv, {}, (_error, args: Args | undefined, output) => {
      helpText = output;
      parsed = args ?? {};
    });
  if (failures.length > 0) {
    reportUsage(failures, parsed, io);
    return EXIT.usage;
  }
  if (helpText) io.stdout.write(`${helpText}\n`);
  return exitCode;
}

/**
 * yargs' text for a missing positional ("Not enough non-option arguments: got 0, need at least 1")
 * names neither the argument nor the command. Its locale string is replaced by one that starts
 * with this marker (and still gives the counts), which reportUsage turns into one that names both
 * (missingWords).
 */
const MISSING_WORDS = "Missing an argument the command takes";
const MISSING_WORDS_TEXT = `${MISSING_WORDS} (%s given, %s needed).`;

/**
 * A parse's failures, like every other error: a JSON document in JSON mode, else words and the
 * help to read, that of the command (or group) that was run.
 */
function reportUsage(failures: string[], args: Args, io: Io): void {
  const addressed = addressedBy(Array.isArray(args._) ? args._ : []);
  const explained = failures.map((failure) => (failure.startsWith(MISSING_WORDS) && addressed?.command ? missingWords(addressed.path, addressed.command, args) : failure));
  const message = [...new Set(explained)].join("\n");
  new Output(io, args.json as boolean | undefined).error({ error: "usage", message }, `${message}\n${helpPointer(addressed)}`);
}

/** `Missing <version>. Usage: mailroom templates get-version <template> <version>` */
function missingWords(path: string, command: Command, args: Args): string {
  const words = requiredWordsOf(command);
  const missing = words.filter((word) => args[word] === undefined).map((word) => `<${word}>`);
  return `Missing ${missing.join(" and ")}. Usage: mailroom ${[path, ...words.map((word) => `<${word}>`)].join(" ")}`;
}

function helpPointer(addressed: { path: string; command?: Command } | undefined): string {
  if (addressed === undefined) return 'Run "mailroom --help" for the commands.';
  return `Run "mailroom ${addressed.path} --help" for ${addressed.command ? "its flags and examples" : "its commands"}.`;
}

function build(parser: Argv, handle: (command: Command) => (args: Args) => Promise<void>, io: Io): Argv {
  parser
    .scriptName("mailroom")
    .usage("$0 <command> [options]\n\nEvery Mailroom API operation as a command. The API key comes from MAILROOM_API_KEY, the server from MAILROOM_BASE_URL (default http://localhost:3000).")
    .option("json", { type: "boolean", global: true, describe: "Print JSON (the default when stdout is not a terminal)" })
    .option("api-key", { type: "string", global: true, describe: "API key, or user access token (mru_…) for accounts commands (default: $MAILROOM_API_KEY, which, unlike a flag, other users cannot see in the process list)" })
    .option("base-url", { type: "string", global: true, describe: "Server URL (default: $MAILROOM_BASE_URL or http://localhost:3000)" });
  const longForms = commandsByOperation();
  for (const [name, command] of Object.entries(shortcuts)) {
    parser.command({
      command: name,
      describe: `${command.describe.replace(/\s*\(shortcut:.*\)$/, "")} (same as: mailroom ${command.operationId ? longForms.get(command.operationId) : name})`,
      builder: (yargs) => withExamples(command.builder?.(yargs) ?? yargs, command),
      handler: handle(command),
    });
  }
  for (const [name, command] of Object.entries(tools)) {
    parser.command({ command: name, describe: command.describe, builder: (yargs) => withExamples(command.builder?.(yargs) ?? yargs, command), handler: handle(command) });
  }
  for (const noun of nouns) {
    parser.command(noun.name, noun.describe, (group) => {
      for (const command of noun.commands) {
        group.command({
          command: command.command,
          aliases: command.aliases ?? [],
          describe: command.describe,
          builder: (yargs) => withExamples(command.builder?.(yargs) ?? yargs, command),
          handler: handle(command),
        });
        // The noun's own --help shows each verb's first example, so that it too starts from usage.
        const [example] = command.examples;
        if (example) group.example(...example);
      }
      return group.demandCommand(1, `Give the ${noun.name} command to run: ${noun.commands.map(verbOf).join(", ")}.`);
    });
  }
  return parser
    // yargs looks this text up in its locale (y18n), where a plural one is a { one, other } pair,
    // which the typings do not know: hence the cast.
    .updateStrings({ "Not enough non-option arguments: got %s, need at least %s": { one: MISSING_WORDS_TEXT, other: MISSING_WORDS_TEXT } } as unknown as Record<string, string>)
    .example("$0 send --to ada@example.com --subject Hi --html '<p>Hi</p>'", "Send a message")
    .example("$0 messages list --status bounced", "List bounced messages")
    .example("$0 events tail", "Follow events live")
    .example("$0 listen --forward-to http://localhost:4242/webhooks", "Forward events to a local webhook receiver")
    .demandCommand(1, "Give a command.")
    .recommendCommands()
    .strict()
    .help()
    .alias("help", "h")
    .version(VERSION)
    .wrap(Math.min(110, (io.stdout as { columns?: number }).columns ?? 100))
    .exitProcess(false);
}

function withExamples(yargs: Argv, command: Command): Argv {
  return command.examples.reduce((chain, [example, description]) => chain.example(example, description), yargs).check((args) => onceEach(args, yargs) && noFormsTaken(args, yargs, command));
}

/** What getOptions(), yargs' own (not in its typings), tells of the options declared. */
interface DeclaredOptions {
  key: Record<string, unknown>;
  /** The repeatable ones. */
  array: string[];
  /** Those that take text, repeatable or not. */
  string: string[];
}

const declaredOptions = (yargs: Argv) => (yargs as unknown as { getOptions(): DeclaredOptions }).getOptions();

/**
 * A flag that takes one value given twice is a mistake: yargs would hand over both, and
 * `--subject A --subject B` would send "A,B". Only the flags declared repeatable take several.
 */
function onceEach(args: Args, yargs: Argv): true {
  const { key, array } = declaredOptions(yargs);
  for (const [name, value] of Object.entries(args)) {
    if (!(name in key) || array.includes(name) || !Array.isArray(value)) continue;
    throw new Error(`--${name} takes one value; it was given ${value.length} times.`);
  }
  return true;
}

/**
 * yargs reads `--no-<flag>` as the flag set to false for any flag, a text one too, which would
 * then be sent as the text "false" (`templates update --no-html` replaced the HTML with it). Only
 * the `--no-` forms a command reads (Command.noForms) are taken; any other is refused.
 */
function noFormsTaken(args: Args, yargs: Argv, command: Command): true {
  for (const name of declaredOptions(yargs).string) {
    const value = args[name];
    const negated = value === false || (Array.isArray(value) && value.includes(false));
    if (negated && !command.noForms?.includes(name)) throw new Error(`--no-${name}: --${name} has no --no- form; give --${name} a value, or leave it out.`);
  }
  return true;
}

async function execute(command: Command, args: Args, io: Io): Promise<number> {
  const output = new Output(io, args.json as boolean | undefined);
  const unanswered = new Unanswered();
  io.beforeSignalExit?.(() => reportStop(output, unanswered.inDoubt));
  // Every request of the command goes through it (a probe's or doctor's client too), so that a stop
  // can name the POST it leaves in doubt.
  const watched: Io = { ...io, fetch: unanswered.watch(io.fetch ?? ((request) => fetch(request))) };
  let client: Mailroom | undefined;
  const context: Context = {
    client: () => (client ??= createClient(args, watched)),
    output,
    io: watched,
    rerunWith: (key, call) => unanswered.rerunWith(key, call),
  };
  try {
    return (await command.run(context, args)) ?? EXIT.ok;
  } catch (error) {
    // The server a connection error names: the client's, else (a probe's client) the one configured.
    return report(error, output, keySource(args), () => client?.baseUrl ?? connectionOf(args, io).baseUrl);
  }
}

function createClient(args: Args, io: Io): Mailroom {
  const { apiKey, baseUrl } = connectionOf(args, io);
  if (!apiKey) throw new UsageError(`No API key. ${NO_API_KEY_FIX}`);
  const problem = keyProblem(apiKey, keySource(args));
  if (problem) throw new UsageError(problem);
  return newClient(apiKey, baseUrl, io);
}

/**
 * Prints what went wrong, naming the fix where we know it, and answers the exit code. `keyFrom`
 * is where the key came from (keySource), the place to fix a refused one.
 */
function report(error: unknown, output: Output, keyFrom: string, serverUrl: () => string): number {
  if (error instanceof UsageError || error instanceof MailroomConfigurationError) {
    output.error({ error: "usage", message: error.message }, error.message);
    return EXIT.usage;
  }
  if (error instanceof DeclinedError) {
    output.error({ error: "declined", message: error.message }, error.message);
    return EXIT.apiError;
  }
  if (error instanceof RefusedError) {
    output.error({ error: "refused", message: error.message, ...error.details }, error.message);
    return EXIT.apiError;
  }
  if (error instanceof APIError) {
    const lines = problemLines(`Error: ${error.status} ${error.code}`, error);
    if (error.code === "invalid_api_key") lines.push(`Check ${keyFrom}: the key is missing, mistyped, revoked or expired.`);
    if (error instanceof RedirectError) lines.push("Set MAILROOM_BASE_URL (or --base-url) to where it points: the API did not carry out the request.");
    if (error.code === "user_token_required") lines.push("This command acts for a person: pass a user access token (mru_…) with --api-key or MAILROOM_API_KEY, not an API key.");
    // Changing the list takes another key (or the dashboard): this one is refused from here.
    if (error.code === "ip_not_allowed") {
      lines.push("This key only accepts requests from its allowed IP addresses: send from one of them, or change them with another key or in the dashboard: mailroom api-keys update <api_key_id> --allowed-ips <list|none>");
    }
    if (error.request_id) lines.push(`Request id: ${error.request_id}`);
    const key = rerunKey(error);
    if (key !== undefined) lines.push(rerunHint(error, key));
    const problem = error.problem ?? { status: error.status, code: error.code, detail: error.detail };
    output.error(key === undefined ? problem : { ...problem, idempotency_key: key }, lines.join("\n"));
    return EXIT.apiError;
  }
  if (error instanceof APIConnectionError) {
    const baseUrl = serverUrl();
    const key = rerunKey(error);
    const message = [`${error.message}${attemptsSaid(error)}`, noAnswerFix(error, baseUrl), ...(key === undefined ? [] : [rerunHint(error, key)])].join("\n");
    // A timeout is its own kind: unlike an unreachable server, a slow one may have run the request.
    const kind = error instanceof APITimeoutError ? "timeout" : "connection";
    output.error({ error: kind, message: error.message, base_url: baseUrl, attempts: error.attempts, ...(key === undefined ? {} : { idempotency_key: key }) }, message);
    return EXIT.apiError;
  }
  // A bug, or something the CLI does not handle. Only the error's name is shown: its text or stack
  // can quote what it was handed, such as a header holding the API key.
  const name = error instanceof Error ? error.name : typeof error;
  const message = `Internal error (${name}): the mailroom CLI failed unexpectedly. Nothing more is shown, since the error's text could hold secrets such as the API key; please report what you ran.`;
  output.error({ error: "internal", message }, message);
  return EXIT.apiError;
}

/**
 * How long the SDK kept trying, after the last attempt's own message: three 60 s timeouts are
 * over three minutes of waiting, which "timed out after 60000 ms" alone does not account for.
 */
function attemptsSaid(error: APIConnectionError): string {
  if (error.attempts <= 1 || error.elapsed_ms === undefined) return "";
  return ` (the last of ${error.attempts} attempts, ${Math.round(error.elapsed_ms / 1000)} s in all)`;
}

/**
 * The Idempotency-Key to run the command again with, when the request may have run (no answer, a
 * 5xx) or is still running (409 idempotency_key_in_use): under the same key, the server answers
 * what the first one did rather than do it twice. Undefined for other errors, and where the error
 * carries no key: a call sent without one (a GET, a PATCH), or one whose key a rerun does not take
 * (a preview: see rerunWith).
 */
function rerunKey(error: APIError | APIConnectionError): string | undefined {
  if (error instanceof APIConnectionError || error.status >= 500 || error.code === "idempotency_key_in_use") return error.idempotency_key;
  return undefined;
}

function rerunHint(error: APIError | APIConnectionError, key: string): string {
  if (error instanceof APIError && error.code === "idempotency_key_in_use") return `The first run with this Idempotency-Key is still going; for its answer, ${runAgain(key)}`;
  return mayHaveRun(key);
}

const runAgain = (key: string) => `run the same command again with ${rerunFlag(key)}`;

const mayHaveRun = (key: string) => `It may have been carried out all the same; to try again without doing it twice, run the same command with ${rerunFlag(key)}`;

// No full stop after the flag in the sentences that end with it: it would be copied with the key.
const rerunFlag = (key: string) => `--idempotency-key ${shellWord(key)}`;

/**
 * What a stop (Ctrl-C, SIGTERM) says as it ends the command: nothing, unless it leaves a POST in
 * doubt whose rerun takes a key; then, on stderr in either mode, that it may have run (or, during
 * a 409 idempotency_key_in_use wait, that the first run with the key is still going) and the key
 * to run the command again with. Exit 130 or 143 all the same: the command did not finish.
 */
function reportStop(output: Output, inDoubt: { key: string; stillGoing: boolean } | undefined): void {
  if (inDoubt === undefined) return;
  const { key, stillGoing } = inDoubt;
  if (stillGoing) {
    const stopped = "Interrupted while the first run with this Idempotency-Key was still going";
    output.stopped({ error: "interrupted", message: `${stopped}.`, idempotency_key: key }, `${stopped}. For its answer, ${runAgain(key)}`);
    return;
  }
  const stopped = "Interrupted before the server answered";
  output.stopped({ error: "interrupted", message: `${stopped}: the request may have been carried out all the same.`, idempotency_key: key }, `${stopped}. ${mayHaveRun(key)}`);
}

/** `word` as a shell reads it back: bare when it can be, else single-quoted (a key the user chose may hold a space). */
function shellWord(word: string): string {
  return /^[\w.:@%+=,/#-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}
