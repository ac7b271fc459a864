import { APIConnectionError, APIError, type Event, type EventType, type Mailroom } from "mailroom";
import { definedOnly } from "./command.js";
import type { Output } from "./output.js";

/**
 * Events are listed by `created_at`, but a transaction that started earlier can commit a little
 * later than one that started after it. Each poll therefore looks back this far behind the newest
 * event seen, and the ids already seen keep the overlap from coming back twice.
 */
export const LOOKBACK_MS = 10_000;

/**
 * The events not yet seen, found by polling the event list with a look-back window: what
 * `events tail` prints and `listen` forwards, each event once, oldest first.
 */
export class EventTail {
  private readonly seen = new Map<string, number>();
  private readonly start: number | undefined;
  private newest: number | undefined;

  /**
   * `types`: only events of these types (all when undefined). One type is filtered by the API;
   * several are filtered here, since the API takes one `type` per call. `recipient`: only the
   * history of the mail to that address, filtered by the API.
   */
  constructor(
    private readonly mailroom: Mailroom,
    private readonly types: readonly EventType[] | undefined,
    startAt: string | undefined,
    private readonly recipient?: string,
  ) {
    this.start = startAt === undefined ? undefined : Date.parse(startAt);
  }

  /**
   * Marks the events already there as seen, without answering them, so that only new ones are:
   * exactly those one listing shows, newest first, back to LOOKBACK_MS before the newest (a page,
   * unless the look-back holds more than 100). Starting just after the newest event instead would
   * miss one committed later in the same millisecond, or a late commit from a little earlier (see
   * LOOKBACK_MS); and a second listing to find that window would take for existing the events
   * created between the two requests, which would then never be answered.
   */
  async skipExisting(): Promise<void> {
    let horizon: number | undefined;
    for await (const event of this.mailroom.events.list(this.apiQuery())) {
      const at = Date.parse(event.created_at);
      horizon ??= at - LOOKBACK_MS;
      if (at < horizon) break;
      this.seen.set(event.id, at);
      this.newest = Math.max(this.newest ?? at, at);
    }
  }

  /** The events that appeared since the last poll, oldest first. */
  async poll(): Promise<Event[]> {
    const from = this.newest === undefined ? this.start : Math.max(this.start ?? 0, this.newest - LOOKBACK_MS);
    const fresh: Event[] = [];
    const query = { ...this.apiQuery(), ...definedOnly({ created_after: from === undefined ? undefined : new Date(from).toISOString() }) };
    for await (const event of this.mailroom.events.list(query)) {
      if (!this.seen.has(event.id)) fresh.push(event);
    }
    fresh.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
    for (const event of fresh) {
      const at = Date.parse(event.created_at);
      this.seen.set(event.id, at);
      this.newest = Math.max(this.newest ?? at, at);
    }
    this.forgetOutsideWindow();
    // Filtered after the window moved: an event of another type still counts as seen.
    return this.types === undefined || this.types.length <= 1 ? fresh : fresh.filter((event) => this.types?.includes(event.type));
  }

  /** The filters the API applies: one type (several are filtered here), the recipient. */
  private apiQuery() {
    return definedOnly({ limit: 100, type: this.types?.length === 1 ? this.types[0] : undefined, recipient: this.recipient });
  }

  /** Keeps memory flat on a long tail: ids older than the look-back can no longer come back. */
  private forgetOutsideWindow(): void {
    if (this.newest === undefined) return;
    const horizon = this.newest - 2 * LOOKBACK_MS;
    for (const [id, at] of this.seen) if (at < horizon) this.seen.delete(id);
  }
}

/**
 * The pace of a tail (`events tail`, `listen`): a poll every interval until the user stops it,
 * each request waiting out an outage of the API, the first one (`skipExisting`) as much as any.
 */
export class Polling {
  private stopped = false;

  constructor(
    private readonly options: {
      intervalMs: number;
      interrupted: Promise<void>;
      output: Output;
      /** What the warning about an outage says goes on: "still tailing". */
      carryingOn: string;
    },
  ) {
    void options.interrupted.then(() => (this.stopped = true));
  }

  get running(): boolean {
    return !this.stopped;
  }

  /**
   * What `request` answers once it succeeds, or undefined when the user stops first. A transient
   * failure is warned about and the request made again after the interval; any other is thrown.
   */
  async throughOutages<T>(request: () => Promise<T>): Promise<T | undefined> {
    while (this.running) {
      try {
        return await request();
      } catch (error) {
        if (!isTransient(error)) throw error;
        this.options.output.warn(`${(error as Error).message} — ${this.options.carryingOn}, next try in ${this.options.intervalMs / 1000} s`);
      }
      await this.pause();
    }
    return undefined;
  }

  /** Waits the interval, or less when the user stops meanwhile. */
  pause(): Promise<void> {
    return sleepUnlessInterrupted(this.options.intervalMs, this.options.interrupted);
  }
}

const MIN_INTERVAL_SECONDS = 0.1;
/** A day: setTimeout cannot wait much longer (2^31 ms) and would fire at once instead. */
const MAX_INTERVAL_SECONDS = 86_400;

/** The --interval flag of `events tail` and `listen`: seconds between polls. */
export function intervalFlag(defaultSeconds: number, describe: string) {
  return { type: "number", describe: `${describe} (${MIN_INTERVAL_SECONDS} to ${MAX_INTERVAL_SECONDS})`, default: defaultSeconds, coerce: pollInterval } as const;
}

/** Checked here, so that a bad --interval is a usage error (exit 2) rather than a poll every millisecond (setTimeout(NaN)). */
function pollInterval(seconds: number): number {
  if (!Number.isFinite(seconds) || seconds < MIN_INTERVAL_SECONDS || seconds > MAX_INTERVAL_SECONDS) {
    throw new Error(`--interval takes a number of seconds from ${MIN_INTERVAL_SECONDS} to ${MAX_INTERVAL_SECONDS}; got ${seconds}.`);
  }
  return seconds;
}

/**
 * Whether a failed poll is worth trying again: a tail is meant to outlive a server restart or a
 * busy minute, but a refused key or a bad filter will not fix itself.
 */
function isTransient(error: unknown): boolean {
  return error instanceof APIConnectionError || (error instanceof APIError && (error.status === 429 || error.status >= 500));
}

/** Waits `ms`, or less when the user interrupts (Ctrl-C) meanwhile. */
function sleepUnlessInterrupted(ms: number, interrupted: Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void interrupted.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
