import type { Noun } from "../command.js";
import { UsageError, optionalString, requiredString } from "../command.js";
import { writeUserFile } from "../io.js";
import { downloadHint, renderInbound } from "./render.js";

/** The contract's bounds for an attachment's index. */
const MAX_ATTACHMENT_INDEX = 1000;

function attachmentIndex(value: unknown): number {
  const text = String(value);
  const index = Number(text);
  if (!/^\d+$/.test(text) || index > MAX_ATTACHMENT_INDEX) throw new UsageError(`<attachment_index> is an attachment's index (0, 1, …) as \`mailroom inbound get\` lists them; got "${String(value)}".`);
  return index;
}

export const inbound: Noun = {
  name: "inbound",
  describe: "Replies received by the inbound SMTP server, and their attachments",
  commands: [
    {
      command: "get <inbound_id>",
      describe: "Show a reply: sender, text (quoted history apart), attachments and SPF/DKIM/DMARC results",
      operationId: "getInboundMessage",
      examples: [["$0 inbound get inb_01jd3k8m2q5v7w9x1y3z5a7b9c", "Read a reply"]],
      async run({ client, output }, args) {
        const received = await client().inbound.get(requiredString(args, "inbound_id"));
        output.result(received, () => renderInbound(received), () => downloadHint(received));
      },
    },
    {
      command: "get-attachment <inbound_id> <attachment_index>",
      describe: "Download a reply's attachment, to --output or to stdout",
      operationId: "getInboundAttachment",
      examples: [
        ["$0 inbound get-attachment inb_01jd3k8m2q5v7w9x1y3z5a7b9c 0 --output screenshot.png", "Save the first attachment"],
        ["$0 inbound get-attachment inb_01jd3k8m2q5v7w9x1y3z5a7b9c 1 > invoice.pdf", "Write the bytes to stdout"],
      ],
      builder: (yargs) =>
        yargs
          // A string: yargs would read 07 as 7 and x as NaN; checked by attachmentIndex instead.
          .positional("attachment_index", { type: "string", describe: "The attachment's index, as `mailroom inbound get` lists them" })
          .option("output", { alias: "o", type: "string", requiresArg: true, describe: "Write the attachment to this file (default: stdout, when it is not a terminal)" }),
      async run({ client, output, io }, args) {
        const inboundId = requiredString(args, "inbound_id");
        const index = attachmentIndex(args.attachment_index);
        const path = optionalString(args, "output");
        // As curl does: bytes written to a terminal garble it, and are never what was meant.
        if (path === undefined && io.stdout.isTTY) throw new UsageError("The attachment is binary: give --output <file>, or redirect stdout (> file).");
        const content = await client().inbound.getAttachment(inboundId, index);
        if (path === undefined) {
          io.stdout.write(content);
          return;
        }
        await writeUserFile(io, path, content, "output");
        output.result({ inbound_id: inboundId, index, path, size: content.byteLength }, () => `Saved attachment ${index} of ${inboundId} to ${path} (${content.byteLength} bytes).`);
      },
    },
  ],
};
