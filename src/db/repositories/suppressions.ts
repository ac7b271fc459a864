import type { Knex } from "knex";
import { toIso } from "../../domain/clock.js";
import type { Environment, Scope } from "../../domain/environments.js";
import { UniqueViolation } from "../../domain/errors.js";
import { newId } from "../../domain/ids.js";
import { isUniqueViolation } from "../driver-errors.js";
import { inLockOrder } from "../lock-order.js";
import { paginate, type Page, type PageRequest } from "../pagination.js";
import { rowBytes, statementChunks, toNumber } from "../rows.js";
import type { components } from "../../../generated/v1.js";

type Suppression = components["schemas"]["Suppression"];
export type SuppressionReason = components["schemas"]["SuppressionReason"];

export interface SuppressionRow {
  id: string;
  workspace_id: string;
  environment: Environment;
  /** Lower-cased: a suppression matches an address whatever its capitalisation. */
  email: string;
  reason: SuppressionReason;
  message_id: string | null;
  detail: string | null;
  created_at: number;
}

/** A suppression to add; its id is made on insert. */
export type NewSuppression = Omit<SuppressionRow, "id">;

export interface SuppressionFilters {
  reason?: SuppressionReason | undefined;
  /** Lower-cased. */
  email?: string | undefined;
}

export const UQ_SUPPRESSION_EMAIL = "uq_suppressions__email";

// Rows per statement at most, under SQLite's bound-variable limit (statementChunks keeps their bytes under MySQL's packet).
const CHUNK = 200;

/** Suppressions belong to one (workspace, environment): every query takes that scope. */
export class SuppressionsRepository {
  constructor(private readonly knex: Knex) {}

  /** Throws UniqueViolation(UQ_SUPPRESSION_EMAIL) when the address is already suppressed. */
  async insert(row: SuppressionRow): Promise<void> {
    try {
      await this.knex("suppressions").insert({ ...row, email: row.email.toLowerCase() });
    } catch (error) {
      // The id is fresh; (workspace_id, environment, email) is the table's only other unique key.
      if (isUniqueViolation(error)) throw new UniqueViolation(UQ_SUPPRESSION_EMAIL);
      throw error;
    }
  }

  /**
   * Adds the rows whose address is not suppressed yet and silently keeps an existing suppression
   * of the same address (its reason, message and date stay: the first cause is the useful one).
   * Used for hard bounces inside the worker's change transaction, where a concurrent worker may
   * suppress the same address: the conflict is settled by the unique key, not by a read first.
   * A no-op update on the duplicate rather than MySQL's INSERT IGNORE, which would also turn
   * other errors (truncation, a missing workspace) into warnings.
   */
  async insertMissing(trx: Knex.Transaction, rows: NewSuppression[]): Promise<Set<string>> {
    const unique = new Map<string, SuppressionRow>();
    for (const row of rows) {
      const email = row.email.toLowerCase();
      const key = `${row.workspace_id}\u0000${row.environment}\u0000${email}`;
      if (!unique.has(key)) unique.set(key, { ...row, email, id: newId("suppression", row.created_at) });
    }
    // In one order whatever the caller's: two batches of the same addresses listed in opposite
    // orders would otherwise take their rows' locks in opposite orders and deadlock on MySQL.
    const all = inLockOrder(unique).map(([, row]) => row);
    for (const chunk of statementChunks(all, CHUNK, rowBytes)) {
      await trx("suppressions")
        .insert(chunk)
        .onConflict(["workspace_id", "environment", "email"])
        .merge({ email: trx.ref("suppressions.email") });
    }
    return new Set(all.map((row) => row.id));
  }

  /**
   * Suppresses the addresses not suppressed yet, in one transaction; answers every one's row
   * (keyed by lower-cased address) and which of them this call added: those whose stored row is
   * the one it inserted, not one another transaction committed after its first read.
   */
  async addMissing(scope: Scope, rows: readonly NewSuppression[]): Promise<{ stored: Map<string, SuppressionRow>; added: Set<string> }> {
    const emails = rows.map((row) => row.email);
    return this.knex.transaction(async (trx) => {
      const before = await this.findByEmails(scope, emails, trx);
      const inserted = await this.insertMissing(trx, rows.filter((row) => !before.has(row.email.toLowerCase())));
      // A locking read sees the latest committed rows at any isolation level. Mailroom's own
      // connections run READ COMMITTED (db/connection.ts), where a plain read would too; under
      // InnoDB's default REPEATABLE READ it would read the first read's snapshot and miss a row
      // another request committed since, so this does not lean on that setting.
      const stored = await this.findByEmails(scope, emails, trx, { locking: true });
      return { stored, added: new Set([...stored].filter(([, row]) => inserted.has(row.id)).map(([email]) => email)) };
    });
  }

  /** The scope's suppressions of these addresses, keyed by lower-cased address. */
  async findByEmails(scope: Scope, emails: readonly string[], trx: Knex | Knex.Transaction = this.knex, { locking = false } = {}): Promise<Map<string, SuppressionRow>> {
    const found = new Map<string, SuppressionRow>();
    const wanted = [...new Set(emails.map((email) => email.toLowerCase()))];
    for (let i = 0; i < wanted.length; i += CHUNK) {
      const query = trx("suppressions")
        .where({ workspace_id: scope.workspaceId, environment: scope.environment })
        .whereIn("email", wanted.slice(i, i + CHUNK));
      const rows = (await (locking ? query.forShare() : query)) as SuppressionRow[];
      for (const row of rows) found.set(row.email, normalise(row));
    }
    return found;
  }

  async find(scope: Scope, id: string): Promise<SuppressionRow | undefined> {
    const row = (await this.knex("suppressions").where({ workspace_id: scope.workspaceId, environment: scope.environment, id }).first()) as SuppressionRow | undefined;
    return row && normalise(row);
  }

  async list(scope: Scope, filters: SuppressionFilters, page: PageRequest): Promise<Page<Suppression>> {
    const query = this.knex("suppressions").where({ workspace_id: scope.workspaceId, environment: scope.environment });
    if (filters.reason !== undefined) query.where("reason", filters.reason);
    if (filters.email !== undefined) query.where("email", filters.email.toLowerCase());
    return paginate<SuppressionRow, Suppression>(query, "id", (row) => row.id, page, "desc", (row) => SuppressionsRepository.toWire(normalise(row)));
  }

  /** Whether a row was deleted (false: not this scope's, or already gone). */
  async delete(scope: Scope, id: string): Promise<boolean> {
    return (await this.knex("suppressions").where({ workspace_id: scope.workspaceId, environment: scope.environment, id }).delete()) === 1;
  }

  static toWire(row: SuppressionRow): Suppression {
    return {
      id: row.id,
      object: "suppression",
      environment: row.environment,
      email: row.email,
      reason: row.reason,
      message_id: row.message_id,
      detail: row.detail,
      created_at: toIso(row.created_at),
    };
  }
}

function normalise(row: SuppressionRow): SuppressionRow {
  return { ...row, created_at: toNumber(row.created_at) };
}
