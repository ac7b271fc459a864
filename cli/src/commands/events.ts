import { APIConnectionError, APIError, type Event, type EventType, type Mailroom } from "mailroom";
import type { Args, Context, Noun } from "../command.js";
import { definedOnly, optionalString } from "../command.js";
import { listFlags, listQuery, printList } from "../list.js";
import { parsePastInstant } from "../time.js";
import { eventColumns, renderEventLine } from "./render.js";

/**
 * Events are listed by `created_at`, but a transaction that started earlier can commit a little
 * later than one that started after it. Each poll therefore looks back this far behind the newest
 * event seen, and the ids already printed keep the overlap from printing twice.
 */
const LOOKBACK_MS = 10_000;

const typeOption = { type: "string", describe: "Only events of this type (e.g. message.bounced)" } as const;

export const events: Noun = {
  name: "events",
  describe: "Every status change and engagement of every message",
  commands: [
    {
      command: "list",
      describe: "List the environment's events, newest first",
      operationId: "listEvents",
      examples: [["$0 events list --type message.bounced --created-after 1d", "Bounces of the last day"]],
      builder: (yargs) => listFlags(yargs).option("type", typeOption),
      async run(context, args) {
        const query = { ...listQuery(args), ...definedOnly({ type: optionalString(args, "type") as EventType | undefined }) };
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
      ],
      builder: (yargs) =>
        yargs
          .option("type", typeOption)
          .option("since", { type: "string", describe: "Start with the events since then (10m, 1h, RFC 3339); default: only new ones" })
          .option("interval", { type: "number", describe: "Seconds between polls", default: 2 }),
      run: tailEvents,
    },
  ],
};

/** Polls the event list and prints each event once, oldest first (JSON mode: one JSON object per line). */
async function tailEvents({ client, output, io }: Context, args: Args): Promise<void> {
  const mailroom = client();
  const type = optionalString(args, "type") as EventType | undefined;
  const since = optionalString(args, "since");
  const intervalMs = Math.max(0.1, Number(args.interval ?? 2)) * 1000;
  const tail = new EventTail(mailroom, type, since === undefined ? undefined : parsePastInstant(since, "since"));
  if (since === undefined) await tail.skipExisting();
  output.progress("Waiting for events (Ctrl-C to stop)…");
  let stopped = false;
  void io.interrupted.then(() => (stopped = true));
  while (!stopped) {
    try {
      for (const event of await tail.poll()) output.line(event, () => renderEventLine(event));
    } catch (error) {
      // A tail is meant to outlive a server restart or a busy minute; a refused key or a bad
      // filter will not fix itself, so those end it.
      if (!isTransient(error)) throw error;
      output.warn(`${(error as Error).message} — still tailing, next try in ${intervalMs / 1000} s`);
    }
    await sleepUnlessInterrupted(intervalMs, io.interrupted);
  }
}

function isTransient(error: unknown): boolean {
  return error instanceof APIConnectionError || (error instanceof APIError && (error.status === 429 || error.status >= 500));
}

function sleepUnlessInterrupted(ms: number, interrupted: Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void interrupted.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** The events not yet printed, found by polling with a look-back window. */
class EventTail {
  private readonly printed = new Map<string, number>();
  private readonly start: number | undefined;
  private newest: number | undefined;

  constructor(
    private readonly mailroom: Mailroom,
    private readonly type: EventType | undefined,
    startAt: string | undefined,
  ) {
    this.start = startAt === undefined ? undefined : Date.parse(startAt);
  }

  /**
   * Marks the events already there as printed, without printing them, so that only new ones are.
   * Starting just after the newest event instead would miss one committed later in the same
   * millisecond, or a late commit from a little earlier (see LOOKBACK_MS): the start needs the same
   * look-back as every poll.
   */
  async skipExisting(): Promise<void> {
    const [newest] = (await this.mailroom.events.list(definedOnly({ limit: 1, type: this.type }))).data;
    if (!newest) return;
    this.newest = Date.parse(newest.created_at);
    await this.poll();
  }

  async poll(): Promise<Event[]> {
    const from = this.newest === undefined ? this.start : Math.max(this.start ?? 0, this.newest - LOOKBACK_MS);
    const fresh: Event[] = [];
    const query = definedOnly({ limit: 100, type: this.type, created_after: from === undefined ? undefined : new Date(from).toISOString() });
    for await (const event of this.mailroom.events.list(query)) {
      if (!this.printed.has(event.id)) fresh.push(event);
    }
    fresh.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
    for (const event of fresh) {
      const at = Date.parse(event.created_at);
      this.printed.set(event.id, at);
      this.newest = Math.max(this.newest ?? at, at);
    }
    this.forgetOutsideWindow();
    return fresh;
  }

  /** Keeps memory flat on a long tail: ids older than the look-back can no longer come back. */
  private forgetOutsideWindow(): void {
    if (this.newest === undefined) return;
    const horizon = this.newest - 2 * LOOKBACK_MS;
    for (const [id, at] of this.printed) if (at < horizon) this.printed.delete(id);
  }
}
