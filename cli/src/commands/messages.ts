import type { MessageStatus } from "mailroom";
import type { Command, Noun } from "../command.js";
import { definedOnly, optionalString, requiredString } from "../command.js";
import { listFlags, listQuery, printList } from "../list.js";
import { messageBody, messageFlags } from "./message-flags.js";
import { eventColumns, messageColumns, renderMessage } from "./render.js";

const STATUSES: MessageStatus[] = ["scheduled", "queued", "sending", "delivered", "deferred", "bounced", "failed", "suppressed", "canceled"];

export const createMessage: Command = {
  command: "create",
  describe: "Send a message (shortcut: mailroom send)",
  operationId: "createMessage",
  examples: [
    ['$0 send --to ada@example.com --subject "Welcome" --html "<p>Hi Ada</p>"', "Send a message"],
    ["$0 send --to ada@example.com --subject Report --html-file report.html --attach report.pdf", "HTML from a file, with an attachment"],
    ['$0 send --to bounced@simulator.test --subject Test --text "Hi" --schedule 10m', "Rehearse a bounce in sandbox, ten minutes from now"],
  ],
  builder: messageFlags,
  async run({ client, output, io }, args) {
    const body = await messageBody(args, io);
    const message = await client().messages.create(body, definedOnly({ idempotencyKey: optionalString(args, "idempotency-key") }));
    output.result(message, () => `${renderMessage(message)}\n\nAccepted. Follow it with: mailroom messages get ${message.id}`);
  },
};

export const messages: Noun = {
  name: "messages",
  describe: "Send email and follow what happened to it",
  commands: [
    createMessage,
    {
      command: "list",
      describe: "List messages, newest first",
      operationId: "listMessages",
      examples: [
        ["$0 messages list --status bounced --created-after 1d", "Bounces of the last day"],
        ["$0 messages list --recipient ada@example.com --all --json", "Every message to Ada, as JSON"],
      ],
      builder: (yargs) =>
        listFlags(yargs)
          .option("status", { type: "string", choices: STATUSES, describe: "Only this aggregate status" })
          .option("recipient", { type: "string", describe: "Only messages to this address (to, cc or bcc)" })
          .option("tag", { type: "string", describe: "Only messages with this tag" }),
      async run(context, args) {
        const filters = definedOnly({
          status: optionalString(args, "status") as MessageStatus | undefined,
          recipient: optionalString(args, "recipient"),
          tag: optionalString(args, "tag"),
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
      describe: "Cancel a scheduled message before it is sent",
      operationId: "cancelMessage",
      examples: [["$0 messages cancel msg_01jc3v6q9k2m8r4t7w0y5z1b3d", "Cancel a scheduled message"]],
      async run({ client, output }, args) {
        const message = await client().messages.cancel(requiredString(args, "message_id"));
        output.result(message, () => `${renderMessage(message)}\n\nCanceled.`);
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
  ],
};
