import { Worker } from "node:worker_threads";
import type { Compose, ComposeRequest } from "./compose.js";
import type { ComposeAnswer, ComposeJob } from "./compose-protocol.js";
import type { RenderedMessage } from "./render.js";

interface Pending {
  resolve(rendered: RenderedMessage): void;
  reject(error: Error): void;
}

interface Thread {
  worker: Worker;
  /** Jobs given to the thread and not answered yet. */
  pending: Map<number, Pending>;
  /** Jobs given in the current task, posted together once its microtasks have run. */
  unsent: ComposeJob[];
}

const ENTRY = new URL("./compose-thread-entry.mjs", import.meta.url);

/**
 * Renders and DKIM-signs outgoing messages on worker threads (docs/performance.md#delivery).
 * A delivery worker's event loop is otherwise the bottleneck of a whole process: rendering MIME
 * and signing cost more than the SMTP exchange, the database and everything else together, and
 * SQLite's single writer means more processes do not help. Threads start on first use, so a
 * process that never delivers starts none; each job goes to the thread with the fewest in hand.
 * A thread that dies fails the jobs it held (the delivery worker logs them as a bug and retries
 * them after their lease) and is replaced by the next job.
 */
export class ComposeThreads {
  private readonly threads: Thread[] = [];
  private nextId = 0;
  private closed = false;

  constructor(private readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`ComposeThreads needs at least one thread, not ${size}`);
  }

  readonly compose: Compose = (request: ComposeRequest) => {
    if (this.closed) return Promise.reject(new Error("the compose threads are closed"));
    while (this.threads.length < this.size) this.threads.push(this.spawn());
    const thread = this.threads.reduce((least, t) => (t.pending.size < least.pending.size ? t : least));
    const id = ++this.nextId;
    return new Promise<RenderedMessage>((resolve, reject) => {
      if (thread.pending.size === 0) thread.worker.ref(); // a job in hand keeps the process alive
      thread.pending.set(id, { resolve, reject });
      if (thread.unsent.push({ id, request }) === 1) queueMicrotask(() => this.post(thread));
    });
  };

  /** Ends every thread; jobs still in hand fail. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.threads.splice(0).map((thread) => this.retire(thread, new Error("the compose threads are closed"))));
  }

  private post(thread: Thread): void {
    if (thread.unsent.length === 0 || !this.threads.includes(thread)) return;
    thread.worker.postMessage(thread.unsent.splice(0));
  }

  private spawn(): Thread {
    const worker = new Worker(ENTRY, { stdout: false, stderr: false });
    // An idle thread does not keep the process alive; close() ends them with the runtime.
    worker.unref();
    const thread: Thread = { worker, pending: new Map(), unsent: [] };
    worker.on("message", (answers: ComposeAnswer[]) => {
      for (const answer of answers) {
        const pending = thread.pending.get(answer.id);
        if (!pending) continue;
        thread.pending.delete(answer.id);
        if ("rendered" in answer) pending.resolve(answer.rendered);
        else pending.reject(Object.assign(new Error(answer.error.message), answer.error.stack === undefined ? {} : { stack: answer.error.stack }));
      }
      if (thread.pending.size === 0) worker.unref();
    });
    worker.on("error", (error) => this.lose(thread, new Error(`a compose thread failed: ${error.message}`, { cause: error })));
    worker.on("exit", (code) => this.lose(thread, new Error(`a compose thread stopped (exit code ${code})`)));
    return thread;
  }

  /** A thread that died: its jobs fail, and the next job starts a new one. */
  private lose(thread: Thread, error: Error): void {
    const index = this.threads.indexOf(thread);
    if (index === -1) return;
    this.threads.splice(index, 1);
    void this.retire(thread, error);
  }

  private async retire(thread: Thread, error: Error): Promise<void> {
    for (const pending of thread.pending.values()) pending.reject(error);
    thread.pending.clear();
    thread.unsent.length = 0;
    thread.worker.removeAllListeners();
    // A terminated thread may still emit an error while it unwinds; nobody is listening for it.
    thread.worker.on("error", () => {});
    await thread.worker.terminate();
  }
}
