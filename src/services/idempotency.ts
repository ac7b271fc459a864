import { createHash, randomBytes } from "node:crypto";
import { DAY_MS, type Clock } from "../domain/clock.js";
import { ConflictError, DomainError } from "../domain/errors.js";
import type { Actor, Scope } from "../domain/environments.js";
import type { GroupCommit } from "../db/group-commit.js";
import { isSameRequest, type IdempotencyRecord, type IdempotencyRepository } from "../db/repositories/idempotency.js";
import { removeInBatches } from "./in-batches.js";
import type { SealedBox } from "./sealed-box.js";

/** Expired keys (or answers) removed per statement when pruning; a round repeats until none are left. */
const PRUNE_BATCH = 1000;

/**
 * The largest sealed answer kept, in bytes (base64: what the statement storing it carries, nothing
 * escaped). MySQL refuses a statement past max_allowed_packet (16 MiB by default on MariaDB), and
 * not visibly: the server drops the connection, so every write of that group commit fails, other
 * workspaces' too. Deflated, a batch of 100 templated messages of 120 KB html each is well under
 * 1 MiB; only a large body of text that does not compress comes near this. 8 MiB also keeps the
 * statements that move a value (`reseal`) far from the limit.
 */
export const STORED_ANSWER_MAX_BYTES = 8 * 1024 * 1024;

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** `resumed`: the key was taken over from an earlier attempt of this request that never answered; it may have stored its work. */
export type ClaimOutcome = { kind: "proceed"; claimToken: string; resumed: boolean } | { kind: "replay"; response: StoredResponse };

export interface IdempotencySettings {
  retentionHours: number;
  lockSeconds: number;
}

/**
 * Idempotency-Key semantics (IETF draft; DESIGN.md §5): the key is claimed atomically per
 * (workspace, environment, key); a finished request is replayed byte for byte; a different
 * request under the same key is 422; a request still running is 409.
 */
export class IdempotencyService {
  constructor(
    private readonly settings: IdempotencySettings,
    private readonly records: IdempotencyRepository,
    private readonly groupCommit: GroupCommit,
    private readonly box: SealedBox,
    private readonly clock: Clock,
  ) {}

  /** What identifies "the same request": the operation, its path and its canonical body. */
  static fingerprint(operation: string, path: string, body: unknown): string {
    return createHash("sha256").update(`${operation}\n${path}\n${canonicalJson(body ?? null)}`).digest("hex");
  }

  /**
   * Claims `key` for a request of `caller`. The key belongs to the caller that first claimed it:
   * another API key or member of the same workspace and environment is refused as for a different
   * request, since a replay skips the handler and its permission checks (an admin's new key and
   * its secret must not be replayed to a developer who learnt the Idempotency-Key).
   */
  async claim(scope: Scope, key: string, fingerprint: string, caller: Actor): Promise<ClaimOutcome> {
    const now = this.clock.now();
    const claimToken = randomBytes(16).toString("hex");
    const request = { fingerprint, claimedBy: caller.id };
    const record = await this.groupCommit.submit(this.records.claimWriter, {
      scope,
      key,
      ...request,
      claimToken,
      now,
      lockedUntil: now + this.settings.lockSeconds * 1000,
      expiresAt: now + this.settings.retentionHours * 3600 * 1000,
    });
    if (!isSameRequest(record, request)) {
      const by = record.fingerprint === fingerprint ? " by another API key or member" : " for a different request";
      throw new DomainError("unprocessable", "idempotency_key_reused", "Idempotency-Key already used", `This Idempotency-Key was used${by}; use a new key for a new request.`);
    }
    if (record.claim_token === claimToken) return { kind: "proceed", claimToken, resumed: record.resumed };
    const answerKept = record.answer_expires_at === null || record.answer_expires_at > now;
    if (record.state === "done" && record.response !== null && answerKept) {
      return { kind: "replay", response: JSON.parse(this.box.open(record.response)) as StoredResponse };
    }
    // Also before the round removes it: a replay must not bring back what the retention removed.
    if (record.state === "removed" || record.state === "done") throw answerRemoved(record);
    // Retry-After: 1 is the pace to poll at (the first request may answer at any moment);
    // lock_seconds tells the client how long a crashed request can still hold the key, so that
    // it need not assume this server's lock is the default one (IDEMPOTENCY_LOCK_SECONDS).
    throw new ConflictError("idempotency_key_in_use", "Idempotency-Key in use", "A request with this Idempotency-Key is still being processed; retry shortly.", 1, {
      lock_seconds: this.settings.lockSeconds,
    });
  }

  /**
   * Stores the answer, deflated and sealed, to be replayed byte for byte. An answer that is larger
   * than STORED_ANSWER_MAX_BYTES even so is not kept: the key is marked so, and a retry of the
   * same request takes it over at once as a resumed request, which answers the messages it
   * created as they are then (docs/idempotency.md#very-large-answers). Answers whether it was kept.
   */
  async complete(scope: Scope, key: string, claimToken: string, response: StoredResponse): Promise<boolean> {
    // Deflated: a stored answer is mostly text (html, then escaped again as a JSON string), and
    // seldom a tenth of its size once deflated. It can hold a secret (a new API key's) only beside
    // what the same caller sent, so its compressed length tells no one else anything.
    const sealed = await this.box.sealDeflated(JSON.stringify(response));
    const kept = sealed.length <= STORED_ANSWER_MAX_BYTES;
    await this.groupCommit.submit(this.records.completeWriter, {
      scope,
      key,
      claimToken,
      status: response.status,
      response: kept ? sealed : null,
      location: response.headers.location ?? null,
      boundedByContentRetention: this.outlivesShortestRetention(),
    });
    return kept;
  }

  /**
   * A stored answer can hold a message's content (a 202 carries its html and text), so it must
   * not outlive the workspace's content retention: called when the workspace sets or lowers it,
   * to shorten the answers stored before. Never under 24 hours: retention is at least a day. The
   * keys keep their whole window (removeExpiredAnswers).
   */
  async boundByContentRetention(workspaceId: string, days: number): Promise<void> {
    if (this.outlivesShortestRetention()) await this.records.capAge(workspaceId, days * DAY_MS);
  }

  /** Whether answers are kept past a day, the shortest content retention: only then can they outlive one. */
  private outlivesShortestRetention(): boolean {
    return this.settings.retentionHours > 24;
  }

  /**
   * Keeps a running request's claim locked until it answers: every third of the lock, its lock is
   * pushed out by a whole one. A request that outruns the lock (a batch fetching slow attachment
   * URLs) would otherwise be taken for crashed, and a client's retry would run it a second time
   * beside the first. A process that dies stops renewing, so a crashed claim still frees in time.
   * Returns the function that stops it.
   */
  holdLock(scope: Scope, key: string, claimToken: string, onError: (error: unknown) => void): () => void {
    const lockMs = this.settings.lockSeconds * 1000;
    const timer = setInterval(() => {
      this.records.extendLock(scope, key, claimToken, this.clock.now() + lockMs).catch(onError);
    }, lockMs / 3);
    timer.unref();
    return () => clearInterval(timer);
  }

  async release(scope: Scope, key: string, claimToken: string): Promise<void> {
    await this.records.release(scope, key, claimToken);
  }

  /** Forgets every expired key, a batch at a time; answers how many went. */
  async prune(): Promise<number> {
    const now = this.clock.now();
    return removeInBatches((limit) => this.records.pruneExpired(now, limit), PRUNE_BATCH);
  }

  /**
   * Removes the stored answers that the workspace's content retention has run out on, a batch at
   * a time, and keeps their keys until the keys expire: a different request or another caller
   * under one is still refused (422 idempotency_key_reused), and the request's own retry is told
   * its answer is gone (409 idempotency_answer_removed) instead of running again, which would
   * create a second API key, say, or answer a changed message request with the first message.
   * Answers how many went.
   */
  async removeExpiredAnswers(): Promise<number> {
    const now = this.clock.now();
    return removeInBatches((limit) => this.records.removeExpiredAnswers(now, limit), PRUNE_BATCH);
  }
}

/** The retry of a request whose answer the content retention removed: what it can still be told (docs/idempotency.md). */
function answerRemoved(record: Pick<IdempotencyRecord, "response_status" | "response_location">): ConflictError {
  const where = record.response_location === null ? "" : ` Its answer named ${record.response_location}: read it there.`;
  return new ConflictError(
    "idempotency_answer_removed",
    "Idempotency-Key answer removed",
    `The request sent with this Idempotency-Key was carried out already, and nothing ran again; its answer is no longer kept (the workspace's content retention removed it).${where}`,
    undefined,
    { ...(record.response_status === null ? {} : { original_status: record.response_status }), ...(record.response_location === null ? {} : { original_location: record.response_location }) },
  );
}

/** JSON with object keys sorted, so key order does not change a request's identity. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value as Record<string, unknown>)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
