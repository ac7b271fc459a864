import type { Knex } from "knex";
import type { Dialect } from "./dialects/dialect.js";
import { isDatabaseUnavailable } from "./driver-errors.js";

/**
 * Writes one kind of item for a whole batch, inside a transaction it is given. Items are
 * validated before they are submitted; should one still fail its statement, the batch is written
 * again in parts so that only that item fails (see GroupCommit.commitIsolating).
 */
export interface BatchWriter<I, O> {
  readonly name: string;
  write(trx: Knex.Transaction, items: readonly I[]): Promise<O[]>;
}

interface Pending {
  writer: BatchWriter<unknown, unknown>;
  item: unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** Set on the submissions of one submitTogether call: they are never split over two transactions. */
  unit?: object;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * A batch a deadlock (or a lock wait timeout) rolled back is written again, up to this many times
 * in all, after a short random wait that doubles each time: replayed at once, the same
 * transactions meet again in the same order and tend to deadlock again. With MySQL, the API's
 * accepts, workers' claims and outcome writes meet on the jobs and messages tables; a batch that
 * still fails after the last attempt fails every submission in it (the API answers 503).
 */
const MAX_ATTEMPTS = 6;
const FIRST_RETRY_MS = 5;

/**
 * Group commit: everything submitted while a commit is in flight rides in the next transaction,
 * so N concurrent requests cost one fsync instead of N. A submission resolves only after its
 * transaction has committed: that is what lets the API answer 2xx for a durable write.
 *
 * Items of the same writer are written together (multi-row statements), writers always in the
 * same order (by name): concurrent batches on MySQL then take their row locks in one order,
 * which keeps them from deadlocking each other.
 */
export class GroupCommit {
  private queue: Pending[] = [];
  private inFlight = 0;
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly knex: Knex,
    private readonly dialect: Dialect,
    private readonly maxBatch = 500,
  ) {}

  submit<I, O>(writer: BatchWriter<I, O>, item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ writer: writer as BatchWriter<unknown, unknown>, item, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  /**
   * Submits items that must share one transaction, never split over two commits (nor over the
   * halves of a failed batch written again: they then fail together), so that a writer deciding
   * about all of them at once (a strict batch's messages against the monthly quota) sees them all.
   */
  submitTogether<I, O>(writer: BatchWriter<I, O>, items: readonly I[]): Array<Promise<O>> {
    const unit = {};
    const results = items.map(
      (item) =>
        new Promise<O>((resolve, reject) => {
          this.queue.push({ writer: writer as BatchWriter<unknown, unknown>, item, resolve: resolve as (v: unknown) => void, reject, unit });
        }),
    );
    this.schedule();
    return results;
  }

  /** Resolves once nothing is queued or in flight (for shutdown). */
  async drain(): Promise<void> {
    if (this.queue.length === 0 && this.inFlight === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.dialect.writerConcurrency) return;
    this.scheduled = true;
    // setImmediate lets every request parsed in this turn of the event loop join the batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.queue.length === 0 || this.inFlight >= this.dialect.writerConcurrency) return;
    let size = Math.min(this.maxBatch, this.queue.length);
    while (size < this.queue.length && sameUnit(this.queue[size - 1]!, this.queue[size]!)) size++;
    const batch = this.queue.splice(0, size);
    this.inFlight++;
    try {
      const outcomes = await this.commitIsolating(batch);
      batch.forEach((pending, i) => {
        const outcome = outcomes[i]!;
        if (outcome.ok) pending.resolve(outcome.value);
        else pending.reject(outcome.error);
      });
    } catch (error) {
      for (const pending of batch) pending.reject(error);
    } finally {
      this.inFlight--;
      if (this.queue.length > 0) this.schedule();
      else if (this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }

  /**
   * The batch committed, or, when it fails for a reason of its own, written again in halves
   * (in order), and so on down to single submissions (or submitTogether's units, which fail
   * whole): the submissions share a transaction, not
   * a fate. One item that still fails its statement (a value too long for its column on MySQL)
   * then fails alone, with its own error, while the other requests' writes (accepts, idempotency
   * claims, rate-limit hits) commit; k bad items among n cost about 2k·log2(n) transactions
   * rather than n. Not split: a deadlock still unresolved after its retries, or a database that
   * does not answer; those say nothing about any one item, so the whole batch fails as before.
   */
  private async commitIsolating(batch: Pending[]): Promise<Outcome[]> {
    try {
      return (await this.commitWithRetry(batch)).map((value) => ({ ok: true, value }));
    } catch (error) {
      const half = splitPoint(batch);
      if (half === 0 || this.dialect.isRetryable(error) || isDatabaseUnavailable(error)) return batch.map(() => ({ ok: false, error }));
      const first = await this.commitIsolating(batch.slice(0, half));
      return [...first, ...(await this.commitIsolating(batch.slice(half)))];
    }
  }

  private async commitWithRetry(batch: Pending[]): Promise<unknown[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.knex.transaction((trx) => this.writeAll(trx, batch));
      } catch (error) {
        // A deadlock victim's transaction was rolled back whole; replaying it is safe.
        if (attempt >= MAX_ATTEMPTS || !this.dialect.isRetryable(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, FIRST_RETRY_MS * 2 ** (attempt - 1) * (0.5 + Math.random())));
      }
    }
  }

  private async writeAll(trx: Knex.Transaction, batch: Pending[]): Promise<unknown[]> {
    const byWriter = new Map<BatchWriter<unknown, unknown>, number[]>();
    batch.forEach((pending, index) => {
      const indexes = byWriter.get(pending.writer) ?? [];
      indexes.push(index);
      byWriter.set(pending.writer, indexes);
    });
    const results: unknown[] = new Array(batch.length);
    const ordered = [...byWriter].sort(([a], [b]) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const [writer, indexes] of ordered) {
      const outputs = await writer.write(trx, indexes.map((i) => batch[i]!.item));
      indexes.forEach((batchIndex, i) => (results[batchIndex] = outputs[i]));
    }
    return results;
  }
}

const sameUnit = (a: Pending, b: Pending): boolean => a.unit !== undefined && a.unit === b.unit;

/** Where a batch is halved: the boundary between two submissions nearest its middle that splits no unit; 0 when there is none. */
function splitPoint(batch: readonly Pending[]): number {
  const middle = Math.ceil(batch.length / 2);
  for (let offset = 0; offset < batch.length; offset++) {
    for (const at of [middle + offset, middle - offset]) {
      if (at > 0 && at < batch.length && !sameUnit(batch[at - 1]!, batch[at]!)) return at;
    }
  }
  return 0;
}
