import { WakeableSleep } from "../delivery/wakeable-sleep.js";
import type { ReparkTarget, WebhookDeliveriesRepository } from "../db/repositories/webhook-deliveries.js";

export interface ParkingSettings {
  /** Deliveries moved per transaction: each holds the writer (SQLite's only one) for a few ms. */
  chunk: number;
  /** How often an idle parker looks for endpoints turned off or on elsewhere (another node, an attempt's 410). */
  pollMs: number;
}

export const PARKING_DEFAULTS: ParkingSettings = { chunk: 1000, pollMs: 1000 };

/** Endpoints taken up per look; the rest are found by the next one. */
const ENDPOINTS_PER_LOOK = 20;

/**
 * Keeps a disabled endpoint's queued deliveries out of the way of everyone else's. The claim
 * query takes due deliveries in due order from an index; a disabled endpoint's backlog stays due
 * and would sit at the head of it, so every claim would walk past all of it (a dead endpoint's
 * 200,000 deliveries cost each claim ~100 ms, during which SQLite's only writer is busy). So they
 * are flagged `parked`, which the index leads with, and unparked when the endpoint is enabled.
 *
 * Flipping an endpoint writes one row (its `parking_epoch` goes up); this walks its deliveries in
 * chunks afterwards, in event order, so no transaction is long and the oldest resume first. A
 * walk that answers a flip made before the latest one stops, and the latest one's walk redoes it.
 * The claim query still checks that the endpoint is enabled, so a delivery that escaped parking
 * (queued by an event racing the flip) is never sent to a disabled endpoint: parking only makes
 * claims cheap. Any number of processes may run one; their walks are idempotent.
 */
export class DeliveryParking {
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly nap = new WakeableSleep();
  private pending = false;
  private stopping = false;

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly log: { error(obj: object, msg: string): void },
    private readonly settings: ParkingSettings = PARKING_DEFAULTS,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops after the chunk in hand (a walk left half-done is resumed by the next look, from the start). */
  async stop(): Promise<void> {
    this.running = false;
    this.stopping = true;
    this.nap.wake();
    try {
      await this.loop;
    } finally {
      this.stopping = false;
    }
  }

  /** An endpoint was turned off or on: look now rather than at the next poll. */
  notify(): void {
    this.pending = true;
    this.nap.wake();
  }

  /**
   * Brings flipped endpoints' deliveries in line, a page of endpoints at a time; returns how many
   * endpoints it looked at (0: nothing was left to do).
   */
  async reconcile(): Promise<number> {
    const targets = await this.deliveries.endpointsToRepark(ENDPOINTS_PER_LOOK);
    for (const target of targets) {
      if (this.stopping) break;
      await this.walk(target);
    }
    return targets.length;
  }

  /** Walks the endpoint's deliveries; a stale walk (flipped again meanwhile) leaves it listed for the next look. */
  private async walk(target: ReparkTarget): Promise<void> {
    for (let after = ""; ; ) {
      const last = await this.deliveries.reparkChunk(target, after, this.settings.chunk);
      if (last === "stale" || this.stopping) return;
      if (last === null) break;
      after = last;
    }
    await this.deliveries.finishRepark(target);
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.pending = false;
      let looked = 0;
      try {
        looked = await this.reconcile();
      } catch (error) {
        this.log.error({ err: error }, "could not park or unpark webhook deliveries");
      }
      // Something was done: look again at once, until a look finds nothing.
      if (this.running && looked === 0 && !this.pending) await this.nap.sleep(this.settings.pollMs);
    }
  }
}
