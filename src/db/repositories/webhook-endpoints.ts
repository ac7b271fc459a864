import type { Knex } from "knex";
import { toIso, toIsoOrNull } from "../../domain/clock.js";
import type { Environment, Scope } from "../../domain/environments.js";
import type { WebhookEventType } from "../../domain/events.js";
import { paginate, type Page, type PageRequest } from "../pagination.js";
import { parseJson, toNumber, toNumberOrNull } from "../rows.js";
import type { components } from "../../../generated/v1.js";
import type { SealedRow, SealedStore } from "./sealed-store.js";

type Webhook = components["schemas"]["Webhook"];
export type WebhookDisabledReason = components["schemas"]["WebhookDisabledReason"];

/** The longest `url` the column holds (`webhook_endpoints.url` is VARCHAR(2048), as the contract's WebhookUrl). */
export const WEBHOOK_URL_MAX_LENGTH = 2048;

export interface WebhookEndpointRow {
  id: string;
  workspace_id: string;
  environment: Environment;
  url: string;
  description: string | null;
  /** null: every event type, including types added later. */
  event_types: WebhookEventType[] | null;
  enabled: boolean;
  disabled_reason: WebhookDisabledReason | null;
  disabled_at: number | null;
  failing_since: number | null;
  /** Sealed with the "webhook-secrets" box; only services and the dispatcher open it. */
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: number | null;
  created_at: number;
  updated_at: number;
}

export type WebhookEndpointPatch = Partial<Omit<WebhookEndpointRow, "id" | "workspace_id" | "environment" | "created_at">>;

/** The subscription row that stands for "every event type". */
const ALL_TYPES = "*";

/** Webhook endpoints belong to one (workspace, environment): every tenant query takes that scope. */
export class WebhookEndpointsRepository implements SealedStore {
  constructor(private readonly knex: Knex) {}

  async insert(row: WebhookEndpointRow): Promise<void> {
    await this.knex.transaction(async (trx) => {
      await trx("webhook_endpoints").insert(toDbRow(row));
      await this.subscribe(trx, row);
    });
  }

  async find(scope: Scope, id: string): Promise<WebhookEndpointRow | undefined> {
    const row = (await this.knex("webhook_endpoints").where({ workspace_id: scope.workspaceId, environment: scope.environment, id }).first()) as DbRow | undefined;
    return row && fromDbRow(row);
  }

  /** Endpoints by id, whatever their tenant: for the dispatcher, which works for every tenant. */
  async findMany(ids: readonly string[]): Promise<Map<string, WebhookEndpointRow>> {
    const found = new Map<string, WebhookEndpointRow>();
    for (let i = 0; i < ids.length; i += 200) {
      const rows = (await this.knex("webhook_endpoints").whereIn("id", ids.slice(i, i + 200))) as DbRow[];
      for (const row of rows) found.set(row.id, fromDbRow(row));
    }
    return found;
  }

  async list(scope: Scope, page: PageRequest): Promise<Page<Webhook>> {
    const query = this.knex("webhook_endpoints").where({ workspace_id: scope.workspaceId, environment: scope.environment });
    return paginate<DbRow, Webhook>(query, "id", (row) => row.id, page, "desc", (row) => WebhookEndpointsRepository.toWire(fromDbRow(row)));
  }

  /** Applies `patch` and returns the endpoint as it now is (undefined: not this scope's). */
  async update(scope: Scope, id: string, patch: WebhookEndpointPatch): Promise<WebhookEndpointRow | undefined> {
    return this.knex.transaction(async (trx) => {
      const values = toDbRow(patch);
      // Turning it off or on moves its queued deliveries out of or back into the claim index (src/webhooks/parking.ts).
      if (patch.enabled !== undefined) values.parking_epoch = trx.raw("parking_epoch + 1");
      const updated = await updateAndRead(trx, scope, id, values);
      if (!updated) return undefined;
      if ("event_types" in patch) {
        await trx("webhook_subscriptions").where({ endpoint_id: id }).delete();
        await this.subscribe(trx, updated);
      }
      return updated;
    });
  }

  /**
   * Makes `secret` (sealed) the endpoint's secret, and the one it replaces the previous until
   * `previousExpiresAt` (null: none), in one statement that takes the replaced secret from the row
   * as it is then, not as read before: rotations made at once apply one after the other (the row's
   * lock on MySQL, the one writer on SQLite), each keeping the secret the one before it stored, so
   * no caller is told a secret that was never stored. Returns the endpoint as it now is
   * (undefined: not this scope's).
   */
  async rotateSecret(scope: Scope, id: string, secret: string, previousExpiresAt: number | null, now: number): Promise<WebhookEndpointRow | undefined> {
    return this.knex.transaction((trx) =>
      updateAndRead(trx, scope, id, {
        // Before `secret`: MySQL assigns left to right, each assignment seeing those before it, so
        // after it this would copy the new secret (SQLite reads the old row for every assignment).
        previous_secret: previousExpiresAt === null ? null : trx.ref("secret"),
        secret,
        previous_secret_expires_at: previousExpiresAt,
        updated_at: now,
      }),
    );
  }

  /**
   * Removes the endpoint with its subscriptions, and lists it for the purge of its deliveries and
   * attempts (WebhookDeliveriesRepository.purgeDeleted), which may be millions of rows. From this
   * commit nothing claims, counts or lists them: those queries join the endpoint.
   */
  async delete(scope: Scope, id: string, now: number): Promise<boolean> {
    return this.knex.transaction(async (trx) => {
      const deleted = await trx("webhook_endpoints").where({ workspace_id: scope.workspaceId, environment: scope.environment, id }).delete();
      if (deleted === 0) return false;
      await trx("webhook_subscriptions").where({ endpoint_id: id }).delete();
      await trx("webhook_endpoint_purges").insert({ endpoint_id: id, deleted_at: now });
      return true;
    });
  }

  /** Every environment's endpoints with their sealed secret and previous secret, in id order (SealedStore). */
  async sealedPage(after: string | null, limit: number): Promise<SealedRow[]> {
    const query = this.knex("webhook_endpoints").orderBy("id").limit(limit).select("id", "secret", "previous_secret");
    if (after !== null) query.where("id", ">", after);
    const rows = (await query) as Array<{ id: string; secret: string; previous_secret: string | null }>;
    return rows.map((row) => ({ key: row.id, sealed: [row.secret, row.previous_secret] }));
  }

  /** Replaces the endpoint's sealed secrets if they are still those `row` read, so a rotation meanwhile wins (SealedStore). */
  async replaceSealed(row: SealedRow, next: Array<string | null>): Promise<boolean> {
    const [secret, previous] = row.sealed;
    const query = this.knex("webhook_endpoints").where({ id: row.key, secret });
    if (previous === null) query.whereNull("previous_secret");
    else query.where({ previous_secret: previous });
    return (await query.update({ secret: next[0] ?? secret, previous_secret: next[1] ?? previous })) === 1;
  }

  private async subscribe(trx: Knex.Transaction, row: WebhookEndpointRow): Promise<void> {
    const types = row.event_types ?? [ALL_TYPES];
    await trx("webhook_subscriptions").insert(types.map((event_type) => ({ endpoint_id: row.id, event_type, workspace_id: row.workspace_id, environment: row.environment })));
  }

  static toWire(row: WebhookEndpointRow): Webhook {
    return {
      id: row.id,
      object: "webhook",
      environment: row.environment,
      url: row.url,
      description: row.description,
      event_types: row.event_types,
      enabled: row.enabled,
      status: row.enabled ? "enabled" : "disabled",
      disabled_reason: row.enabled ? null : row.disabled_reason,
      disabled_at: row.enabled ? null : toIsoOrNull(row.disabled_at),
      failing_since: toIsoOrNull(row.failing_since),
      created_at: toIso(row.created_at),
      updated_at: toIso(row.updated_at),
    };
  }
}

/** Writes `values` (columns) to the scope's endpoint, if any, and reads it back in the same transaction. */
async function updateAndRead(trx: Knex.Transaction, scope: Scope, id: string, values: Record<string, unknown>): Promise<WebhookEndpointRow | undefined> {
  const where = { workspace_id: scope.workspaceId, environment: scope.environment, id };
  if (Object.keys(values).length > 0) await trx("webhook_endpoints").where(where).update(values);
  const row = (await trx("webhook_endpoints").where(where).first()) as DbRow | undefined;
  return row && fromDbRow(row);
}

type DbRow = Omit<WebhookEndpointRow, "event_types" | "enabled"> & { event_types: string | null; enabled: boolean | number };

function toDbRow(row: WebhookEndpointPatch): Record<string, unknown> {
  const { event_types, ...rest } = row;
  return event_types === undefined ? rest : { ...rest, event_types: event_types === null ? null : JSON.stringify(event_types) };
}

function fromDbRow(row: DbRow): WebhookEndpointRow {
  return {
    ...row,
    event_types: row.event_types === null ? null : parseJson<WebhookEventType[]>(row.event_types),
    enabled: Boolean(row.enabled),
    disabled_at: toNumberOrNull(row.disabled_at),
    failing_since: toNumberOrNull(row.failing_since),
    previous_secret_expires_at: toNumberOrNull(row.previous_secret_expires_at),
    created_at: toNumber(row.created_at),
    updated_at: toNumber(row.updated_at),
  };
}
