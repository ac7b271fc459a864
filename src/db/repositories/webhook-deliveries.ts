import type { Knex } from "knex";
import { toIso, toIsoOrNull } from "../../domain/clock.js";
import type { DomainAnnouncement } from "../../domain/domain-events.js";
import type { Environment } from "../../domain/environments.js";
import { newId } from "../../domain/ids.js";
import type { Dialect, WebhookClaim, WebhookDeliveryRow } from "../dialects/dialect.js";
import type { BatchWriter } from "../group-commit.js";
import { paginate, type Page, type PageRequest } from "../pagination.js";
import { insertChunked, queueStats, toNumber, toNumberOrNull } from "../rows.js";
import type { components } from "../../../generated/v1.js";

type WebhookDelivery = components["schemas"]["WebhookDelivery"];
type WebhookAttempt = components["schemas"]["WebhookAttempt"];
type WebhookAttemptStatus = components["schemas"]["WebhookAttemptStatus"];

export type { WebhookClaim, WebhookDeliveryRow };

/** A delivery is named by its endpoint and its event (the event id is the `webhook-id`). */
export interface DeliveryKey {
  endpointId: string;
  eventId: string;
}

/**
 * A claimed delivery: its key and the lease token its claim wrote into `locked_by`. Each claim
 * takes a fresh token, so a delivery re-queued (redelivered, replayed) and claimed again, even by
 * the same dispatcher, is held under a new lease, and what was done under the old one no longer
 * moves, renews or releases it.
 */
export interface DeliveryLease extends DeliveryKey {
  lease: string;
}

/** One attempt (an HTTP request, or one that could not be made) and what follows from it, as the dispatcher decided. */
export interface WebhookOutcome extends DeliveryKey {
  /** The lease the attempt was made under: the delivery row is only changed while it still holds it. */
  lease: string;
  attempt: number;
  /** When the request began: the attempt's `created_at`. */
  startedAt: number;
  /** When it ended (its answer, or its failure): the next attempt is scheduled from here. */
  at: number;
  status: WebhookAttemptStatus;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
  durationMs: number;
  next: { state: "pending"; dueAt: number } | { state: "succeeded" | "failed" };
  /** What the attempt says about the endpoint; null when nothing (the receiver had no part in it). */
  endpoint: { health: "healthy" } | { health: "gone" } | { health: "failing"; disableIfFailingSince: number } | null;
}

/** An endpoint whose deliveries are to be parked (it is disabled) or unparked, as of its `epoch`-th flip. */
export interface ReparkTarget {
  endpointId: string;
  parked: boolean;
  epoch: number;
}

export interface AttemptFilters {
  eventId?: string | undefined;
  status?: WebhookAttemptStatus | undefined;
}

const CHUNK = 200;

/**
 * The durable webhook queue (one row per endpoint and event) and the attempts made. Fan-out runs
 * inside the transactions that write events; outcomes are written in group-committed batches.
 */
export class WebhookDeliveriesRepository {
  constructor(
    private readonly knex: Knex,
    private readonly dialect: Dialect,
  ) {}

  /**
   * Queues these events for every enabled endpoint of their environment that subscribes to their
   * type: one INSERT … SELECT per chunk, in the caller's transaction, so an event and its
   * deliveries commit together (the outbox pattern, as for delivery jobs).
   */
  async fanOut(trx: Knex.Transaction, eventIds: readonly string[]): Promise<void> {
    for (let i = 0; i < eventIds.length; i += CHUNK) {
      const ids = eventIds.slice(i, i + CHUNK);
      await trx.raw(
        `INSERT INTO webhook_deliveries (endpoint_id, event_id, state, attempts, due_at, event_created_at, created_at)
         SELECT DISTINCT s.endpoint_id, e.id, 'pending', 0, e.created_at, e.created_at, e.created_at
           FROM events e
           JOIN webhook_subscriptions s ON s.workspace_id = e.workspace_id AND s.environment = e.environment AND s.event_type IN (e.type, '*')
           JOIN webhook_endpoints w ON w.id = s.endpoint_id AND w.enabled = ?
          WHERE e.id IN (${ids.map(() => "?").join(", ")})`,
        [true, ...ids],
      );
    }
  }

  /**
   * Queues a workspace-wide event (a domain's) for every enabled endpoint of the workspace, in
   * either environment, that subscribes to its type; each gets its environment's payload. In the
   * caller's transaction, as fanOut. The event has no row of `events`: its delivery carries it.
   */
  async fanOutToWorkspace(trx: Knex.Transaction, workspaceId: string, announcement: DomainAnnouncement): Promise<void> {
    const environments = Object.keys(announcement.payloads) as Environment[];
    const { id, type, createdAt } = announcement;
    await trx.raw(
      `INSERT INTO webhook_deliveries (endpoint_id, event_id, state, attempts, due_at, event_created_at, payload, created_at)
       SELECT DISTINCT s.endpoint_id, ?, 'pending', 0, ?, ?, CASE s.environment ${environments.map(() => "WHEN ? THEN ?").join(" ")} END, ?
         FROM webhook_subscriptions s
         JOIN webhook_endpoints w ON w.id = s.endpoint_id AND w.enabled = ?
        WHERE s.workspace_id = ? AND s.event_type IN (?, '*')`,
      [id, createdAt, createdAt, ...environments.flatMap((environment) => [environment, announcement.payloads[environment]]), createdAt, true, workspaceId, type],
    );
  }

  /** Due deliveries leased to the dispatcher, oldest first (events' order). */
  async claim(claim: WebhookClaim): Promise<WebhookDeliveryRow[]> {
    const rows = (await this.dialect.claimWebhookDeliveries(this.knex, claim)).map(normalise);
    return rows.sort((a, b) => a.due_at - b.due_at || (a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0));
  }

  /** Extends the leases still held (a delivery re-queued or claimed again meanwhile is left alone). */
  async renewLeases(leases: readonly DeliveryLease[], leaseUntil: number): Promise<void> {
    for (let i = 0; i < leases.length; i += CHUNK) {
      await this.knex("webhook_deliveries").whereIn(["endpoint_id", "event_id", "locked_by"], leases.slice(i, i + CHUNK).map(leaseTuple)).update({ locked_until: leaseUntil });
    }
  }

  /**
   * Gives back leased deliveries that were not attempted (a dispatcher stopping, or claimed beyond
   * an endpoint's share), claimable again at once; one held under another lease by now is left alone.
   */
  async release(leases: readonly DeliveryLease[]): Promise<void> {
    for (let i = 0; i < leases.length; i += CHUNK) {
      await this.knex("webhook_deliveries").whereIn(["endpoint_id", "event_id", "locked_by"], leases.slice(i, i + CHUNK).map(leaseTuple)).update({ locked_by: null, locked_until: null });
    }
  }

  /**
   * Records attempts, moves their deliveries on and keeps the endpoints' health, for a whole batch
   * in a few multi-row statements. Endpoints are written first: the fan-out in a message
   * transaction reads them too, and taking them first keeps the two from waiting on each other
   * in opposite orders on MySQL.
   */
  readonly outcomeWriter: BatchWriter<WebhookOutcome, void> = {
    name: "webhook-outcome",
    write: async (trx, outcomes) => {
      await this.writeEndpointHealth(trx, outcomes);
      await insertChunked(
        trx,
        "webhook_attempts",
        outcomes.map((o) => ({
          id: newId("webhookAttempt", o.startedAt),
          endpoint_id: o.endpointId,
          event_id: o.eventId,
          attempt: o.attempt,
          status: o.status,
          response_status: o.responseStatus,
          response_body: o.responseBody,
          error: o.error,
          duration_ms: o.durationMs,
          created_at: o.startedAt,
        })),
      );
      for (let i = 0; i < outcomes.length; i += CHUNK) {
        const chunk = outcomes.slice(i, i + CHUNK);
        const held = (await trx("webhook_deliveries")
          .whereIn(["endpoint_id", "event_id"], chunk.map((o) => [o.endpointId, o.eventId]))
          .forUpdate()
          .select("*")) as WebhookDeliveryRow[];
        const byKey = new Map(held.map((row) => [`${row.endpoint_id} ${row.event_id}`, normalise(row)]));
        const rows: WebhookDeliveryRow[] = [];
        for (const o of chunk) {
          const row = byKey.get(`${o.endpointId} ${o.eventId}`);
          // Gone (endpoint deleted), or re-queued by a redelivery or replay meanwhile (and perhaps
          // claimed again, under another lease): that one counts now.
          if (!row || row.locked_by !== o.lease) continue;
          rows.push({
            ...row,
            state: o.next.state,
            attempts: o.attempt,
            due_at: o.next.state === "pending" ? o.next.dueAt : row.due_at,
            locked_by: null,
            locked_until: null,
            last_attempt_at: o.at,
          });
        }
        if (rows.length > 0) {
          await trx("webhook_deliveries").insert(rows).onConflict(["endpoint_id", "event_id"]).merge(["state", "attempts", "due_at", "locked_by", "locked_until", "last_attempt_at"]);
        }
      }
      return outcomes.map(() => undefined);
    },
  };

  /**
   * Keeps each endpoint's health as its attempts in the batch, taken in order, leave it: a success
   * clears `failing_since`, a failure starts it (and disables the endpoint once it is old enough),
   * and a 410 disables it at once. So what counts is the current run of failures, those after the
   * batch's last success: none (the last verdict is a success) clears `failing_since`; after a
   * success it begins at that run's first failure, whatever it was before; with no success in the
   * batch it goes on from what is stored, or begins at the batch's first failure. Only that run
   * can disable the endpoint for failing: one that has just succeeded is not disabled for the
   * failures before. An attempt that says nothing of the endpoint is passed over.
   */
  private async writeEndpointHealth(trx: Knex.Transaction, outcomes: readonly WebhookOutcome[]): Promise<void> {
    const runs = new Map<string, { succeeded: boolean; failures: Array<{ at: number; disableIfFailingSince: number }> }>();
    const gone = new Map<string, number>();
    for (const o of [...outcomes].sort((a, b) => a.at - b.at)) {
      if (o.endpoint === null) continue;
      const run = runs.get(o.endpointId) ?? { succeeded: false, failures: [] };
      runs.set(o.endpointId, run);
      if (o.endpoint.health === "healthy") Object.assign(run, { succeeded: true, failures: [] });
      else if (o.endpoint.health === "failing") run.failures.push({ at: o.at, disableIfFailingSince: o.endpoint.disableIfFailingSince });
      else gone.set(o.endpointId, o.at);
    }
    // First, so that a 410 names the reason even when the run of failures before it is 5 days old.
    for (const [endpointId, at] of gone) {
      await trx("webhook_endpoints")
        .where({ id: endpointId, enabled: true })
        .update({ enabled: false, disabled_reason: "gone", disabled_at: at, updated_at: at, parking_epoch: trx.raw("parking_epoch + 1") });
    }
    const healthy = [...runs].filter(([, run]) => run.succeeded && run.failures.length === 0).map(([id]) => id);
    if (healthy.length > 0) await trx("webhook_endpoints").whereIn("id", healthy).whereNotNull("failing_since").update({ failing_since: null });
    for (const [endpointId, { succeeded, failures }] of runs) {
      const [first, last] = [failures[0], failures.at(-1)];
      if (first === undefined || last === undefined) continue;
      const endpoint = trx("webhook_endpoints").where({ id: endpointId });
      await (succeeded ? endpoint : endpoint.whereNull("failing_since")).update({ failing_since: first.at });
      await trx("webhook_endpoints")
        .where({ id: endpointId, enabled: true })
        .andWhere("failing_since", "<=", last.disableIfFailingSince)
        .update({ enabled: false, disabled_reason: "failing", disabled_at: last.at, updated_at: last.at, parking_epoch: trx.raw("parking_epoch + 1") });
    }
  }

  /**
   * Endpoints turned off or on since their deliveries were last parked or unparked to match
   * (src/webhooks/parking.ts): what each is to become, and the flip it answers.
   */
  async endpointsToRepark(limit: number): Promise<ReparkTarget[]> {
    const rows = (await this.knex("webhook_endpoints").whereRaw("parking_epoch <> parked_epoch").orderBy("id").limit(limit).select("id", "enabled", "parking_epoch")) as Array<{
      id: string;
      enabled: boolean | number;
      parking_epoch: number | string;
    }>;
    return rows.map((row) => ({ endpointId: row.id, parked: !row.enabled, epoch: Number(row.parking_epoch) }));
  }

  /**
   * Parks or unparks the endpoint's deliveries after `after` (event id order), up to `limit` of
   * them, in one short transaction; returns the last event id looked at, null when none is left,
   * or "stale" when the endpoint was flipped again (or deleted) since `target` was read. The
   * endpoint row is read FOR SHARE first, so a flip waits for this chunk: a walk answering an
   * older flip can never write after the walk of a newer one has passed by.
   */
  async reparkChunk(target: ReparkTarget, after: string, limit: number): Promise<string | null | "stale"> {
    return this.knex.transaction(async (trx) => {
      const endpoint = (await trx("webhook_endpoints").where({ id: target.endpointId }).forShare().first("parking_epoch")) as { parking_epoch: number | string } | undefined;
      if (!endpoint || Number(endpoint.parking_epoch) !== target.epoch) return "stale";
      const ids = (await trx("webhook_deliveries").where({ endpoint_id: target.endpointId }).andWhere("event_id", ">", after).orderBy("event_id").limit(limit).pluck("event_id")) as string[];
      const last = ids.at(-1);
      if (last === undefined) return null;
      await trx("webhook_deliveries")
        .where({ endpoint_id: target.endpointId })
        .andWhere("event_id", ">", after)
        .andWhere("event_id", "<=", last)
        .andWhere("parked", "<>", target.parked)
        .update({ parked: target.parked });
      return last;
    });
  }

  /** Records that the endpoint's deliveries match the flip `target` answers, unless it was flipped again meanwhile. */
  async finishRepark(target: ReparkTarget): Promise<void> {
    await this.knex("webhook_endpoints").where({ id: target.endpointId, parking_epoch: target.epoch }).update({ parked_epoch: target.epoch });
  }

  async find(key: DeliveryKey): Promise<WebhookDeliveryRow | undefined> {
    const row = (await this.knex("webhook_deliveries").where({ endpoint_id: key.endpointId, event_id: key.eventId }).first()) as WebhookDeliveryRow | undefined;
    return row && normalise(row);
  }

  /**
   * Queues a delivery now with a fresh retry schedule: a new row, or the existing one of the same
   * endpoint and event (so its webhook-id stays the event id). A lease in progress is cut: that
   * attempt is still recorded, but no longer moves the delivery.
   */
  async requeue(key: DeliveryKey, now: number, eventCreatedAt: number, payload: string | null = null): Promise<WebhookDeliveryRow> {
    const row: WebhookDeliveryRow = {
      endpoint_id: key.endpointId,
      event_id: key.eventId,
      state: "pending",
      attempts: 0,
      due_at: now,
      locked_by: null,
      locked_until: null,
      last_attempt_at: null,
      event_created_at: eventCreatedAt,
      payload,
      created_at: now,
    };
    await this.knex("webhook_deliveries").insert(row).onConflict(["endpoint_id", "event_id"]).merge(["state", "attempts", "due_at", "locked_by", "locked_until"]);
    return (await this.find(key))!;
  }

  /**
   * Re-queues, in the events' order, the endpoint's deliveries that failed or are still failing
   * for events created at or after `since`. Returns how many.
   */
  async replayFailed(endpointId: string, since: number, now: number): Promise<number> {
    // Everything re-queued is due at the same instant, so the claim's (due_at, event_id) order
    // is the events' order: event ids sort by creation time.
    return this.knex("webhook_deliveries")
      .where({ endpoint_id: endpointId })
      .andWhere("event_created_at", ">=", since)
      .andWhere((q) => q.where("state", "failed").orWhere((p) => p.where("state", "pending").andWhere("attempts", ">", 0)))
      .update({ state: "pending", attempts: 0, due_at: now, locked_by: null, locked_until: null });
  }

  /**
   * Pending deliveries, those due now, and how long the oldest due one has waited, for /metrics.
   * A disabled endpoint's deliveries are not counted: no dispatcher claims them until it is
   * enabled again, so they would only hold the oldest age up forever.
   */
  async stats(now: number): Promise<{ depth: number; due: number; oldestDueAgeSeconds: number }> {
    const pending = () => this.knex("webhook_deliveries as d").join("webhook_endpoints as w", "w.id", "d.endpoint_id").where({ "d.state": "pending", "d.parked": false, "w.enabled": true });
    const total = (await pending().count({ n: "*" }).first()) as { n: number | string };
    const due = (await pending().andWhere("d.due_at", "<=", now).count({ n: "*" }).min({ oldest: "d.due_at" }).first()) as { n: number | string; oldest: number | string | null };
    return queueStats(total.n, due.n, due.oldest, now);
  }

  /**
   * Removes up to `limit` attempts made before `before`, and settled deliveries last attempted
   * before it (a redelivery queues a new one). Returns how many rows went.
   */
  async pruneBefore(before: number, limit = 1000): Promise<number> {
    const attempts = (await this.knex("webhook_attempts").where("created_at", "<", before).limit(limit).pluck("id")) as string[];
    let removed = await this.deleteAttempts(attempts);
    const settled = (await this.knex("webhook_deliveries")
      .whereIn("state", ["succeeded", "failed"])
      .andWhere("last_attempt_at", "<", before)
      .limit(limit)
      .select("endpoint_id", "event_id")) as Array<{ endpoint_id: string; event_id: string }>;
    for (let i = 0; i < settled.length; i += CHUNK) {
      removed += await this.knex("webhook_deliveries")
        .whereIn(["endpoint_id", "event_id"], settled.slice(i, i + CHUNK).map((row) => [row.endpoint_id, row.event_id]))
        .whereIn("state", ["succeeded", "failed"])
        .delete();
    }
    return removed;
  }

  /**
   * Removes up to about `limit` deliveries and attempts of deleted endpoints (listed by
   * WebhookEndpointsRepository.delete), a chunk per statement, so no statement holds the writer
   * long; an endpoint leaves the list once nothing of it is left. Returns how many rows went: 0
   * when there is nothing (more) to purge.
   */
  async purgeDeleted(limit = 1000): Promise<number> {
    const endpoints = (await this.knex("webhook_endpoint_purges").orderBy("deleted_at").limit(limit).pluck("endpoint_id")) as string[];
    let removed = 0;
    for (const endpointId of endpoints) {
      const room = limit - removed;
      const deliveries = (await this.knex("webhook_deliveries").where({ endpoint_id: endpointId }).limit(room).pluck("event_id")) as string[];
      for (let i = 0; i < deliveries.length; i += CHUNK) removed += await this.knex("webhook_deliveries").where({ endpoint_id: endpointId }).whereIn("event_id", deliveries.slice(i, i + CHUNK)).delete();
      const attempts = (await this.knex("webhook_attempts").where({ endpoint_id: endpointId }).limit(room).pluck("id")) as string[];
      removed += await this.deleteAttempts(attempts);
      if (deliveries.length < room && attempts.length < room) await this.knex("webhook_endpoint_purges").where({ endpoint_id: endpointId }).delete();
      if (removed >= limit) break;
    }
    return removed;
  }

  /** Deletes these attempts, a chunk per statement; returns how many went. */
  private async deleteAttempts(ids: readonly string[]): Promise<number> {
    let removed = 0;
    for (let i = 0; i < ids.length; i += CHUNK) removed += await this.knex("webhook_attempts").whereIn("id", ids.slice(i, i + CHUNK)).delete();
    return removed;
  }

  async listAttempts(endpointId: string, filters: AttemptFilters, page: PageRequest): Promise<Page<WebhookAttempt>> {
    const query = this.knex("webhook_attempts").where({ endpoint_id: endpointId });
    if (filters.eventId !== undefined) query.andWhere("event_id", filters.eventId);
    if (filters.status !== undefined) query.andWhere("status", filters.status);
    return paginate<AttemptRow, WebhookAttempt>(query, "id", (row) => row.id, page, "desc", attemptToWire);
  }

  static toWire(row: WebhookDeliveryRow): WebhookDelivery {
    return {
      object: "webhook_delivery",
      webhook_id: row.endpoint_id,
      event_id: row.event_id,
      status: row.state,
      attempts: row.attempts,
      next_attempt_at: row.state === "pending" ? toIso(row.due_at) : null,
      last_attempt_at: toIsoOrNull(row.last_attempt_at),
    };
  }
}

interface AttemptRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  attempt: number;
  status: WebhookAttemptStatus;
  response_status: number | null;
  response_body: string | null;
  error: string | null;
  duration_ms: number;
  created_at: number;
}

function attemptToWire(row: AttemptRow): WebhookAttempt {
  return {
    id: row.id,
    object: "webhook_attempt",
    webhook_id: row.endpoint_id,
    event_id: row.event_id,
    attempt: Number(row.attempt),
    status: row.status,
    response_status: row.response_status === null ? null : Number(row.response_status),
    response_body: row.response_body,
    error: row.error,
    duration_ms: Number(row.duration_ms),
    created_at: toIso(toNumber(row.created_at)),
  };
}

const leaseTuple = (lease: DeliveryLease) => [lease.endpointId, lease.eventId, lease.lease];

function normalise(row: WebhookDeliveryRow): WebhookDeliveryRow {
  return {
    ...row,
    attempts: Number(row.attempts),
    due_at: toNumber(row.due_at),
    locked_until: toNumberOrNull(row.locked_until),
    last_attempt_at: toNumberOrNull(row.last_attempt_at),
    event_created_at: toNumber(row.event_created_at),
    created_at: toNumber(row.created_at),
  };
}
