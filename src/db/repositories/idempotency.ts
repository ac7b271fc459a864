import type { Knex } from "knex";
import { DAY_MS } from "../../domain/clock.js";
import type { Scope } from "../../domain/environments.js";
import type { BatchWriter } from "../group-commit.js";
import { toNumber } from "../rows.js";
import type { SealedRow, SealedStore } from "./sealed-store.js";

export interface IdempotencyRecord {
  fingerprint: string;
  /** The id of the API key or member that claimed the key (an Actor's id); null on keys claimed before it was kept, which match any caller. */
  claimed_by: string | null;
  claim_token: string;
  /**
   * `unkept`: answered, but the answer was too large to keep (IdempotencyService.complete);
   * `removed`: answered, and the answer was removed at `answer_expires_at` (content retention).
   * Both have a null response.
   */
  state: "running" | "done" | "unkept" | "removed";
  response_status: number | null;
  response: string | null;
  /** The answer's Location, kept beside the sealed answer so that it outlives it (an id, no content). */
  response_location: string | null;
  locked_until: number;
  /** When the key is forgotten: its whole window (IDEMPOTENCY_RETENTION_HOURS). */
  expires_at: number;
  /** When its answer goes, if before the key: the workspace's content retention (docs/retention.md). */
  answer_expires_at: number | null;
}

/** What a claim found: the record now stored, and whether this claim took it over from an attempt that never answered. */
export interface ClaimedRecord extends IdempotencyRecord {
  resumed: boolean;
}

export interface ClaimItem {
  scope: Scope;
  key: string;
  fingerprint: string;
  /** The caller's Actor id: only the caller who claimed a key may have its answer, or take it over. */
  claimedBy: string;
  claimToken: string;
  now: number;
  lockedUntil: number;
  expiresAt: number;
}

export interface CompleteItem {
  scope: Scope;
  key: string;
  claimToken: string;
  status: number;
  /** The sealed answer; null when it is too large to keep. */
  response: string | null;
  /** The answer's Location header, if any. */
  location: string | null;
  /**
   * Keep the answer (not the key) no longer than the workspace's content retention
   * (docs/retention.md): set only when answers may outlive a day, the shortest retention, since
   * only then can they.
   */
  boundedByContentRetention: boolean;
}

/** The most bytes of answers one sealedPage holds (more only when a single answer is larger). */
const SEALED_PAGE_BYTES = 32 * 1024 * 1024;

/** A sealed value's leading characters: its format marker, then (base64) its 12-byte IV and 16-byte tag. */
const SEALED_PREFIX_CHARS = 64;

export class IdempotencyRepository implements SealedStore {
  /**
   * Claims keys atomically: insert-if-absent, then read what is there. The caller owns the key
   * when the stored claim_token is its own. A crashed request's stale claim (past locked_until,
   * still running) is taken over by a retry of the same request from the same caller (`resumed`),
   * never by a different one, which is told the key was reused; an expired record is replaced. So is, at once, a
   * finished one whose answer was too large to keep (`unkept`), by a retry of the same request
   * (`resumed`: it answers what the first attempt stored).
   */
  readonly claimWriter: BatchWriter<ClaimItem, ClaimedRecord> = {
    name: "idempotency-claim",
    write: async (trx, items) => {
      const results: ClaimedRecord[] = [];
      for (const item of items) {
        const where = { workspace_id: item.scope.workspaceId, environment: item.scope.environment, idempotency_key: item.key };
        const claim = { fingerprint: item.fingerprint, claimed_by: item.claimedBy, claim_token: item.claimToken, state: "running", response_status: null, response: null, response_location: null, locked_until: item.lockedUntil, created_at: item.now, expires_at: item.expiresAt, answer_expires_at: null };
        // Insert-if-absent first, then lock only rows that exist: on MySQL an UPDATE or locking
        // read of a missing row takes a gap lock, and two claims of one new key then deadlock.
        await trx("idempotency_keys").insert({ ...where, ...claim }).onConflict(["workspace_id", "environment", "idempotency_key"]).ignore();
        // A locking read: a plain one reads the transaction's snapshot (MySQL), which may predate
        // a claim another node committed since.
        const row = (await trx("idempotency_keys").where(where).forShare().first()) as IdempotencyRecord;
        const record = { ...row, locked_until: toNumber(row.locked_until), expires_at: toNumber(row.expires_at), answer_expires_at: row.answer_expires_at === null ? null : toNumber(row.answer_expires_at) };
        // Expired claims are replaced, and abandoned ones taken over by the same request (what the
        // first attempt stored is then found: MessagesService.create); a completed, unexpired one never is.
        const expired = record.expires_at <= item.now;
        const abandoned = ((record.state === "running" && record.locked_until <= item.now) || record.state === "unkept") && isSameRequest(record, item);
        if (record.claim_token !== item.claimToken && (expired || abandoned)) {
          const taken = await trx("idempotency_keys").where({ ...where, claim_token: record.claim_token }).update(claim);
          if (taken === 1) {
            results.push({ ...record, ...claim, state: "running", resumed: !expired });
            continue;
          }
        }
        results.push({ ...record, resumed: false });
      }
      return results;
    },
  };

  /** Stores the final answer of a claimed key (only by the request that holds the claim). */
  readonly completeWriter: BatchWriter<CompleteItem, void> = {
    name: "idempotency-complete",
    write: async (trx, items) => {
      const retentionDays = await contentRetentionDays(trx, items.filter((item) => item.boundedByContentRetention).map((item) => item.scope.workspaceId));
      for (const item of items) {
        const days = retentionDays.get(item.scope.workspaceId);
        await trx("idempotency_keys")
          .where({ workspace_id: item.scope.workspaceId, environment: item.scope.environment, idempotency_key: item.key, claim_token: item.claimToken })
          .update({
            state: item.response === null ? "unkept" : "done",
            response_status: item.status,
            response: item.response,
            response_location: item.location,
            ...(days === undefined ? {} : { answer_expires_at: cappedAnswerExpiry(trx, days * DAY_MS) }),
          });
      }
      return items.map(() => undefined);
    },
  };

  constructor(private readonly knex: Knex) {}

  /** Pushes out the lock of a claim still running under this token. */
  async extendLock(scope: Scope, key: string, claimToken: string, lockedUntil: number): Promise<void> {
    await this.knex("idempotency_keys")
      .where({ workspace_id: scope.workspaceId, environment: scope.environment, idempotency_key: key, claim_token: claimToken, state: "running" })
      .update({ locked_until: lockedUntil });
  }

  /** Forgets a claim whose request failed unexpectedly, so a retry runs again. */
  async release(scope: Scope, key: string, claimToken: string): Promise<void> {
    await this.knex("idempotency_keys").where({ workspace_id: scope.workspaceId, environment: scope.environment, idempotency_key: key, claim_token: claimToken, state: "running" }).delete();
  }

  /**
   * Every environment's stored responses, in primary-key order (SealedStore). The key is the
   * JSON of (workspace_id, environment, idempotency_key). Up to `limit` rows, and no more than
   * SEALED_PAGE_BYTES of answers (but always one): an answer can be megabytes, and 200 of
   * them at once would be gigabytes in hand. Their lengths are read first, then the answers.
   */
  async sealedPage(after: string | null, limit: number): Promise<SealedRow[]> {
    const query = this.knex("idempotency_keys")
      .whereNotNull("response")
      .orderBy(["workspace_id", "environment", "idempotency_key"])
      .limit(limit)
      .select("workspace_id", "environment", "idempotency_key", this.knex.raw("LENGTH(response) AS bytes"));
    if (after !== null) query.whereRaw("(workspace_id, environment, idempotency_key) > (?, ?, ?)", JSON.parse(after) as [string, string, string]);
    const sizes = (await query) as Array<{ workspace_id: string; environment: string; idempotency_key: string; bytes: number | string }>;
    const chosen: typeof sizes = [];
    let bytes = 0;
    for (const row of sizes) {
      bytes += toNumber(row.bytes);
      if (chosen.length > 0 && bytes > SEALED_PAGE_BYTES) break;
      chosen.push(row);
    }
    if (chosen.length === 0) return [];
    const keyOf = (row: { workspace_id: string; environment: string; idempotency_key: string }) => JSON.stringify([row.workspace_id, row.environment, row.idempotency_key]);
    const values = (await this.knex("idempotency_keys")
      .whereIn(["workspace_id", "environment", "idempotency_key"], chosen.map((row) => [row.workspace_id, row.environment, row.idempotency_key]))
      .whereNotNull("response")
      .select("workspace_id", "environment", "idempotency_key", "response")) as Array<{ workspace_id: string; environment: string; idempotency_key: string; response: string }>;
    const byKey = new Map(values.map((row) => [keyOf(row), row.response]));
    const rows = chosen.flatMap((row) => {
      const response = byKey.get(keyOf(row));
      return response === undefined ? [] : [{ key: keyOf(row), sealed: [response] }];
    });
    // Every row chosen went (pruned) between the two reads: an empty page would end the walk early.
    return rows.length > 0 ? rows : this.sealedPage(keyOf(chosen[chosen.length - 1]!), limit);
  }

  /**
   * Replaces the stored response if it is still the one `row` read (SealedStore). Compared by its
   * first characters and its length rather than whole, so that the statement carries the answer
   * once, not twice (an 8 MiB answer would make it 16 MiB, past max_allowed_packet): they hold
   * the value's random IV and GCM tag, which no other sealing repeats.
   */
  async replaceSealed(row: SealedRow, next: Array<string | null>): Promise<boolean> {
    const [workspace_id, environment, idempotency_key] = JSON.parse(row.key) as [string, string, string];
    const read = row.sealed[0]!;
    return (
      (await this.knex("idempotency_keys")
        .where({ workspace_id, environment, idempotency_key })
        .andWhereRaw("SUBSTR(response, 1, ?) = ? AND LENGTH(response) = ?", [SEALED_PREFIX_CHARS, read.slice(0, SEALED_PREFIX_CHARS), read.length])
        .update({ response: next[0] ?? read })) === 1
    );
  }

  /**
   * Shortens the life of this workspace's stored answers to `maxAgeMs` from their claim, where it
   * is longer (a content retention set or lowered: the answers can hold the content it removes).
   * The keys themselves keep their window. Answers how many were shortened.
   */
  async capAge(workspaceId: string, maxAgeMs: number): Promise<number> {
    return this.knex("idempotency_keys")
      .where({ workspace_id: workspaceId })
      .andWhereRaw("COALESCE(answer_expires_at, expires_at) > created_at + ?", [maxAgeMs])
      .update({ answer_expires_at: cappedAnswerExpiry(this.knex, maxAgeMs) });
  }

  /**
   * Removes up to `limit` stored answers past their `answer_expires_at`, keeping their keys
   * (`removed`: the fingerprint and caller still refuse another request, and tell the retry what
   * became of it); answers how many went.
   */
  async removeExpiredAnswers(now: number, limit: number): Promise<number> {
    const due = (await this.knex("idempotency_keys").where({ state: "done" }).andWhere("answer_expires_at", "<=", now).orderBy("answer_expires_at").limit(limit).select("workspace_id", "environment", "idempotency_key")) as Array<{ workspace_id: string; environment: string; idempotency_key: string }>;
    if (due.length === 0) return 0;
    // Checked again: a key forgotten and claimed afresh since the read holds a new request.
    return this.knex("idempotency_keys")
      .whereIn(["workspace_id", "environment", "idempotency_key"], due.map((row) => [row.workspace_id, row.environment, row.idempotency_key]))
      .where({ state: "done" })
      .andWhere("answer_expires_at", "<=", now)
      .update({ state: "removed", response: null });
  }

  /** Removes up to `limit` expired keys, oldest first, in one statement; answers how many went. */
  async pruneExpired(now: number, limit: number): Promise<number> {
    const expired = (await this.knex("idempotency_keys").where("expires_at", "<=", now).orderBy("expires_at").limit(limit).select("workspace_id", "environment", "idempotency_key")) as Array<{ workspace_id: string; environment: string; idempotency_key: string }>;
    if (expired.length === 0) return 0;
    // expires_at is checked again: a key reclaimed since the read is live once more.
    return this.knex("idempotency_keys")
      .whereIn(["workspace_id", "environment", "idempotency_key"], expired.map((row) => [row.workspace_id, row.environment, row.idempotency_key]))
      .andWhere("expires_at", "<=", now)
      .delete();
  }
}

/**
 * Whether a claim is a retry of the request that claimed the key: the same request (fingerprint)
 * from the same caller. A record from before callers were kept (claimed_by null) takes anyone's.
 */
export function isSameRequest(record: Pick<IdempotencyRecord, "fingerprint" | "claimed_by">, claim: Pick<ClaimItem, "fingerprint" | "claimedBy">): boolean {
  return record.fingerprint === claim.fingerprint && (record.claimed_by === null || record.claimed_by === claim.claimedBy);
}

/** The content retention of those of these workspaces that have one, in days. */
async function contentRetentionDays(trx: Knex.Transaction, workspaceIds: readonly string[]): Promise<Map<string, number>> {
  if (workspaceIds.length === 0) return new Map();
  const rows = (await trx("workspaces").whereIn("id", [...new Set(workspaceIds)]).whereNotNull("content_retention_days").select("id", "content_retention_days")) as Array<{ id: string; content_retention_days: number | string }>;
  return new Map(rows.map((row) => [row.id, toNumber(row.content_retention_days)]));
}

/** A row's answer expiry, made no later than `maxAgeMs` after its claim (CASE: both dialects have it); null means with the key. */
function cappedAnswerExpiry(knex: Knex, maxAgeMs: number): Knex.Raw {
  return knex.raw("CASE WHEN COALESCE(answer_expires_at, expires_at) > created_at + ? THEN created_at + ? ELSE answer_expires_at END", [maxAgeMs, maxAgeMs]);
}
