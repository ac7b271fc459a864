import type { Metrics } from "mailroom";
import type { Noun } from "../command.js";
import { definedOnly, optionalString } from "../command.js";
import { fields, table } from "../output.js";
import { parsePastInstant } from "../time.js";

const GRANULARITIES = ["hour", "day"] as const;
type Granularity = (typeof GRANULARITIES)[number];

/** A bucket's start as its UTC day (`2026-11-20`) or hour (`2026-11-20 09:00`). */
function bucketLabel(start: string, granularity: Granularity): string {
  const iso = new Date(start).toISOString();
  return granularity === "day" ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${iso.slice(11, 13)}:00`;
}

/** A rate of the API (0..1, or null when there is nothing to divide by) as `98.8 %`. */
function percent(rate: number | null): string {
  return rate === null ? "n/a" : `${(rate * 100).toFixed(1)} %`;
}

/** People's opens or clicks, and how many recipients they were: `910 (640 unique)`. */
const withUnique = (count: number, unique: number) => `${count} (${unique} unique)`;

function renderMetrics(metrics: Metrics): string {
  // Unique clicks, machine opens and clicks are in the totals below, to keep the table in 100 columns.
  const buckets = table(
    ["START", "ACCEPTED", "DELIVERED", "DEFERRED", "BOUNCED", "OPENED", "CLICKED", "COMPLAINED"],
    metrics.buckets.map((bucket) => [
      bucketLabel(bucket.start, metrics.granularity),
      String(bucket.accepted),
      String(bucket.delivered),
      String(bucket.deferred),
      String(bucket.bounced),
      withUnique(bucket.opened, bucket.unique_opened),
      String(bucket.clicked),
      String(bucket.complained),
    ]),
  );
  const { totals } = metrics;
  const summary = fields([
    ["range", `${metrics.from} to ${metrics.to} (excluded), per UTC ${metrics.granularity}`],
    ["tag", metrics.tag],
    ["template", metrics.template],
    ["accepted", totals.accepted],
    ["delivered", totals.delivered],
    ["deferred", totals.deferred],
    ["bounced", `${totals.bounced} (${totals.hard_bounced} hard, ${totals.soft_bounced} soft)`],
    ["failed", totals.failed],
    ["suppressed", totals.suppressed],
    ["canceled", totals.canceled],
    ["opened", `${withUnique(totals.opened, totals.unique_opened)} by people, ${totals.machine_opened} by machines`],
    ["clicked", `${withUnique(totals.clicked, totals.unique_clicked)} by people, ${totals.machine_clicked} by machines`],
    ["complained", totals.complained],
    ["unsubscribed", totals.unsubscribed],
    ["replied", totals.replied],
    ["delivery rate", percent(totals.delivery_rate)],
    ["bounce rate", percent(totals.bounce_rate)],
    ["complaint rate", percent(totals.complaint_rate)],
    ["open rate", percent(totals.open_rate)],
    ["click rate", percent(totals.click_rate)],
  ]);
  return `${buckets}\n\n${summary}`;
}

export const metrics: Noun = {
  name: "metrics",
  describe: "What happened to this environment's mail per hour or day, with rates",
  commands: [
    {
      command: "get",
      describe: "Show the environment's events counted per UTC day or hour, their totals and rates",
      operationId: "getMetrics",
      examples: [
        ["$0 metrics get", "The last 7 days, day by day"],
        ["$0 metrics get --granularity hour", "The last 24 hours, hour by hour"],
        ["$0 metrics get --from 30d --tag welcome", "The last 30 days of mail tagged welcome"],
      ],
      builder: (yargs) =>
        yargs
          .option("from", {
            type: "string",
            describe: "Start, rounded down to its bucket (RFC 3339 or a duration ago: 7d, 12h; default: 7 days or 24 hours before --to)",
          })
          .option("to", { type: "string", describe: "End, excluded, rounded up to its bucket (RFC 3339 or a duration ago; default: now)" })
          .option("granularity", { type: "string", choices: GRANULARITIES, describe: "The size of each bucket, a UTC hour or day (default day)" })
          .option("tag", { type: "string", describe: "Only messages with this tag" })
          .option("template", { type: "string", describe: "Only messages sent from the template with this slug" }),
      async run({ client, output }, args) {
        const from = optionalString(args, "from");
        const to = optionalString(args, "to");
        // One now for both ends: `--from 30d --to 1h` is a range 30 days less an hour long, exactly.
        const now = Date.now();
        const answer = await client().metrics.get(
          definedOnly({
            from: from && parsePastInstant(from, "from", now),
            to: to && parsePastInstant(to, "to", now),
            granularity: optionalString(args, "granularity") as Granularity | undefined,
            tag: optionalString(args, "tag"),
            template: optionalString(args, "template"),
          }),
        );
        output.result(answer, () => renderMetrics(answer));
      },
    },
  ],
};
