/**
 * At most `limit` tasks at once; the rest wait in order. Caps a worker's simultaneous SMTP
 * transactions (DELIVERY_CONCURRENCY) however many messages its batches hold.
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
