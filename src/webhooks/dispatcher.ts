import type { Clock } from "../domain/clock.js";
import { batchLoader } from "../db/batch-loader.js";
import type { GroupCommit } from "../db/group-commit.js";
import type { EventsRepository } from "../db/repositories/events.js";
import type { DeliveryLease, WebhookDeliveriesRepository, WebhookDeliveryRow, WebhookOutcome } from "../db/repositories/webhook-deliveries.js";
import type { WebhookEndpointRow, WebhookEndpointsRepository } from "../db/repositories/webhook-endpoints.js";
import { ClaimLoop } from "../delivery/claim-loop.js";
import { KeyedSemaphore, Semaphore } from "../delivery/semaphore.js";
import { workerId } from "../delivery/worker-id.js";
import type { Metrics } from "../metrics.js";
import type { SealedBox } from "../services/sealed-box.js";
import { openSigningSecrets, type SigningSecrets } from "../services/webhook-secrets.js";
import type { PostResult } from "./http-client.js";
import { DeliveryParking } from "./parking.js";
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

/**
 * How long one read of an endpoint serves the requests after it: a change to the endpoint (its
 * URL, secret, enabled, deleted) reaches deliveries already claimed within this long.
 */
export const ENDPOINT_REREAD_MS = 100;

/** A delivery claimed and not finished: the row as claimed, and the lease that claim holds it under. */
interface Claimed {
  row: WebhookDeliveryRow;
  lease: DeliveryLease;
}

/** An endpoint's opened signing secrets (current first), or null when no key opens them. */
type SecretsOf = (endpoint: WebhookEndpointRow) => string[] | null;

/** Room kept in `locked_by` after the dispatcher's id for a claim's counter (`:` and up to 11 base-36 digits). */
export const LEASE_COUNTER_LENGTH = 12;

/** A delivery claimed twice (re-queued and claimed again while an attempt was in flight) is held twice, once per lease. */
const heldKey = (lease: DeliveryLease) => `${lease.lease} ${lease.endpointId} ${lease.eventId}`;

/**
 * Sends queued webhook deliveries (DESIGN.md §10). Claims due deliveries in batches under a
 * lease, posts them concurrently with a cap per endpoint and a cap overall, and commits each
 * outcome through group commit. An endpoint that holds its share of deliveries is left out of
 * further claims, what a claim brings beyond an endpoint's share is given back at once, and what
 * waits behind an endpoint's own cap takes no room from the others, so a slow or dead receiver
 * only ever ties up its own share and the others' events keep flowing. Delivery is
 * at-least-once: a dispatcher that dies mid-attempt leaves the delivery to be claimed again when
 * its lease ends, with the same webhook-id.
 */
export class WebhookDispatcher {
  readonly id = workerId({ role: "webhooks", reserve: LEASE_COUNTER_LENGTH });
  /** Numbers this dispatcher's claims: each claim's lease is `<id>:<count>`. */
  private claimCount = 0;
  /**
   * The endpoint whose deliveries alone filled the last claim's first query up to its share: a
   * backlog, likely first in line again next time, when the first query asks for no more than
   * it may take rather than a batch of which most would be given back.
   */
  private backlogged: string | null = null;
  /** Deliveries claimed and not finished, by lease and key. */
  private readonly held = new Map<string, DeliveryLease>();
  private readonly heldPerEndpoint = new Map<string, number>();
  /** Each endpoint's in-flight cap; an endpoint with nothing in flight or waiting has no entry. */
  private readonly endpointSlots: KeyedSemaphore;
  private readonly slots: Semaphore;
  private readonly claims: ClaimLoop<Claimed>;
  /** Moves disabled endpoints' deliveries out of the claim index, and back when enabled. */
  private readonly parking: DeliveryParking;
  private readonly loadEndpoint = batchLoader((ids: string[]) => this.deps.endpoints.findMany(ids));
  /**
   * The latest read of each endpoint the dispatcher holds deliveries for, and when it was made (see
   * currentEndpoint); `at: Infinity` for a view served until it is dropped (markGone).
   */
  private readonly endpointReads = new Map<string, { at: number; endpoint: Promise<WebhookEndpointRow | undefined> }>();

  constructor(
    private readonly deps: DispatcherDependencies,
    private readonly settings: DispatcherSettings,
  ) {
    this.slots = new Semaphore(settings.concurrency);
    this.endpointSlots = new KeyedSemaphore(settings.maxInFlightPerEndpoint);
    this.parking = new DeliveryParking(deps.deliveries, deps.log);
    this.claims = new ClaimLoop({
      claim: (limit) => this.claim(limit),
      work: (batch) => this.send(batch),
      held: () => this.busy,
      // Keeps the leases of what is held but not finished (a queue behind a slow endpoint).
      renewLeases: () => deps.deliveries.renewLeases([...this.held.values()], deps.clock.now() + settings.leaseMs),
      capacity: this.capacity,
      batchSize: settings.batchSize,
      pollMs: settings.pollMs,
      leaseMs: settings.leaseMs,
      log: deps.log,
      messages: { claimFailed: "webhook claim failed", renewFailed: "could not renew webhook delivery leases" },
    });
  }

  start(): void {
    this.claims.start();
    this.parking.start();
  }

  /**
   * Finishes the requests in flight and records their outcomes, gives back the deliveries still
   * waiting for a slot (another worker claims them at once), then stops.
   */
  async stop(): Promise<void> {
    await Promise.all([this.claims.stop(), this.parking.stop()]);
  }

  /**
   * Endpoints this dispatcher keeps in-flight slots for: those with a request in flight or waiting
   * for a slot, and no others (a worker runs for months, over endpoints created and deleted).
   */
  get endpointsWithSlots(): number {
    return this.endpointSlots.size;
  }

  /** Deliveries were queued, or an endpoint was turned off or on. */
  notify(): void {
    this.claims.notify();
    this.parking.notify();
  }

  /**
   * Parks or unparks the deliveries of endpoints turned off or on, then claims one batch and sends
   * it, outcomes committed; returns how many deliveries it claimed.
   */
  async tick(): Promise<number> {
    while ((await this.parking.reconcile()) > 0) {
      // until a look finds nothing left to park or unpark
    }
    const claimed = await this.claim(this.settings.batchSize);
    await this.send(claimed);
    return claimed.length;
  }

  /**
   * Claims up to `limit` due deliveries, each under this claim's own lease, and no more of an
   * endpoint's than its share (`heldLimit`). Due deliveries come oldest first over every endpoint,
   * so one endpoint's backlog can fill a whole claim: what it may not hold is given back at once,
   * and the claim is made again without that endpoint (it holds its share now), until the batch is
   * full or nothing else is due. So the others' due deliveries are reached whatever sits before them.
   */
  private async claim(limit: number): Promise<Claimed[]> {
    const kept: Claimed[] = [];
    try {
      for (let first = true; kept.length < limit; first = false) {
        const now = this.deps.clock.now();
        const lease = `${this.id}:${(++this.claimCount).toString(36)}`;
        const saturated = [...this.heldPerEndpoint].filter(([, count]) => count >= this.heldLimit).map(([id]) => id);
        const backlogRoom = first && this.backlogged !== null && !saturated.includes(this.backlogged) ? this.heldLimit - this.holds(this.backlogged) : Infinity;
        const wanted = Math.min(limit - kept.length, backlogRoom);
        const rows = await this.deps.deliveries.claim({ now, limit: wanted, leaseUntil: now + this.settings.leaseMs, dispatcherId: lease, excludeEndpoints: saturated });
        const beyond: DeliveryLease[] = [];
        for (const row of rows) {
          const claimed = { row, lease: { endpointId: row.endpoint_id, eventId: row.event_id, lease } };
          if (this.holds(row.endpoint_id) >= this.heldLimit) beyond.push(claimed.lease);
          else kept.push(this.hold(claimed));
        }
        if (first) {
          const lead = rows[0]?.endpoint_id;
          this.backlogged = rows.length === wanted && lead !== undefined && this.holds(lead) >= this.heldLimit ? lead : null;
        }
        // Should this fail, they are claimed again when their lease runs out.
        if (beyond.length > 0) await this.deps.deliveries.release(beyond).catch((error: unknown) => this.deps.log.error({ err: error }, "could not release webhook deliveries"));
        // Nothing more is due. Otherwise each round keeps some, or leaves out of the next one
        // more endpoint that has its share now.
        if (rows.length < wanted) break;
      }
    } catch (error) {
      // What is held already is sent; the failure is the claim loop's to log.
      if (kept.length === 0) throw error;
      this.deps.log.error({ err: error }, "webhook claim failed");
    }
    return kept;
  }

  private holds(endpointId: string): number {
    return this.heldPerEndpoint.get(endpointId) ?? 0;
  }

  private hold(claimed: Claimed): Claimed {
    this.held.set(heldKey(claimed.lease), claimed.lease);
    this.heldPerEndpoint.set(claimed.row.endpoint_id, this.holds(claimed.row.endpoint_id) + 1);
    return claimed;
  }

  private letGo(lease: DeliveryLease): void {
    if (!this.held.delete(heldKey(lease))) return;
    const left = (this.heldPerEndpoint.get(lease.endpointId) ?? 1) - 1;
    if (left > 0) this.heldPerEndpoint.set(lease.endpointId, left);
    else {
      this.heldPerEndpoint.delete(lease.endpointId);
      this.endpointReads.delete(lease.endpointId);
    }
    // Down to what its slots send at once: claim for it now, while those keep its slots busy. Not
    // sooner, so a backlogged endpoint is claimed for a few at a time rather than one by one.
    if (left === this.settings.maxInFlightPerEndpoint) this.claims.notify();
  }

  /**
   * An endpoint holding this many deliveries is left out of claims (docs/webhooks.md: twice its
   * in-flight cap): enough to keep its slots busy while the next claim runs, and a dead endpoint
   * ties up no more than that.
   */
  private get heldLimit(): number {
    return this.settings.maxInFlightPerEndpoint * 2;
  }

  /**
   * What counts against `capacity`: of each endpoint's deliveries, only as many as it may have in
   * flight. The rest of its share waits for its own slots, not for anything the other endpoints
   * need, so saturated endpoints, however many, never take the room the others are claimed into.
   */
  private get busy(): number {
    let busy = 0;
    for (const count of this.heldPerEndpoint.values()) busy += Math.min(count, this.settings.maxInFlightPerEndpoint);
    return busy;
  }

  /** Busy deliveries held at most: the requests in flight, plus two batches claimed ahead. */
  private get capacity(): number {
    return this.settings.concurrency + 2 * this.settings.batchSize;
  }

  private async send(batch: Claimed[]): Promise<void> {
    if (batch.length === 0) return;
    const rows = batch.map(({ row }) => row);
    let endpoints: Map<string, WebhookEndpointRow>;
    let events: Map<string, unknown>;
    try {
      // Read as each request reads it (currentEndpoint), so the read serves the requests that
      // follow at once, and only deliveries that wait longer for a slot read again.
      const ids = [...new Set(rows.map((row) => row.endpoint_id))];
      const read = await Promise.all(ids.map(async (id) => [id, await this.currentEndpoint(id)] as const));
      endpoints = new Map(read.flatMap(([id, endpoint]) => (endpoint ? [[id, endpoint] as const] : [])));
      events = await this.deps.events.findMany(rows.filter((row) => row.payload === null).map((row) => row.event_id));
    } catch (error) {
      this.deps.log.error({ err: error }, "could not load claimed webhook deliveries");
      for (const { lease } of batch) this.letGo(lease); // their leases run out and another claim retries them
      return;
    }
    const unsent: DeliveryLease[] = [];
    const secretsOf = this.secretsOpener();
    await Promise.all(
      batch.map(async (claimed) => {
        const { row, lease } = claimed;
        const endpoint = endpoints.get(row.endpoint_id);
        // Deleted, or disabled since the claim: its deliveries wait (disabled) or are gone (deleted).
        if (!endpoint?.enabled) {
          unsent.push(lease);
          return this.letGo(lease);
        }
        const body = row.payload ?? (events.has(row.event_id) ? JSON.stringify(events.get(row.event_id)) : null);
        try {
          if (!(await this.deliver(claimed, endpoint, body, secretsOf))) unsent.push(lease);
        } catch (error) {
          this.deps.log.error({ err: error, webhook_id: row.endpoint_id, event_id: row.event_id }, "webhook delivery failed unexpectedly");
        } finally {
          this.letGo(lease);
        }
      }),
    );
    if (unsent.length > 0) await this.deps.deliveries.release(unsent).catch((error: unknown) => this.deps.log.error({ err: error }, "could not release webhook deliveries"));
  }

  /**
   * Opens endpoints' signing secrets for one batch, once per endpoint rather than per attempt.
   * Null for an endpoint whose secrets no key opens (SECRET_KEY changed without
   * SECRET_KEY_PREVIOUS), logged once here; each of its deliveries records `secret_unavailable`.
   */
  private secretsOpener(): SecretsOf {
    const opened = new Map<string, string[] | null>();
    return (endpoint) => {
      // By the sealed secrets, not the endpoint: the one read before a request may have been rotated since the claim.
      const sealed = `${endpoint.id} ${endpoint.secret} ${endpoint.previous_secret ?? ""}`;
      if (!opened.has(sealed)) opened.set(sealed, this.openSecrets(endpoint));
      return opened.get(sealed) ?? null;
    };
  }

  /** The current secret, and the previous one while its overlap lasts and a key opens it (openSigningSecrets). */
  private openSecrets(endpoint: WebhookEndpointRow): string[] | null {
    let opened: SigningSecrets;
    try {
      opened = openSigningSecrets(this.deps.secrets, endpoint, this.deps.clock.now());
    } catch (error) {
      this.deps.log.error({ err: error, webhook_id: endpoint.id }, "webhook endpoint's signing secret cannot be opened (SECRET_KEY changed without SECRET_KEY_PREVIOUS?): its deliveries are not sent");
      return null;
    }
    if (opened.previousUnreadable !== undefined) {
      this.deps.log.error({ err: opened.previousUnreadable, webhook_id: endpoint.id }, "webhook endpoint's previous signing secret cannot be opened: deliveries are signed with the current one only");
    }
    return opened.previous === null ? [opened.current] : [opened.current, opened.previous];
  }

  /**
   * Sends one delivery, or records, without a request, why it cannot be sent: its event has no row
   * (`event_missing`), or no key opens its endpoint's secrets, so there is nothing to sign it with
   * (`secret_unavailable`). False when it was not sent (stopping).
   */
  private async deliver({ row, lease }: Claimed, endpoint: WebhookEndpointRow, body: string | null, secretsOf: SecretsOf): Promise<boolean> {
    const secrets = body === null ? null : secretsOf(endpoint);
    if (body === null || secrets === null) {
      await this.record(unsendableOutcome(row, body === null ? "event_missing" : "secret_unavailable", this.deps.clock.now(), lease.lease));
      return true;
    }
    return this.attempt(row, lease, endpoint.id, secretsOf, body);
  }

  /**
   * Sends one delivery and records the outcome; false when it was not sent: stopping, or its
   * endpoint was disabled or deleted while it waited for a slot.
   */
  private async attempt(row: WebhookDeliveryRow, lease: DeliveryLease, endpointId: string, secretsOf: SecretsOf, body: string): Promise<boolean> {
    // Only the HTTP exchange holds the endpoint's and the dispatcher's slots; committing the
    // outcome does not, so a slow group commit never throttles the requests.
    const result = await this.endpointSlots.run(endpointId, () =>
      this.slots.run(async () => {
        if (this.claims.stopping) return null; // given back by send()
        // The endpoint as it is now, not as claimed: nothing goes where it was told not to.
        const endpoint = await this.currentEndpoint(endpointId);
        const secrets = endpoint?.enabled ? secretsOf(endpoint) : null;
        if (!endpoint || secrets === null) return null; // given back by send(): it waits for the endpoint, or goes with it
        const timestamp = Math.floor(this.deps.wallClock.now() / 1000);
        const startedAt = this.deps.clock.now();
        const answer = await this.deps.post(endpoint.url, webhookHeaders(secrets, row.event_id, timestamp, body), body);
        if (answer.status === 410) this.markGone(endpoint);
        return { answer, startedAt };
      }),
    );
    if (result === null) return false;
    const endedAt = Math.max(this.deps.clock.now(), result.startedAt);
    await this.record(outcomeOf(row, result.answer, { startedAt: result.startedAt, at: endedAt }, lease.lease));
    return true;
  }

  /**
   * The endpoint as it is now, to within ENDPOINT_REREAD_MS, read just before a request: while a
   * delivery waited behind a slow receiver, a 410 to another may have disabled the endpoint, or its
   * owner deleted or disabled it, pointed it elsewhere or rotated its secret. One read serves the
   * requests of the next ENDPOINT_REREAD_MS (a backlog's would otherwise cost a query each; reads
   * in one turn share a query), and a 410 drops it at once.
   */
  private currentEndpoint(id: string): Promise<WebhookEndpointRow | undefined> {
    const now = performance.now();
    const read = this.endpointReads.get(id);
    if (read !== undefined && now - read.at < ENDPOINT_REREAD_MS) return read.endpoint;
    const endpoint = this.loadEndpoint(id);
    this.endpointReads.set(id, { at: now, endpoint });
    // A failed read is not kept (a later one may have replaced it meanwhile, and stays).
    endpoint.catch(() => {
      if (this.endpointReads.get(id)?.endpoint === endpoint) this.endpointReads.delete(id);
    });
    return endpoint;
  }

  /**
   * Takes the endpoint for disabled in this dispatcher's view at once, on a 410, before the slot
   * the request held is freed: the database says so only once record() commits the outcome, and
   * meanwhile the deliveries waiting for that slot would read it enabled (from the database, or
   * from a read made before the request that is still served) and each get a 410 of its own,
   * failing rather than waiting as a disabled endpoint's deliveries do. Holding the slot until the
   * commit would not be enough (that earlier read would still be served), and would let a slow
   * group commit throttle requests. The view is kept until the commit (record() drops it), or,
   * should the commit fail, until this dispatcher holds nothing more of the endpoint's.
   */
  private markGone(endpoint: WebhookEndpointRow): void {
    this.endpointReads.set(endpoint.id, { at: Infinity, endpoint: Promise.resolve({ ...endpoint, enabled: false, disabled_reason: "gone" }) });
  }

  /** Commits an attempt's outcome; the writer moves the delivery only while `outcome.lease` still holds it. */
  private async record(outcome: WebhookOutcome): Promise<void> {
    await this.deps.groupCommit.submit(this.deps.deliveries.outcomeWriter, outcome);
    // Committed: the database says the endpoint is disabled, and is read again in place of markGone's view.
    if (outcome.endpoint?.health === "gone") this.endpointReads.delete(outcome.endpointId);
    this.deps.metrics.webhookAttempts.inc({ outcome: outcome.next.state === "pending" ? "retrying" : outcome.next.state });
  }
}

/**
 * What one attempt means (DESIGN.md §10): only a 2xx succeeds; a 3xx is not followed and fails;
 * 410 Gone fails the delivery for good and disables the endpoint; anything else is retried on
 * the schedule, or later when the receiver's Retry-After asks for it.
 */
export function outcomeOf(row: WebhookDeliveryRow, result: PostResult, { startedAt, at }: { startedAt: number; at: number }, lease: string): WebhookOutcome {
  const attempt = row.attempts + 1;
  const succeeded = result.status !== null && result.status >= 200 && result.status < 300;
  const redirect = result.status !== null && result.status >= 300 && result.status < 400;
  const gone = result.status === 410;
  const base = {
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    lease,
    attempt,
    startedAt,
    at,
    status: succeeded ? ("succeeded" as const) : ("failed" as const),
    responseStatus: result.status,
    responseBody: result.body,
    error: redirect ? "redirect_not_followed" : result.error,
    durationMs: result.durationMs,
  };
  if (succeeded) return { ...base, next: { state: "succeeded" }, endpoint: { health: "healthy" } };
  if (gone) return { ...base, next: { state: "failed" }, endpoint: { health: "gone" } };
  return { ...base, ...retriedFailure(attempt, at, result.retryAfter) };
}

/** A failed attempt that is retried on the schedule (until it runs out), and counts against the endpoint's health. */
function retriedFailure(attempt: number, at: number, retryAfter: string | null): Pick<WebhookOutcome, "next" | "endpoint"> {
  const dueAt = nextAttemptAt(attempt, at, retryAfter);
  return {
    next: dueAt === null ? { state: "failed" } : { state: "pending", dueAt },
    endpoint: { health: "failing", disableIfFailingSince: at - DISABLE_AFTER_FAILING_MS },
  };
}

/** Why a delivery could not be sent at all (the attempt's `error`). */
export type UnsendableReason = "secret_unavailable" | "event_missing";

/**
 * What an attempt means that was never made, recorded as a failed attempt so the customer sees it
 * among the endpoint's attempts. `secret_unavailable` waits on the normal schedule for the
 * operator to give back the key that opens the secret, and the endpoint is failing as for any
 * failure: nothing reaches it. `event_missing` can never succeed, so it fails for good, and says
 * nothing about the endpoint (`endpoint: null`): the receiver had no part in it, so it neither
 * starts nor clears `failing_since`.
 */
export function unsendableOutcome(row: WebhookDeliveryRow, reason: UnsendableReason, at: number, lease: string): WebhookOutcome {
  const attempt = row.attempts + 1;
  const base = { endpointId: row.endpoint_id, eventId: row.event_id, lease, attempt, startedAt: at, at, status: "failed" as const, responseStatus: null, responseBody: null, error: reason, durationMs: 0 };
  if (reason === "event_missing") return { ...base, next: { state: "failed" }, endpoint: null };
  return { ...base, ...retriedFailure(attempt, at, null) };
}
