import { MESSAGE_BATCH_LIMIT, type CreateMessageBatchParams, type MessageStatus } from "mailroom";
import type { Args, Command, Noun } from "../command.js";
import { RefusedError, UsageError, definedOnly, optionalString, requiredString } from "../command.js";
import { readFileOrStdin, type Io } from "../io.js";
import { listFlags, listQuery, printList } from "../list.js";
import { parseInstant, refuseRelativeWithKey } from "../time.js";
import { messageBody, messageFlags } from "./message-flags.js";
import { eventColumns, messageColumns, renderBatch, renderMessage, renderPreview, replyColumns } from "./render.js";

const STATUSES: MessageStatus[] = ["scheduled", "queued", "sending", "delivered", "deferred", "bounced", "failed", "suppressed", "canceled"];

export const createMessage: Command = {
  command: "create",
  describe: "Send a message (shortcut: mailroom send)",
  operationId: "createMessage",
  examples: [
    ['$0 send --to ada@example.com --subject "Welcome" --html "<p>Hi Ada</p>"', "Send a message"],
    ["$0 send --to ada@example.com --subject Report --html-file report.html --attach report.pdf", "HTML from a file, with an attachment"],
    ['$0 send --to bounced@simulator.test --subject Test --text "Hi" --schedule 10m', "Rehearse a bounce in sandbox, ten minutes from now"],
    ['$0 send --to ada@example.com --subject "Your sign-in code" --text 481516 --expires-at 10m', "Give up on a deferred delivery after ten minutes"],
    ["$0 send --to ada@example.com --template welcome --var first_name=Ada --var-json '{\"order\":{\"id\":7}}'", "Send the published version of a template, with its variables"],
    ["$0 send --to ada@example.com --template welcome@3 --variables-file vars.json", "Send version 3 of a template, the variables from a file"],
  ],
  builder: (yargs) =>
    messageFlags(yargs)
      .option("dry-run", { type: "boolean", describe: "Send nothing: show what would be sent (messages preview)" })
      .option("mime", { type: "boolean", describe: "With --dry-run: print only the RFC 5322 source (before tracking and DKIM)" }),
  async run(context, args) {
    if (args["dry-run"] === true) return previewMessage.run(context, args);
    // Refused rather than ignored: whoever asks for the source to save did not mean to send.
    if (args.mime === true) throw new UsageError("--mime shows what a dry run would send: add --dry-run (nothing is sent then).");
    const { client, output, io } = context;
    refuseRelativeWithKey(args, ["schedule", "expires-at"]);
    const body = await messageBody(args, io);
    const message = await client().messages.create(body, definedOnly({ idempotencyKey: optionalString(args, "idempotency-key") }));
    output.result(message, () => renderMessage(message), () => `Accepted. Follow it with: mailroom messages get ${message.id}`);
  },
};

/** A dry run of `create`, with the same flags: `mailroom send --dry-run` is this command. */
export const previewMessage: Command = {
  command: "preview",
  describe: "Show what a send would be, rendered, without sending or storing anything",
  operationId: "previewMessage",
  examples: [
    ["$0 messages preview --to ada@example.com --template welcome --var first_name=Ada", "Render a template as it would be sent"],
    ['$0 send --dry-run --to ada@example.com --subject "Welcome" --html-file welcome.html', "The same, as a flag of send"],
    ["$0 messages preview --to ada@example.com --template welcome --var first_name=Ada --mime > welcome.eml", "Save the source to open in a mail client"],
  ],
  builder: (yargs) => messageFlags(yargs).option("mime", { type: "boolean", describe: "Print only the RFC 5322 source (before tracking and DKIM)" }),
  async run({ client, output, io, rerunWith }, args) {
    refuseMimeAsJson(args);
    const body = await messageBody(args, io);
    // Never the user's --idempotency-key (the SDK sends a key of its own): the server keys a
    // POST's answer to its path, so a preview stored under the key would make the send it
    // suggests, with the same flags, 422 idempotency_key_reused, and a second preview a replay.
    // A preview changes nothing, so a failed or stopped one needs no key to be run again with.
    const preview = await rerunWith(undefined, () => client().messages.preview(body));
    if (args.mime === true) {
      io.stdout.write(preview.mime);
      return;
    }
    output.result(preview, () => renderPreview(preview), () => "Nothing was sent. Send it with: mailroom send (the same flags, without --dry-run)");
  },
};

/**
 * `--mime` prints the source as it is, like a download, whatever reads stdout (`--mime > x.eml`
 * is its use, and a pipe is JSON mode). Asked for outright, JSON cannot be both: refused rather
 * than one of the two silently dropped; the JSON preview holds the source as `mime`.
 */
function refuseMimeAsJson(args: Args): void {
  if (args.mime === true && args.json === true) {
    throw new UsageError("--mime prints the RFC 5322 source, not JSON: drop --json (or drop --mime: the JSON preview holds the source as its mime field).");
  }
}

/**
 * The batch in `--file`: `{ "messages": [...] }` (sent as it is) or a bare array of messages,
 * from a file or, for `-`, stdin. Read and counted before anything is sent.
 */
async function readBatch(io: Io, path: string): Promise<CreateMessageBatchParams> {
  const { source, content: raw } = await readFileOrStdin(io, path, "file");
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString("utf8"));
  } catch (error) {
    throw new UsageError(`--file: ${source} is not JSON (${(error as Error).message}).`);
  }
  const body = Array.isArray(parsed) ? { messages: parsed } : parsed;
  const messages = (body as { messages?: unknown } | null)?.messages;
  if (!Array.isArray(messages)) throw new UsageError(`--file: ${source} holds neither { "messages": [...] } nor an array of messages.`);
  if (messages.length === 0 || messages.length > MESSAGE_BATCH_LIMIT) {
    throw new UsageError(`--file: a batch holds 1 to ${MESSAGE_BATCH_LIMIT} messages; ${source} has ${messages.length}.`);
  }
  // Each message is the API's to judge: an invalid one comes back refused, in its place.
  return body as CreateMessageBatchParams;
}

export const createMessageBatch: Command = {
  command: "create-batch",
  aliases: ["batch"],
  describe: "Send up to 100 messages in one call, from a JSON file or stdin; exit 1 if any is refused",
  operationId: "createMessageBatch",
  examples: [
    ["$0 messages create-batch --file batch.json", "Send the messages in batch.json, each answered on its own"],
    ["./receipts.sh | $0 messages batch --file - --idempotency-key receipts-2026-11-21", "From stdin; running it again sends nothing twice"],
    ["$0 messages create-batch --file batch.json --strict", "All or nothing: one invalid message and none is sent"],
  ],
  builder: (yargs) =>
    yargs
      .option("file", {
        type: "string",
        describe: 'The batch: { "messages": [...] } or an array, each message a createMessage body; - reads stdin',
        // Takes the next word whatever it is: yargs would otherwise read `-` as a positional.
        requiresArg: true,
        demandOption: "Give the batch with --file <path>, or --file - for stdin.",
      })
      .option("idempotency-key", { type: "string", describe: "Make retries of this batch safe (default: a new key per run)" })
      .option("strict", { type: "boolean", describe: "All or nothing: if any message would be refused, send none (validation: strict)" }),
  async run({ client, output, io }, args) {
    const body = { ...(await readBatch(io, requiredString(args, "file"))), ...(args.strict === true ? { validation: "strict" as const } : {}) };
    const batch = await client().messages.createBatch(body, definedOnly({ idempotencyKey: optionalString(args, "idempotency-key") }));
    output.result(batch, () => renderBatch(batch));
    const refused = batch.data.filter((item) => item.status !== 202).map((item) => item.index);
    if (refused.length > 0) {
      throw new RefusedError(`${refused.length} of ${batch.data.length} messages refused (index ${refused.join(", ")}).`, { refused });
    }
  },
};

/**
 * The new send time: `--at WHEN` as RFC 3339 UTC, or null for `--now` (the contract's "send it
 * now"). Exactly one of the two, checked before any request: with neither, the command would have
 * nothing to ask; with both, either reading could be the wrong one.
 */
function rescheduleTime(args: Args): string | null {
  const at = optionalString(args, "at");
  const now = args.now === true;
  if (at !== undefined && now) throw new UsageError("Give either --at WHEN or --now, not both.");
  if (at === undefined && !now) throw new UsageError("Give the new time with --at WHEN (RFC 3339, or a delay such as 2h), or --now to send it now.");
  return at === undefined ? null : parseInstant(at, "at");
}

export const messages: Noun = {
  name: "messages",
  describe: "Send email and follow what happened to it",
  commands: [
    createMessage,
    createMessageBatch,
    previewMessage,
    {
      command: "list",
      describe: "List messages, newest first",
      operationId: "listMessages",
      examples: [
        ["$0 messages list --status bounced --created-after 1d", "Bounces of the last day"],
        ["$0 messages list --recipient ada@example.com --all --json", "Every message to Ada, as JSON"],
        ["$0 messages list --template welcome", "Messages sent from the welcome template"],
      ],
      builder: (yargs) =>
        listFlags(yargs)
          .option("status", { type: "string", choices: STATUSES, describe: "Only this aggregate status" })
          .option("recipient", { type: "string", describe: "Only messages to this address (to, cc or bcc)" })
          .option("tag", { type: "string", describe: "Only messages with this tag" })
          .option("template", { type: "string", describe: "Only messages sent from the template with this slug (any version)" }),
      async run(context, args) {
        const filters = definedOnly({
          status: optionalString(args, "status") as MessageStatus | undefined,
          recipient: optionalString(args, "recipient"),
          tag: optionalString(args, "tag"),
          template: optionalString(args, "template"),
        });
        await printList(context, args, context.client().messages.list({ ...listQuery(args), ...filters }), messageColumns);
      },
    },
    {
      command: "get <message_id>",
      describe: "Show a message, its recipients and their status",
      operationId: "getMessage",
      examples: [["$0 messages get msg_01jc3v6q9k2m8r4t7w0y5z1b3d", "Show one message"]],
      async run({ client, output }, args) {
        const message = await client().messages.get(requiredString(args, "message_id"));
        output.result(message, () => renderMessage(message));
      },
    },
    {
      command: "cancel <message_id>",
      describe: "Cancel a message not yet handed off: scheduled, queued or deferred",
      operationId: "cancelMessage",
      examples: [["$0 messages cancel msg_01jc3v6q9k2m8r4t7w0y5z1b3d", "Stop a message before it is handed off"]],
      builder: (yargs) => yargs.option("idempotency-key", { type: "string", describe: "Make retries of this call safe" }),
      async run({ client, output }, args) {
        const message = await client().messages.cancel(requiredString(args, "message_id"), definedOnly({ idempotencyKey: optionalString(args, "idempotency-key") }));
        output.result(message, () => `${renderMessage(message)}\n\nCanceled.`);
      },
    },
    {
      command: "reschedule <message_id>",
      describe: "Move a scheduled message to another time, or send it now",
      operationId: "rescheduleMessage",
      examples: [
        ["$0 messages reschedule msg_01jc3v6q9k2m8r4t7w0y5z1b3d --at 2026-11-23T09:00:00Z", "Send it on 23 November at 09:00 UTC instead"],
        ["$0 messages reschedule msg_01jc3v6q9k2m8r4t7w0y5z1b3d --at 2h", "Two hours from now"],
        ["$0 messages reschedule msg_01jc3v6q9k2m8r4t7w0y5z1b3d --now", "Send it now rather than wait"],
      ],
      builder: (yargs) =>
        yargs
          .option("at", { type: "string", requiresArg: true, describe: "The new time: RFC 3339 or a delay (10m, 2h, 1d); at most 30 days ahead" })
          .option("now", { type: "boolean", describe: "Send it now" })
          .option("idempotency-key", { type: "string", describe: "Make retries of this call safe" }),
      async run({ client, output }, args) {
        refuseRelativeWithKey(args, ["at"]);
        const scheduledAt = rescheduleTime(args);
        const message = await client().messages.reschedule(
          requiredString(args, "message_id"),
          { scheduled_at: scheduledAt },
          definedOnly({ idempotencyKey: optionalString(args, "idempotency-key") }),
        );
        output.result(message, () => `${renderMessage(message)}\n\n${scheduledAt === null ? "Due now: it is sent next." : `Rescheduled for ${message.scheduled_at}.`}`);
      },
    },
    {
      command: "list-events <message_id>",
      aliases: ["events"],
      describe: "List a message's events, in order",
      operationId: "listMessageEvents",
      examples: [["$0 messages events msg_01jc3v6q9k2m8r4t7w0y5z1b3d", "What happened to a message"]],
      builder: (yargs) => listFlags(yargs, { createdRange: false }),
      async run(context, args) {
        const list = context.client().messages.listEvents(requiredString(args, "message_id"), listQuery(args, { createdRange: false }));
        await printList(context, args, list, eventColumns);
      },
    },
    {
      command: "list-replies <message_id>",
      aliases: ["replies"],
      describe: "List the replies threaded to a message, oldest first",
      operationId: "listMessageReplies",
      examples: [
        ["$0 messages replies msg_01jc3v6q9k2m8r4t7w0y5z1b3d", "Who answered a message"],
        ["$0 messages replies msg_01jc3v6q9k2m8r4t7w0y5z1b3d --all --json | jq -r '.data[].text'", "The text of every reply"],
      ],
      builder: (yargs) => listFlags(yargs, { createdRange: false }),
      async run(context, args) {
        const list = context.client().messages.listReplies(requiredString(args, "message_id"), listQuery(args, { createdRange: false }));
        await printList(context, args, list, replyColumns);
      },
    },
  ],
};
