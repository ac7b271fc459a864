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
