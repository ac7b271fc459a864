import type { Args, Context, Noun } from "../command.js";
import { definedOnly, optionalString } from "../command.js";
import { EventTail, Polling, intervalFlag } from "../event-tail.js";
import { EVENT_TYPES, EVENT_TYPE_FLAG, eventTypeFlag, eventTypeList, oneEventType } from "../event-types.js";
import { listFlags, listQuery, printList } from "../list.js";
import { parsePastInstant } from "../time.js";
import { eventColumns, renderEventLine } from "./render.js";

const RECIPIENT_FLAG = { type: "string", describe: "Only the history of the mail to this address: its own events, and its messages' queued, scheduled and canceled" } as const;

export const events: Noun = {
  name: "events",
  describe: "Every status change and engagement of every message",
  commands: [
    {
      command: "list",
      describe: "List the environment's events, newest first",
      operationId: "listEvents",
      examples: [
        ["$0 events list --type message.bounced --created-after 1d", "Bounces of the last day"],
        ["$0 events list --recipient ada@example.com --all", "The whole history of the mail to Ada"],
      ],
      builder: (yargs) =>
        listFlags(yargs)
          .option(EVENT_TYPE_FLAG, eventTypeFlag("Only events of this type (e.g. message.bounced)", { several: false }))
          .option("recipient", RECIPIENT_FLAG),
      async run(context, args) {
        const query = { ...listQuery(args), ...definedOnly({ type: oneEventType(args, EVENT_TYPES), recipient: optionalString(args, "recipient") }) };
        await printList(context, args, context.client().events.list(query), eventColumns);
      },
    },
    {
      command: "tail",
      describe: "Follow new events as they happen, until Ctrl-C",
      operationId: undefined,
      examples: [
        ["$0 events tail", "Print each new event as it happens"],
        ["$0 events tail --type message.delivered --since 10m --json", "Delivered events of the last 10 minutes and on, as JSON lines"],
        ["$0 events tail --recipient ada@example.com", "Watch what happens to the mail to Ada"],
      ],
      builder: (yargs) =>
        yargs
          .option(EVENT_TYPE_FLAG, eventTypeFlag("Only events of these types (repeatable, or comma-separated); default all", { several: true }))
          .option("recipient", RECIPIENT_FLAG)
          .option("since", { type: "string", describe: "Start with the events since then (10m, 1h, RFC 3339); default: only new ones" })
          .option("interval", intervalFlag(2, "Seconds between polls")),
      run: tailEvents,
    },
  ],
};

/** Polls the event list and prints each event once, oldest first (JSON mode: one JSON object per line). */
async function tailEvents({ client, output, io }: Context, args: Args): Promise<void> {
  const types = eventTypeList(args, EVENT_TYPES);
  const since = optionalString(args, "since");
  const startAt = since === undefined ? undefined : parsePastInstant(since, "since");
  io.catchInterrupts?.();
  const polling = new Polling({ intervalMs: (args.interval as number) * 1000, interrupted: io.interrupted, output, carryingOn: "still tailing" });
  const tail = new EventTail(client(), types, startAt, optionalString(args, "recipient"));
  if (since === undefined) await polling.throughOutages(() => tail.skipExisting());
  output.progress("Waiting for events (Ctrl-C to stop)…");
  while (polling.running) {
    for (const event of (await polling.throughOutages(() => tail.poll())) ?? []) output.line(event, () => renderEventLine(event));
    await polling.pause();
  }
}
