import type { Usage } from "mailroom";
import type { Noun } from "../command.js";
import { definedOnly, optionalString } from "../command.js";
import { fields, table } from "../output.js";
import { parseDay } from "../time.js";

function renderUsage(usage: Usage): string {
  const days = table(
    ["DATE", "MESSAGES", "RECIPIENTS"],
    usage.days.map((day) => [day.date, String(day.messages), String(day.recipients)]),
  );
  const { quota } = usage;
  const summary = fields([
    ["total", `${usage.totals.messages} messages, ${usage.totals.recipients} recipients (${usage.from} to ${usage.to})`],
    [
      "quota",
      quota.monthly_messages === null
        ? `no monthly limit; ${quota.used} messages this month`
        : `${quota.used} of ${quota.monthly_messages} messages this month, ${quota.remaining ?? 0} left; resets ${quota.resets_at}`,
    ],
  ]);
  return `${days}\n\n${summary}`;
}

export const usage: Noun = {
  name: "usage",
  describe: "Live messages and recipients per day, and the monthly quota",
  commands: [
    {
      command: "get",
      describe: "Show live messages and recipients per UTC day, their totals and the monthly quota",
      operationId: "getUsage",
      examples: [
        ["$0 usage get", "This month so far, and the quota"],
        ["$0 usage get --from 2026-11-01 --to 2026-11-30", "One month, day by day"],
      ],
      builder: (yargs) =>
        yargs
          .option("from", { type: "string", describe: "First UTC day, YYYY-MM-DD (default: the first of this month)" })
          .option("to", { type: "string", describe: "Last UTC day, included, YYYY-MM-DD (default: today)" }),
      async run({ client, output }, args) {
        const from = optionalString(args, "from");
        const to = optionalString(args, "to");
        const answer = await client().usage.get(definedOnly({ from: from && parseDay(from, "from"), to: to && parseDay(to, "to") }));
        output.result(answer, () => renderUsage(answer));
      },
    },
  ],
};
