import { Worker } from "node:worker_threads";
import type { Knex } from "knex";

/**
 * Runs reads that scan many rows (metrics over weeks of events) without stalling the process:
 * on MySQL that is any query (the driver is asynchronous), on SQLite a thread with a read-only
 * connection of its own, since better-sqlite3 blocks the event loop for as long as a statement
 * runs and half a second of it would hold every request and commit of an API node. WAL lets the
 * thread read while the main connection writes; it sees what is committed.
 */
export interface ReportReader {
  rows<T>(query: Knex.QueryBuilder): Promise<T[]>;
  close(): Promise<void>;
}

/** The query run where it is built: MySQL's driver does not block, nor does an in-memory database have another connection to use. */
export const inlineReports: ReportReader = {
  rows: async <T>(query: Knex.QueryBuilder) => (await query) as T[],
  close: async () => {},
};

interface Answer {
  id: number;
  rows?: unknown[];
  error?: { message: string; code?: string };
}

const ENTRY = new URL("./report-thread.mjs", import.meta.url);

/** One thread, started on first use and idle otherwise; reads queue on it in order. */
export class SqliteReportThread implements ReportReader {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, { resolve(rows: unknown[]): void; reject(error: Error): void }>();
  private nextId = 0;

  constructor(private readonly filename: string) {}

  rows<T>(query: Knex.QueryBuilder): Promise<T[]> {
    const { sql, bindings } = query.toSQL().toNative();
    const worker = this.start();
    const id = ++this.nextId;
    return new Promise<T[]>((resolve, reject) => {
      if (this.pending.size === 0) worker.ref(); // a read in hand keeps the process alive
      this.pending.set(id, { resolve: resolve as (rows: unknown[]) => void, reject });
      worker.postMessage({ id, sql, bindings });
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.fail(new Error("the report thread is closed"));
    await worker?.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(ENTRY, { workerData: { filename: this.filename } });
    worker.unref();
    worker.on("message", (answer: Answer) => {
      const pending = this.pending.get(answer.id);
      if (!pending) return;
      this.pending.delete(answer.id);
      if (this.pending.size === 0) worker.unref();
      if (answer.error) pending.reject(Object.assign(new Error(answer.error.message), { code: answer.error.code }));
      else pending.resolve(answer.rows ?? []);
    });
    // A thread that fails takes its reads with it; the next read starts another.
    const lose = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.fail(error);
    };
    worker.on("error", (error) => lose(new Error(`the report thread failed: ${error.message}`, { cause: error })));
    worker.on("exit", (code) => lose(new Error(`the report thread stopped (exit code ${code})`)));
    this.worker = worker;
    return worker;
  }

  private fail(error: Error): void {
    for (const pending of this.pending.values()) pending.reject(error);
    this.pending.clear();
  }
}
