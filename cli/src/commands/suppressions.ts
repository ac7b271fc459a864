import type { Suppression, SuppressionReason } from "mailroom";
import type { Noun } from "../command.js";
import { definedOnly, optionalString, requiredString } from "../command.js";
import { listFlags, listQuery, printList } from "../list.js";
import { fields } from "../output.js";
import { GIVEN_REASONS, type GivenReason } from "./suppression-file.js";
import { createSuppressionBatch } from "./suppression-import.js";
import { confirm, withYes } from "../confirm.js";

/** The contract's `SuppressionReason` values; `satisfies` keeps the list to values it has. */
const REASONS = ["hard_bounce", "complaint", "unsubscribe", "manual"] as const satisfies readonly SuppressionReason[];

const idempotencyFlag = { type: "string", describe: "Make retries of this call safe" } as const;

const suppressionColumns = {
  headers: ["EMAIL", "REASON", "CREATED", "MESSAGE", "ID"],
  row: (suppression: Suppression) => [suppression.email, suppression.reason, suppression.created_at, suppression.message_id ?? "", suppression.id],
};

const renderSuppression = (suppression: Suppression) =>
  fields([
    ["id", suppression.id],
    ["email", suppression.email],
    ["reason", suppression.reason],
    ["environment", suppression.environment],
    ["message_id", suppression.message_id],
    ["detail", suppression.detail],
    ["created_at", suppression.created_at],
  ]);

export const suppressions: Noun = {
  name: "suppressions",
  describe: "Addresses the environment no longer sends to",
  commands: [
    {
      command: "list",
      describe: "List suppressed addresses, newest first",
      operationId: "listSuppressions",
      examples: [
        ["$0 suppressions list --reason hard_bounce", "Addresses that bounced for good"],
        ["$0 suppressions list --email ada@example.com", "Whether one address is suppressed, and why"],
      ],
      builder: (yargs) =>
        listFlags(yargs, { createdRange: false })
          .option("reason", { type: "string", choices: REASONS, describe: "Only suppressions for this reason" })
          .option("email", { type: "string", describe: "Only this address's suppression (case-insensitive)" }),
      async run(context, args) {
        const filters = definedOnly({ reason: optionalString(args, "reason") as SuppressionReason | undefined, email: optionalString(args, "email") });
        await printList(context, args, context.client().suppressions.list({ ...listQuery(args, { createdRange: false }), ...filters }), suppressionColumns);
      },
    },
    {
      command: "create",
      describe: "Suppress an address: messages to it are no longer sent",
      operationId: "createSuppression",
      examples: [
        ["$0 suppressions create --email ada@example.com", "Stop sending to an address"],
        ['$0 suppressions create --email ada@example.com --reason unsubscribe --detail "Asked by phone"', "Record an unsubscribe, with a note"],
      ],
      builder: (yargs) =>
        yargs
          .option("email", { type: "string", describe: "The address to stop sending to", demandOption: "Give the address with --email." })
          .option("reason", { type: "string", choices: GIVEN_REASONS, describe: "Why (default manual)" })
          .option("detail", { type: "string", describe: "A note of your own" })
          .option("idempotency-key", idempotencyFlag),
      async run({ client, output }, args) {
        const body = {
          email: requiredString(args, "email"),
          ...definedOnly({ reason: optionalString(args, "reason") as GivenReason | undefined, detail: optionalString(args, "detail") }),
        };
        // An address already suppressed answers its existing suppression (reason and all) with
        // 200 rather than 201, so what is printed is always what now holds, and says which.
        const { data: suppression, response } = await client()
          .suppressions.create(body, definedOnly({ idempotencyKey: optionalString(args, "idempotency-key") }))
          .withResponse();
        const outcome =
          response.status === 201
            ? `Suppressed: messages to ${suppression.email} are not sent.`
            : `Already suppressed since ${suppression.created_at} (${suppression.reason}): messages to ${suppression.email} are not sent. Nothing was changed.`;
        output.result(suppression, () => `${renderSuppression(suppression)}\n\n${outcome}`);
      },
    },
    createSuppressionBatch,
    {
      command: "get <suppression_id>",
      describe: "Show a suppression: the address, why, and the message that caused it",
      operationId: "getSuppression",
      examples: [["$0 suppressions get sup_01jd3k8m2q5v7w9x1y3z5a7b9c", "Why an address is suppressed"]],
      async run({ client, output }, args) {
        const suppression = await client().suppressions.get(requiredString(args, "suppression_id"));
        output.result(suppression, () => renderSuppression(suppression));
      },
    },
    {
      command: "delete <suppression_id>",
      describe: "Take an address off the list: later messages are sent to it again",
      operationId: "deleteSuppression",
      examples: [["$0 suppressions delete sup_01jd3k8m2q5v7w9x1y3z5a7b9c", "Send to an address again"], ["$0 suppressions delete sup_01jd3k8m2q5v7w9x1y3z5a7b9c --yes", "The same without asking, as a script must"]],
      builder: withYes,
      async run(context, args) {
        const { client, output } = context;
        const id = requiredString(args, "suppression_id");
        // Named by its id: looking the address up would be a request sent before the answer.
        await confirm(context, args, { command: "suppressions delete", verb: "delete", what: `suppression ${id}`, consequence: "Mail can reach its address again." });
        const deleted = await client().suppressions.delete(id);
        output.result(deleted, () => `Deleted ${deleted.id}: later messages are sent to the address again.`);
      },
    },
  ],
};
