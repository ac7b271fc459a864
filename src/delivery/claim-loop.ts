import { WakeableSleep } from "./wakeable-sleep.js";

/** What a ClaimLoop drives: its owner's queue, held under leases. */
export interface ClaimLoopOptions<T> {
  /** Claims up to `limit` due items under a lease; the owner counts them as held until worked. */
  claim(limit: number): Promise<T[]>;
  /** Works one claimed batch; the owner lets go of each item as it finishes. */
  work(batch: T[]): Promise<void>;
  /**
   * How many claimed and unfinished items count against `capacity`; 0 only when nothing is held.
   * The owner may leave out items that wait on nothing other items need (the webhook dispatcher
   * counts of each endpoint only what it may have in flight), so they never keep others out.
   */
  held(): number;
  /** Pushes out the leases of every item held. */
  renewLeases(): Promise<unknown>;
  /**
   * At stop, once nothing more is claimed: gives back every item held whose work has not begun,
   * so another worker claims it at once rather than when its lease ends. Logs its own failures.
   */
  giveBack?(): Promise<void>;
  /** Items held at most: claims stop while this many are in hand. */
  capacity: number;
  /** Items claimed per query at most. */
  batchSize: number;
  /** How long the loop sleeps when nothing was due. */
  pollMs: number;
  leaseMs: number;
  log: { error(obj: object, msg: string): void };
  /** What to log when a claim or a lease renewal fails (the loop carries on). */
  messages: { claimFailed: string; renewFailed: string };
}

/**
 * The continuous claim loop shared by the delivery worker and the webhook dispatcher. It claims
 * while there is room (capacity minus what is held), at most a batch at a time, and hands each
 * batch to the owner without waiting for it, so one slow item never holds up the next claim; a
 * full batch means more may be due, so it claims again at once, otherwise it sleeps for pollMs.
 * The sleep is cut short by notify() and by every batch that finishes (room for more). While
 * anything is held its leases are renewed every lease/3, so slow work is never taken for
 * abandoned; a loop that dies stops renewing and its items are claimed again when the lease ends.
 * From stop() on, owners check `stopping` where an item's work would begin (a request, an SMTP
 * hand-off) and give the item back instead: what has begun finishes, the rest is not started.
 */
export class ClaimLoop<T> {
  private running = false;
  private stopRequested = false;
  private loop: Promise<void> | null = null;
  private readonly nap = new WakeableSleep();

  constructor(private readonly options: ClaimLoopOptions<T>) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Between stop() and the loop's end: work not yet begun is given back rather than begun. */
  get stopping(): boolean {
    return this.stopRequested;
  }

  /** Stops claiming, gives back what has not begun, and resolves once what has is finished. */
  async stop(): Promise<void> {
    this.running = false;
    this.stopRequested = true;
    this.nap.wake();
    try {
      await this.loop;
    } finally {
      this.stopRequested = false; // started again after stop(): work rather than give back
    }
  }

  /** New work may be due, or room was made: skip the rest of the poll interval. */
  notify(): void {
    this.nap.wake();
  }

  private async renewLeases(): Promise<void> {
    if (this.options.held() === 0) return;
    try {
      await this.options.renewLeases();
    } catch (error) {
      this.options.log.error({ err: error }, this.options.messages.renewFailed);
    }
  }

  private async run(): Promise<void> {
    const { batchSize, capacity, log, messages } = this.options;
    const renewal = setInterval(() => void this.renewLeases(), this.options.leaseMs / 3);
    renewal.unref();
    const working = new Set<Promise<void>>();
    while (this.running) {
      const room = capacity - this.options.held();
      let claimed: T[] = [];
      if (room > 0) {
        try {
          claimed = await this.options.claim(Math.min(room, batchSize));
        } catch (error) {
          log.error({ err: error }, messages.claimFailed);
        }
      }
      if (claimed.length > 0) {
        const batch: Promise<void> = this.options.work(claimed).finally(() => {
          working.delete(batch);
          this.nap.wake(); // room for more
        });
        working.add(batch);
        if (claimed.length === Math.min(room, batchSize)) continue; // more may be due
      }
      if (this.running) await this.nap.sleep(this.options.pollMs);
    }
    // Now, not after the slow work in hand: its lease would keep the rest from other workers.
    await this.options.giveBack?.();
    await Promise.all(working);
    clearInterval(renewal);
  }
}
