/**
 * At most `limit` tasks at once; the rest wait in order. Caps the webhook dispatcher's requests
 * in flight, per endpoint and in all. (The delivery worker's SMTP transactions are capped by its
 * SMTP pool, which grants a transaction slot together with the destination's connection.)
 */
export class Semaphore {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter, so active never drops below a waiting demand.
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

/**
 * A Semaphore of `limit` per key, kept only while a task runs or waits under that key: the
 * webhook dispatcher caps requests per endpoint, and a worker lives for months over endpoints
 * created and deleted, so a semaphore kept for every endpoint ever sent to would only grow.
 */
export class KeyedSemaphore {
  private readonly byKey = new Map<string, { semaphore: Semaphore; tasks: number }>();

  constructor(private readonly limit: number) {}

  /** Keys with a task running or waiting. */
  get size(): number {
    return this.byKey.size;
  }

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    let entry = this.byKey.get(key);
    if (!entry) {
      entry = { semaphore: new Semaphore(this.limit), tasks: 0 };
      this.byKey.set(key, entry);
    }
    entry.tasks++;
    try {
      return await entry.semaphore.run(task);
    } finally {
      // The last task out, running or waiting: a task that comes later starts a fresh semaphore,
      // which is the same as this one would be (nothing holds or waits for it).
      if (--entry.tasks === 0) this.byKey.delete(key);
    }
  }
}
