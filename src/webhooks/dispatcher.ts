import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Clock } from "../domain/clock.js";
import type { GroupCommit } from "../db/group-commit.js";
import type { EventsRepository } from "../db/repositories/events.js";
import type { DeliveryKey, WebhookDeliveriesRepository, WebhookDeliveryRow, WebhookOutcome } from "../db/repositories/webhook-deliveries.js";
import type { WebhookEndpointRow, WebhookEndpointsRepository } from "../db/repositories/webhook-endpoints.js";
import { ClaimLoop } from "../delivery/claim-loop.js";
import { Semaphore } from "../delivery/semaphore.js";
import type { Metrics } from "../metrics.js";
import type { SealedBox } from "../services/sealed-box.js";
import type { PostResult } from "./http-client.js";
import { DISABLE_AFTER_FAILING_MS, nextAttemptAt } from "./retry-schedule.js";
import { webhookHeaders } from "./signing.js";

export interface DispatcherSettings {
  /** Deliveries claimed per query. */
  batchSize: number;
  pollMs: number;
  leaseMs: number;
  /** HTTP requests in flight at once, over every endpoint (WEBHOOK_CONCURRENCY). */
  concurrency: number;
  /** HTTP requests in flight at once to one endpoint (WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT). */
  maxInFlightPerEndpoint: number;
}

export interface DispatcherDependencies {
  deliveries: WebhookDeliveriesRepository;
  endpoints: WebhookEndpointsRepository;
  events: EventsRepository;
  groupCommit: GroupCommit;
  metrics: Metrics;
  /** Opens the endpoints' sealed secrets. */
  secrets: SealedBox;
  post(url: string, headers: Record<string, string>, body: string): Promise<PostResult>;
  /** Schedules, leases and the 5-day rule: injectable so tests move through hours in seconds. */
  clock: Clock;
  /**
   * The `webhook-timestamp`: the receiver compares it with its own clock to refuse replays, so it
   * is the wall clock's even when scheduling runs on a test clock.
   */
  wallClock: Clock;
  log: { error(obj: object, msg: string): void };
}

const keyOf = (row: { endpoint_id: string; event_id: string }) => `${row.endpoint_id} ${row.event_id}`;

/**
 * Sends queued webhook deliveries (DESIGN.md §10). Claims due deliveries in batches under a
 * lease, posts them concurrently with a cap per endpoint and a cap overall, and commits each
 * outcome through group commit. An endpoint that holds its share of deliveries is left out of
 * further claims, so a slow or dead receiver only ever ties up its own share and the others'
 * events keep flowing. Delivery is at-least-once: a dispatcher that dies mid-attempt leaves the
 * delivery to be claimed again when its lease ends, with the same webhook-id.
 */
export class WebhookDispatcher {
  readonly id = `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}-webhooks`;
  /** Set by stop(): deliveries still waiting for a slot are given back rather than sent. */
  private stopping = false;
  /** Deliveries claimed and not finished, by key. */
  private readonly held = new Map<string, DeliveryKey>();
  private readonly heldPerEndpoint = new Map<string, number>();
  private readonly endpointSlots = new Map<string, Semaphore>();
  private readonly slots: Semaphore;
  private readonly claims: ClaimLoop<WebhookDeliveryRow>;

  constructor(
    private readonly deps: DispatcherDependencies,
    private readonly settings: DispatcherSettings,
  ) {
    this.slots = new Semaphore(settings.concurrency);
    this.claims = new ClaimLoop({
      claim: (limit) => this.claim(limit),
      work: (rows) => this.send(rows),
      held: () => this.held.size,
      // Keeps the leases of what is held but not finished (a queue behind a slow endpoint).
      renewLeases: () => deps.deliveries.renewLeases(this.id, [...this.held.values()], deps.clock.now() + settings.leaseMs),
      capacity: this.capacity,
      batchSize: settings.batchSize,
      pollMs: settings.pollMs,
      leaseMs: settings.leaseMs,
      log: deps.log,
      messages: { claimFailed: "webhook claim failed", renewFailed: "could not renew webhook delivery leases" },
    });
  }

  start(): void {
    this.stopping = false; // started again after stop(): send rather than give back
    this.claims.start();
  }

  /**
   * Finishes the requests in flight and records their outcomes, gives back the deliveries still
   * waiting for a slot (another worker claims them at once), then stops.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    try {
      await this.claims.stop();
    } finally {
      this.stopping = false;
    }
  }

  notify(): void {
    this.claims.notify();
  }

  /** Claims one batch and sends it, outcomes committed; returns how many deliveries it claimed. */
  async tick(): Promise<number> {
    const claimed = await this.claim(this.settings.batchSize);
    await this.send(claimed);
    return claimed.length;
  }

  private async claim(limit: number): Promise<WebhookDeliveryRow[]> {
    const now = this.deps.clock.now();
    const saturated = [...this.heldPerEndpoint].filter(([, count]) => count >= this.heldLimit).map(([id]) => id);
    const claimed = await this.deps.deliveries.claim({ now, limit, leaseUntil: now + this.settings.leaseMs, dispatcherId: this.id, excludeEndpoints: saturated });
    for (const row of claimed) {
      this.held.set(keyOf(row), { endpointId: row.endpoint_id, eventId: row.event_id });
      this.heldPerEndpoint.set(row.endpoint_id, (this.heldPerEndpoint.get(row.endpoint_id) ?? 0) + 1);
    }
    return claimed;
  }

  private letGo(row: WebhookDeliveryRow): void {
    if (!this.held.delete(keyOf(row))) return;
    const left = (this.heldPerEndpoint.get(row.endpoint_id) ?? 1) - 1;
    if (left > 0) this.heldPerEndpoint.set(row.endpoint_id, left);
    else this.heldPerEndpoint.delete(row.endpoint_id);
    // The endpoint may be claimed for again: claim now, while what it still holds keeps its slots busy.
    if (left === this.heldLimit - 1) this.claims.notify();
  }

  /**
   * An endpoint holding this many deliveries is left out of claims: enough to keep its slots busy
   * while the next claim runs, not enough to fill the dispatcher (see `capacity`).
   */
  private get heldLimit(): number {
    return Math.max(this.settings.maxInFlightPerEndpoint * 2, this.settings.batchSize);
  }

  /** Deliveries held at most: the requests in flight, plus room for a saturated endpoint's share and a batch for the others. */
  private get capacity(): number {
    return this.settings.concurrency + 2 * this.settings.batchSize;
  }

  private async send(rows: WebhookDeliveryRow[]): Promise<void> {
    if (rows.length === 0) return;
    let endpoints: Map<string, WebhookEndpointRow>;
    let events: Map<string, unknown>;
    try {
      endpoints = await this.deps.endpoints.findMany([...new Set(rows.map((row) => row.endpoint_id))]);
      events = await this.deps.events.findMany(rows.filter((row) => row.payload === null).map((row) => row.event_id));
    } catch (error) {
      this.deps.log.error({ err: error }, "could not load claimed webhook deliveries");
      for (const row of rows) this.letGo(row); // their leases run out and another claim retries them
      return;
    }
    const unsent: DeliveryKey[] = [];
    // Opened once per batch and endpoint, not per attempt.
    const secrets = new Map<string, string[]>();
    const secretsOf = (endpoint: WebhookEndpointRow): string[] => {
      let opened = secrets.get(endpoint.id);
      if (!opened) {
        const now = this.deps.clock.now();
        opened = [this.deps.secrets.open(endpoint.secret)];
        if (endpoint.previous_secret !== null && (endpoint.previous_secret_expires_at ?? 0) > now) opened.push(this.deps.secrets.open(endpoint.previous_secret));
        secrets.set(endpoint.id, opened);
      }
      return opened;
    };
    await Promise.all(
      rows.map(async (row) => {
        const endpoint = endpoints.get(row.endpoint_id);
        // Deleted, or disabled since the claim: its deliveries wait (disabled) or are gone (deleted).
        if (!endpoint?.enabled) {
          unsent.push({ endpointId: row.endpoint_id, eventId: row.event_id });
          return this.letGo(row);
        }
        const body = row.payload ?? (events.has(row.event_id) ? JSON.stringify(events.get(row.event_id)) : null);
        try {
          if (body === null) throw new Error(`event ${row.event_id} has no row`);
          if (!(await this.attempt(row, endpoint, secretsOf(endpoint), body))) unsent.push({ endpointId: row.endpoint_id, eventId: row.event_id });
        } catch (error) {
          this.deps.log.error({ err: error, webhook_id: row.endpoint_id, event_id: row.event_id }, "webhook delivery failed unexpectedly");
        } finally {
          this.letGo(row);
        }
      }),
    );
    if (unsent.length > 0) await this.deps.deliveries.release(this.id, unsent).catch((error: unknown) => this.deps.log.error({ err: error }, "could not release webhook deliveries"));
  }

  private slotFor(endpointId: string): Semaphore {
    let slot = this.endpointSlots.get(endpointId);
    if (!slot) {
      slot = new Semaphore(this.settings.maxInFlightPerEndpoint);
      this.endpointSlots.set(endpointId, slot);
    }
    return slot;
  }

  /** Sends one delivery and records the outcome; false when it was not sent (stopping). */
  private async attempt(row: WebhookDeliveryRow, endpoint: WebhookEndpointRow, secrets: string[], body: string): Promise<boolean> {
    const sentAt = this.deps.clock.now();
    // Only the HTTP exchange holds the endpoint's and the dispatcher's slots; committing the
    // outcome does not, so a slow group commit never throttles the requests.
    const result = await this.slotFor(endpoint.id).run(() =>
      this.slots.run(async () => {
        if (this.stopping) return null;
        const timestamp = Math.floor(this.deps.wallClock.now() / 1000);
        return this.deps.post(endpoint.url, webhookHeaders(secrets, row.event_id, timestamp, body), body);
      }),
    );
    if (result === null) return false;
    const at = Math.max(this.deps.clock.now(), sentAt);
    const outcome = outcomeOf(row, result, at, this.id);
    await this.deps.groupCommit.submit(this.deps.deliveries.outcomeWriter, outcome);
    this.deps.metrics.webhookAttempts.inc({ outcome: outcome.next.state === "pending" ? "retrying" : outcome.next.state });
    return true;
  }
}

/**
 * What one attempt means (DESIGN.md §10): only a 2xx succeeds; a 3xx is not followed and fails;
 * 410 Gone fails the delivery for good and disables the endpoint; anything else is retried on
 * the schedule, or later when the receiver's Retry-After asks for it.
 */
export function outcomeOf(row: WebhookDeliveryRow, result: PostResult, at: number, dispatcherId: string): WebhookOutcome {
  const attempt = row.attempts + 1;
  const succeeded = result.status !== null && result.status >= 200 && result.status < 300;
  const redirect = result.status !== null && result.status >= 300 && result.status < 400;
  const gone = result.status === 410;
  const base = {
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    dispatcherId,
    attempt,
    at,
    status: succeeded ? ("succeeded" as const) : ("failed" as const),
    responseStatus: result.status,
    responseBody: result.body,
    error: redirect ? "redirect_not_followed" : result.error,
    durationMs: result.durationMs,
  };
  if (succeeded) return { ...base, next: { state: "succeeded" }, endpoint: { health: "healthy" } };
  if (gone) return { ...base, next: { state: "failed" }, endpoint: { health: "gone" } };
  const dueAt = nextAttemptAt(attempt, at, result.retryAfter);
  return {
    ...base,
    next: dueAt === null ? { state: "failed" } : { state: "pending", dueAt },
    endpoint: { health: "failing", disableIfFailingSince: at - DISABLE_AFTER_FAILING_MS },
  };
}
