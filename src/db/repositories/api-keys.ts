import type { Knex } from "knex";
import { toIso, toIsoOrNull } from "../../domain/clock.js";
import type { Actor, Environment, Permission, Scope } from "../../domain/environments.js";
import { isRestricted, NO_RESTRICTIONS, type KeyRestrictions } from "../../domain/key-restrictions.js";
import { batchLoader } from "../batch-loader.js";
import type { BatchWriter } from "../group-commit.js";
import { inLockOrder } from "../lock-order.js";
import { paginate, type Page, type PageRequest } from "../pagination.js";
import { toNumber, toNumberOrNull } from "../rows.js";
import type { components } from "../../../generated/v1.js";

type ApiKey = components["schemas"]["ApiKey"];

export interface ApiKeyRow {
  id: string;
  workspace_id: string;
  environment: Environment;
  name: string;
  permission: Permission;
  redacted_key: string;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
  /** The address of the request that stamped last_used_at. */
  last_used_ip: string | null;
  created_at: number;
  /** Who created it; null for bootstrap's and sign-up's keys, and keys older than the record. */
  created_by: Actor | null;
  restrictions: KeyRestrictions;
}

/** What updateApiKey may change. */
export interface ApiKeyChanges {
  name?: string;
  restrictions?: KeyRestrictions;
}

export interface SecretRow {
  digest: string;
  api_key_id: string;
  redacted_key: string;
  expires_at: number | null;
  created_at: number;
}

/** A key found by one of its secrets, with that secret's own expiry (rotation overlap). */
export interface KeyBySecret {
  key: ApiKeyRow;
  digest: string;
  secretExpiresAt: number | null;
}

/** last_used_at is kept to the minute: a write per request would cost more than it tells. */
export const LAST_USED_RESOLUTION_MS = 60_000;

export class ApiKeysRepository {
  /** Stamps last_used_at, and the address used from, for a batch of keys in one statement per distinct key. */
  readonly touchWriter: BatchWriter<{ keyId: string; now: number; ip: string | null }, void> = {
    name: "api-key-touch",
    write: async (trx, items) => {
      const latest = new Map<string, { now: number; ip: string | null }>();
      for (const { keyId, now, ip } of items) if (now >= (latest.get(keyId)?.now ?? 0)) latest.set(keyId, { now, ip });
      // By id, not in arrival order: two batches could otherwise lock the same keys in opposite orders.
      for (const [id, { now, ip }] of inLockOrder(latest)) {
        await trx("api_keys")
          .where({ id })
          .andWhere((q) => q.whereNull("last_used_at").orWhere("last_used_at", "<", now - LAST_USED_RESOLUTION_MS))
          .update({ last_used_at: now, last_used_ip: ip });
      }
      return items.map(() => undefined);
    },
  };

  constructor(private readonly knex: Knex) {}

  /** Stores a key with its first secret, in one transaction: a key whose secret failed to store would be listed yet never authenticate. */
  async insert(key: ApiKeyRow, secret: SecretRow): Promise<void> {
    await this.knex.transaction(async (trx) => {
      await trx("api_keys").insert(toStored(key));
      await trx("api_key_secrets").insert(secret);
    });
  }

  /**
   * The key a secret digest belongs to. Every request authenticates, so lookups arriving in the
   * same turn of the event loop share one query (one statement instead of one per request). The
   * query runs after every lookup it answers was asked: none sees older data than its own.
   */
  findBySecretDigest(digest: string): Promise<KeyBySecret | undefined> {
    return this.secretsByDigest(digest);
  }

  private readonly secretsByDigest = batchLoader(async (digests: string[]) => {
    const rows = (await this.knex("api_key_secrets as s")
      .join("api_keys as k", "k.id", "s.api_key_id")
      .whereIn("s.digest", digests)
      .select("k.*", "s.digest as secret_digest", "s.expires_at as secret_expires_at")) as Array<StoredKey & { secret_digest: string; secret_expires_at: number | null }>;
    const found = new Map<string, KeyBySecret>();
    for (const { secret_digest, secret_expires_at, ...key } of rows) {
      found.set(secret_digest, { key: normalise(key), digest: secret_digest, secretExpiresAt: toNumberOrNull(secret_expires_at) });
    }
    return found;
  });

  async find(scope: Scope, id: string): Promise<ApiKeyRow | undefined> {
    const row = (await this.knex("api_keys").where({ id, workspace_id: scope.workspaceId, environment: scope.environment }).first()) as StoredKey | undefined;
    return row && normalise(row);
  }

  async list(scope: Scope, page: PageRequest): Promise<Page<ApiKey>> {
    const query = this.knex("api_keys").where({ workspace_id: scope.workspaceId, environment: scope.environment });
    return paginate<StoredKey, ApiKey>(query, "id", (row) => row.id, page, "desc", (row) => ApiKeysRepository.toWire(normalise(row)));
  }

  /** Whether this call revoked the key (false: it was revoked already, or is not in the scope). */
  async revoke(scope: Scope, id: string, now: number): Promise<boolean> {
    const updated = await this.knex("api_keys")
      .where({ id, workspace_id: scope.workspaceId, environment: scope.environment })
      .whereNull("revoked_at")
      .update({ revoked_at: now });
    return updated > 0;
  }

  /** Renames the key or replaces its restrictions; a revoked key is left as it is. */
  async update(scope: Scope, id: string, changes: ApiKeyChanges): Promise<void> {
    const columns: Partial<StoredKey> = {};
    if (changes.name !== undefined) columns.name = changes.name;
    if (changes.restrictions !== undefined) columns.restrictions = storedRestrictions(changes.restrictions);
    await this.knex("api_keys").where({ id, workspace_id: scope.workspaceId, environment: scope.environment }).whereNull("revoked_at").update(columns);
  }

  /**
   * Adds a new secret and caps every older one at `previousExpiresAt`, atomically. False, and
   * nothing changed, when the key was revoked meanwhile: its new secret would never work.
   */
  async rotate(keyId: string, secret: SecretRow, previousExpiresAt: number): Promise<boolean> {
    return this.knex.transaction<boolean>(async (trx) => {
      // The key's row first: it locks the key, so a second rotation at once waits here and then
      // caps this one's secret too. Capping first, two rotations each capped only the secrets
      // that existed when they began, and left both new ones working for good, one of them
      // shown to no one.
      const locked = await trx("api_keys").where({ id: keyId }).whereNull("revoked_at").update({ redacted_key: secret.redacted_key });
      if (locked === 0) return false;
      await trx("api_key_secrets")
        .where({ api_key_id: keyId })
        .andWhere((q) => q.whereNull("expires_at").orWhere("expires_at", ">", previousExpiresAt))
        .update({ expires_at: previousExpiresAt });
      await trx("api_key_secrets").insert(secret);
      return true;
    });
  }

  static toWire(row: ApiKeyRow): ApiKey {
    return {
      id: row.id,
      object: "api_key",
      name: row.name,
      environment: row.environment,
      permission: row.permission,
      redacted_key: row.redacted_key,
      created_at: toIso(row.created_at),
      created_by: row.created_by,
      expires_at: toIsoOrNull(row.expires_at),
      last_used_at: toIsoOrNull(row.last_used_at),
      last_used_ip: row.last_used_ip ?? null,
      revoked_at: toIsoOrNull(row.revoked_at),
      restrictions: row.restrictions,
    };
  }
}

/** The row as stored: restrictions as JSON text, null when the key has none; the creator in two columns. */
type StoredKey = Omit<ApiKeyRow, "restrictions" | "created_by"> & { restrictions: string | null; created_by_type: Actor["type"] | null; created_by_id: string | null };

function storedRestrictions(restrictions: KeyRestrictions): string | null {
  return isRestricted(restrictions) ? JSON.stringify(restrictions) : null;
}

function toStored({ created_by, ...key }: ApiKeyRow): StoredKey {
  return { ...key, restrictions: storedRestrictions(key.restrictions), created_by_type: created_by?.type ?? null, created_by_id: created_by?.id ?? null };
}

function normalise({ created_by_type, created_by_id, ...row }: StoredKey): ApiKeyRow {
  return {
    ...row,
    created_by: created_by_type !== null && created_by_id !== null ? { type: created_by_type, id: created_by_id } : null,
    restrictions: row.restrictions === null ? NO_RESTRICTIONS : { ...NO_RESTRICTIONS, ...(JSON.parse(row.restrictions) as Partial<KeyRestrictions>) },
    created_at: toNumber(row.created_at),
    expires_at: toNumberOrNull(row.expires_at),
    revoked_at: toNumberOrNull(row.revoked_at),
    last_used_at: toNumberOrNull(row.last_used_at),
  };
}
