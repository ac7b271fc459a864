import type { Knex } from "knex";
import { UniqueViolation } from "../../domain/errors.js";
import { isUniqueViolation } from "../driver-errors.js";
import type { SealedRow, SealedStore } from "./sealed-store.js";
import type { WebhookDeliveriesRepository } from "./webhook-deliveries.js";
import { paginate, type Page, type PageRequest } from "../pagination.js";
import { parseJson, toNumber, toNumberOrNull } from "../rows.js";
import type { DomainAnnouncement } from "../../domain/domain-events.js";
import type { DomainRecord } from "../../domain/domain-records.js";
import type { DomainStatus } from "../../domain/domain-status.js";
import type { components } from "../../../generated/v1.js";

export type { DomainRecord };
export type DkimAlgorithm = components["schemas"]["DomainDkimKey"]["algorithm"];

/** A DKIM key as stored: the private key sealed (AES-GCM under a key derived from SECRET_KEY). */
export interface StoredDkimKey {
  selector: string;
  algorithm: DkimAlgorithm;
  /** The TXT value published at `<selector>._domainkey.<domain>`. */
  dns_value: string;
  /** The PKCS#8 PEM, sealed: a database dump alone cannot sign mail. */
  private_key: string;
  /** Set on a rotation's new key until it takes over (docs/domains.md#rotating-dkim-keys). */
  pending_since?: number;
}

export interface DomainRow {
  id: string;
  workspace_id: string;
  name: string;
  status: DomainStatus;
  return_path_domain: string;
  dkim_keys: StoredDkimKey[];
  records: DomainRecord[];
  /** Tracking defaults of mail from this domain; null follows the workspace's. */
  track_opens: boolean | null;
  track_clicks: boolean | null;
  /** The host name serving this domain's tracking links, CNAMEd to this server. */
  tracking_domain: string | null;
  created_at: number;
  verified_at: number | null;
  last_checked_at: number | null;
  /** When a check first found a required record of this (once verified) domain missing. */
  failing_since: number | null;
  /** When a worker looks its records up again by itself; null: only verifyDomain does. */
  next_check_at: number | null;
  /**
   * Moved on by every write of what the domain is (its records, keys, status and settings): what
   * a writer read is what it writes over, or it reads again (`writeOver`).
   */
  version: number;
}

/** What a writer read, as far as `writeOver` needs it: the domain as of that version. */
export type DomainVersion = Pick<DomainRow, "version">;

export type DomainSettings = Partial<Pick<DomainRow, "track_opens" | "track_clicks" | "tracking_domain" | "records">>;

export interface DomainCheck {
  status: DomainStatus;
  records: DomainRecord[];
  /** Changed when the check ended a key rotation. */
  dkim_keys: StoredDkimKey[];
  verified_at: number | null;
  /** Kept as it was by a check that got no answer at all. */
  last_checked_at: number | null;
  failing_since: number | null;
  next_check_at: number | null;
}

/** A domain due for an automatic check, as `dueForCheck` finds it. */
export interface DueDomain {
  workspace_id: string;
  id: string;
  next_check_at: number;
}

export const UQ_DOMAIN_NAME = "uq_domains__workspace_name";

/** Domains belong to a workspace and serve both its environments: every query is scoped by workspace. */
export class DomainsRepository implements SealedStore {
  constructor(
    private readonly knex: Knex,
    private readonly webhooks: WebhookDeliveriesRepository,
  ) {}

  /** Throws UniqueViolation(UQ_DOMAIN_NAME) when the workspace already has the name. */
  async insert(row: DomainRow): Promise<void> {
    try {
      await this.knex("domains").insert({ ...row, dkim_keys: JSON.stringify(row.dkim_keys), records: JSON.stringify(row.records) });
    } catch (error) {
      // The id is fresh; (workspace_id, name) is the table's only other unique key.
      if (isUniqueViolation(error)) throw new UniqueViolation(UQ_DOMAIN_NAME);
      throw error;
    }
  }

  async find(workspaceId: string, id: string): Promise<DomainRow | undefined> {
    return normalise(await this.knex("domains").where({ workspace_id: workspaceId, id }).first());
  }

  /** `name` as stored: lower-case ASCII. */
  async findByName(workspaceId: string, name: string): Promise<DomainRow | undefined> {
    return normalise(await this.knex("domains").where({ workspace_id: workspaceId, name }).first());
  }

  /** How many domains the workspace has (for LIMITS.domainsPerWorkspace). */
  async countForWorkspace(workspaceId: string): Promise<number> {
    const row = (await this.knex("domains").where({ workspace_id: workspaceId }).count({ n: "*" }).first()) as { n: number | string } | undefined;
    return toNumber(row?.n ?? 0);
  }

  async list(workspaceId: string, filters: { status?: DomainStatus | undefined }, page: PageRequest): Promise<Page<DomainRow>> {
    const query = this.knex("domains").where({ workspace_id: workspaceId });
    if (filters.status !== undefined) query.andWhere("status", filters.status);
    return paginate<DomainRow, DomainRow>(query, "id", (row) => row.id, page, "desc", (row) => normalise(row)!);
  }

  /** Whether a row was deleted (false: not this workspace's, or already gone). */
  async delete(workspaceId: string, id: string): Promise<boolean> {
    return (await this.knex("domains").where({ workspace_id: workspaceId, id }).delete()) === 1;
  }

  /**
   * Saves a check over the domain as it was read (`writeOver`); false when anything wrote it
   * since (the check is stale: make it again). The check's announcements (domain events) are
   * queued for webhook endpoints in the same transaction, so each is sent exactly when the
   * change is saved, and once.
   */
  async saveCheck(workspaceId: string, id: string, read: DomainVersion, check: DomainCheck, announcements: readonly DomainAnnouncement[]): Promise<boolean> {
    return this.knex.transaction(async (trx) => {
      if (!(await writeOver(trx, workspaceId, id, read, { ...check, records: JSON.stringify(check.records), dkim_keys: JSON.stringify(check.dkim_keys) }))) return false;
      for (const announcement of announcements) await this.webhooks.fanOutToWorkspace(trx, workspaceId, announcement);
      return true;
    });
  }

  /** Writes new keys and records over the domain as it was read (`writeOver`). */
  async replaceKeys(workspaceId: string, id: string, read: DomainVersion, next: { dkim_keys: StoredDkimKey[]; records: DomainRecord[] }): Promise<boolean> {
    return writeOver(this.knex, workspaceId, id, read, { dkim_keys: JSON.stringify(next.dkim_keys), records: JSON.stringify(next.records) });
  }

  /** Writes tracking settings, and the records they change, over the domain as it was read (`writeOver`). */
  async updateSettings(workspaceId: string, id: string, read: DomainVersion, settings: DomainSettings): Promise<boolean> {
    const { records, ...rest } = settings;
    return writeOver(this.knex, workspaceId, id, read, { ...rest, ...(records ? { records: JSON.stringify(records) } : {}) });
  }

  /**
   * Domains of every workspace whose automatic check is due, oldest first. Not scoped by
   * workspace: the worker checks them all, as it claims every workspace's jobs.
   */
  async dueForCheck(now: number, limit: number): Promise<DueDomain[]> {
    const rows = (await this.knex("domains")
      .where("next_check_at", "<=", now)
      .orderBy("next_check_at")
      .limit(limit)
      .select("workspace_id", "id", "next_check_at")) as Array<{ workspace_id: string; id: string; next_check_at: number | string }>;
    return rows.map((row) => ({ ...row, next_check_at: toNumber(row.next_check_at) }));
  }

  /**
   * Takes a due check for this worker by moving its time on to `until` (a lease: a worker that
   * dies mid-check leaves it due again then). A compare-and-set on `next_check_at`, so of two
   * workers that found the same domain due only one checks it, on either database. The version
   * stays: a lease changes nothing a check is made from, so a verifyDomain under way still saves.
   */
  async claimCheck(domain: DueDomain, until: number): Promise<boolean> {
    const claimed = await this.knex("domains").where({ workspace_id: domain.workspace_id, id: domain.id, next_check_at: domain.next_check_at }).update({ next_check_at: until });
    return claimed === 1;
  }

  /** Every workspace's domains with their sealed DKIM private keys, in id order (SealedStore). */
  async sealedPage(after: string | null, limit: number): Promise<SealedRow[]> {
    const query = this.knex("domains").orderBy("id").limit(limit).select("id", "dkim_keys");
    if (after !== null) query.where("id", ">", after);
    const rows = (await query) as Array<{ id: string; dkim_keys: unknown }>;
    return rows.map((row) => ({ key: row.id, sealed: parseJson<StoredDkimKey[]>(row.dkim_keys).map((key) => key.private_key) }));
  }

  /** Replaces the domain's sealed private keys if its keys are still those `row` read (SealedStore). */
  async replaceSealed(row: SealedRow, next: Array<string | null>): Promise<boolean> {
    const current = (await this.knex("domains").where({ id: row.key }).first("workspace_id", "dkim_keys", "version")) as { workspace_id: string; dkim_keys: string; version: number | string } | undefined;
    if (!current) return false;
    const keys = parseJson<StoredDkimKey[]>(current.dkim_keys);
    if (keys.length !== row.sealed.length || keys.some((key, i) => key.private_key !== row.sealed[i])) return false;
    const resealed = keys.map((key, i) => ({ ...key, private_key: next[i] ?? key.private_key }));
    // A writeOver too: a check that read the keys before would otherwise put them back sealed
    // under the old SECRET_KEY, which the operator is about to drop.
    return writeOver(this.knex, current.workspace_id, row.key, { version: toNumber(current.version) }, { dkim_keys: JSON.stringify(resealed) });
  }

  /** How many domains are in each status, over every workspace (for the `mailroom_domains` gauge). */
  async countByStatus(): Promise<Partial<Record<DomainStatus, number>>> {
    const rows = (await this.knex("domains").groupBy("status").select("status").count({ n: "*" })) as Array<{ status: DomainStatus; n: number | string }>;
    return Object.fromEntries(rows.map((row) => [row.status, toNumber(row.n)]));
  }
}

/**
 * Writes `changes` if the domain is still at the version `read` saw, moving it on; false when
 * another write came first or the domain is gone (read it again). Every write of what the domain
 * is goes through here: comparing only the columns one writer changes let it undo another's change
 * to the rest. On MariaDB the UPDATE's WHERE reads the latest committed row even under REPEATABLE
 * READ, and a write always changes the version, so affected rows is exactly 1 or 0.
 */
async function writeOver(db: Knex, workspaceId: string, id: string, read: DomainVersion, changes: Record<string, unknown>): Promise<boolean> {
  const updated = await db("domains")
    .where({ workspace_id: workspaceId, id, version: read.version })
    .update({ ...changes, version: read.version + 1 });
  return updated === 1;
}

/** A row as the driver returns it: JSON in TEXT columns, BIGINT possibly as strings. */
function normalise(raw: unknown): DomainRow | undefined {
  if (!raw) return undefined;
  const row = raw as Record<string, unknown>;
  return {
    ...(row as unknown as DomainRow),
    dkim_keys: parseJson<StoredDkimKey[]>(row.dkim_keys),
    records: parseJson<DomainRecord[]>(row.records),
    // SQLite stores booleans as 0/1.
    track_opens: row.track_opens == null ? null : Boolean(row.track_opens),
    track_clicks: row.track_clicks == null ? null : Boolean(row.track_clicks),
    tracking_domain: (row.tracking_domain as string | null | undefined) ?? null,
    created_at: toNumber(row.created_at),
    verified_at: toNumberOrNull(row.verified_at),
    last_checked_at: toNumberOrNull(row.last_checked_at),
    failing_since: toNumberOrNull(row.failing_since),
    next_check_at: toNumberOrNull(row.next_check_at),
    version: toNumber(row.version),
  };
}
