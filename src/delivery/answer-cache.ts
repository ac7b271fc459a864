/**
 * DNS answers kept for reuse, each until its own expiry, and lookups in flight shared: a backlog
 * to one domain asks for its MX and the MX host's addresses once, not for every message.
 *
 * Node's resolver (c-ares) does no caching of its own here (measured: three queries per message),
 * and a resolver across the network adds its round trip to every hand-off. Only answers are
 * kept; a failed lookup is asked again by the next caller. Entries are bounded in number: a
 * worker sends to many domains over a day, and the oldest entries go first.
 */
export class AnswerCache<T> {
  private readonly entries = new Map<string, { value: T; expiresAt: number }>();
  private readonly inFlight = new Map<string, Promise<T>>();

  constructor(
    private readonly options: {
      /** The longest any answer is kept; 0 keeps none (every lookup asks). */
      maxAgeMs: number;
      maxEntries?: number;
      now?: () => number;
    },
  ) {}

  /**
   * The cached answer for `key`, else what `load` finds: `ttlMs` says how long it may be kept
   * (capped by maxAgeMs; 0 = not at all).
   */
  async get(key: string, load: () => Promise<{ value: T; ttlMs: number }>): Promise<T> {
    if (this.options.maxAgeMs <= 0) return (await load()).value;
    const now = this.now();
    const cached = this.entries.get(key);
    if (cached && cached.expiresAt > now) return cached.value;
    if (cached) this.entries.delete(key);

    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const lookup = load().then(({ value, ttlMs }) => {
      this.keep(key, value, Math.min(ttlMs, this.options.maxAgeMs));
      return value;
    });
    this.inFlight.set(key, lookup);
    try {
      return await lookup;
    } finally {
      this.inFlight.delete(key);
    }
  }

  private keep(key: string, value: T, ttlMs: number): void {
    if (ttlMs <= 0) return;
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
    if (this.entries.size > (this.options.maxEntries ?? 10_000)) this.entries.delete(this.entries.keys().next().value!);
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}
