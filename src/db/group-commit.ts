import type { Knex } from "knex";
import type { Dialect } from "./dialects/dialect.js";

/**
 * Writes one kind of item for a whole batch, inside a transaction it is given. Writers validate
 * their items before they are submitted, so a failure here fails the batch as a whole.
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
}

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
    const batch = this.queue.splice(0, this.maxBatch);
    this.inFlight++;
    try {
      const results = await this.commitWithRetry(batch);
      batch.forEach((pending, i) => pending.resolve(results[i]));
    } catch (error) {
      for (const pending of batch) pending.reject(error);
    } finally {
      this.inFlight--;
      if (this.queue.length > 0) this.schedule();
      else if (this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
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
