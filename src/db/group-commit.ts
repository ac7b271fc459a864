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

const MAX_ATTEMPTS = 3;
/** Batches written and still waiting to be durable, at most (a later sync covers earlier ones). */
const MAX_SYNCING = 2;

/**
 * Group commit: everything submitted while a commit is in flight rides in the next transaction,
 * so N concurrent requests cost one fsync instead of N. A submission resolves only after its
 * transaction has committed and is durable: that is what lets the API answer 2xx for a durable
 * write. Where the dialect syncs in the background (SQLite), the next batch is written while the
 * previous one's sync runs (`pipelineCommit`), up to MAX_SYNCING batches deep.
 *
 * Items of the same writer are written together (multi-row statements), writers in one fixed
 * order (by name).
 */
export class GroupCommit {
  private queue: Pending[] = [];
  private inFlight = 0; // transactions being written
  private settling = 0; // batches not yet answered (written, maybe waiting to be durable)
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
    if (this.queue.length === 0 && this.settling === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled || this.busy()) return;
    this.scheduled = true;
    // setImmediate lets every request parsed in this turn of the event loop join the batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private busy(): boolean {
    return this.inFlight >= this.dialect.writerConcurrency || this.settling - this.inFlight >= MAX_SYNCING;
  }

  private async flush(): Promise<void> {
    if (this.queue.length === 0 || this.busy()) return;
    const batch = this.queue.splice(0, this.maxBatch);
    this.inFlight++;
    this.settling++;
    let writing = true;
    try {
      const { results, durable } = await this.commitWithRetry(batch);
      // Pipelined commit (SQLite): the next batch is written while this one becomes durable.
      this.inFlight--;
      writing = false;
      if (this.queue.length > 0) this.schedule();
      await durable;
      batch.forEach((pending, i) => pending.resolve(results[i]));
    } catch (error) {
      for (const pending of batch) pending.reject(error);
    } finally {
      if (writing) this.inFlight--;
      this.settling--;
      if (this.queue.length > 0) this.schedule();
      else if (this.settling === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }

  private async commitWithRetry(batch: Pending[]): Promise<{ results: unknown[]; durable: Promise<void> }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.knex.transaction(async (trx) => {
          const pipelined = await this.dialect.pipelineCommit?.(trx);
          pipelined?.durable.catch(() => {}); // awaited by flush once committed; a rollback settles it too
          const results = await this.writeAll(trx, batch);
          return { results, durable: pipelined?.durable ?? Promise.resolve() };
        });
      } catch (error) {
        // A deadlock victim's transaction was rolled back whole; replaying it is safe.
        if (attempt >= MAX_ATTEMPTS || !this.dialect.isRetryable(error)) throw error;
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
    // One fixed order of writers (by name), whatever order their items arrived in: concurrent
    // transactions (MySQL) then take their row locks in the same order instead of deadlocking.
    const ordered = [...byWriter].sort(([a], [b]) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const [writer, indexes] of ordered) {
      const outputs = await writer.write(trx, indexes.map((i) => batch[i]!.item));
      indexes.forEach((batchIndex, i) => (results[batchIndex] = outputs[i]));
    }
    return results;
  }
}
