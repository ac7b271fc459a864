/**
 * The bytes a delivery worker may hold at once (DELIVERY_MAX_BYTES_IN_HAND): a message is taken
 * in hand only when its size fits beside those already held, so the worker's memory is bounded
 * by the budget, not by how many messages it holds times the largest message there may be.
 * Waiters are served in order, so a large message is not overtaken forever by small ones; a
 * message larger than the whole budget goes alone, once nothing else is held, rather than never.
 */
export class ByteBudget {
  private used = 0;
  private holders = 0;
  private readonly waiting: Array<{ bytes: number; admit(): void }> = [];

  constructor(private readonly limit: number) {
    if (!(limit > 0)) throw new RangeError(`a byte budget must be positive, not ${limit}`);
  }

  /** Bytes held now. */
  get inHand(): number {
    return this.used;
  }

  /** Resolves once `bytes` fit; the function it gives hands them back (once, however often it is called). */
  async take(bytes: number): Promise<() => void> {
    if (this.waiting.length === 0 && this.fits(bytes)) this.hold(bytes);
    else await new Promise<void>((resolve) => this.waiting.push({ bytes, admit: resolve }));
    return this.giveBack(bytes);
  }

  /**
   * `bytes` now if they fit beside what is held and nobody waits (waiters keep their turn), else
   * null: for more bytes taken by a holder, which must never wait for them while it holds some.
   */
  tryTake(bytes: number): (() => void) | null {
    if (this.waiting.length > 0 || this.used + bytes > this.limit) return null;
    this.hold(bytes);
    return this.giveBack(bytes);
  }

  /** Hands `bytes` back, once however often it is called. */
  private giveBack(bytes: number): () => void {
    let returned = false;
    return () => {
      if (returned) return;
      returned = true;
      this.used -= bytes;
      this.holders--;
      this.admitWaiting();
    };
  }

  private fits(bytes: number): boolean {
    return this.holders === 0 || this.used + bytes <= this.limit;
  }

  private hold(bytes: number): void {
    this.used += bytes;
    this.holders++;
  }

  private admitWaiting(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.bytes)) {
      const next = this.waiting.shift()!;
      this.hold(next.bytes);
      next.admit();
    }
  }
}
