/** A call's data and the HTTP response it came in. */
export interface WithResponse<Data> {
  data: Data;
  /** Status and headers (`Request-Id`, `Idempotent-Replayed`, `RateLimit`); its body has been read. */
  response: Response;
}

/**
 * What a call returns: a Promise of its data, as it always was, that can also give the response
 * the data came in (`withResponse()`), for what the body does not say: a `201` new suppression
 * from a `200` one already there, the request id, a replayed answer.
 *
 * It extends Promise so that it is one wherever a Promise is expected (`instanceof`, `Promise.all`,
 * types), but it is not settled by its own executor: `then`, `catch` and `finally` read the data
 * of the one answer that both it and `withResponse()` share, so the request is sent once.
 */
export class APIPromise<Data> extends Promise<Data> {
  // Derived promises (of the inherited methods the overrides leave) are plain Promises.
  static override get [Symbol.species]() {
    return Promise;
  }

  readonly #answer: Promise<WithResponse<Data>>;
  #data: Promise<Data> | undefined;

  constructor(answer: Promise<WithResponse<Data>>) {
    // The executor's value is never read: every way to read this promise goes through #answer.
    super((resolve) => resolve(undefined as Data));
    this.#answer = answer;
  }

  /** The data, and the response it came in. Rejects as the call does, with the same typed error. */
  withResponse(): Promise<WithResponse<Data>> {
    return this.#answer;
  }

  // The rejection handlers take `any`, as Promise's own do: code written against Promise<Data>
  // (`.catch((error: APIError) => …)`) must compile against this too.
  override then<Result1 = Data, Result2 = never>(
    onfulfilled?: ((data: Data) => Result1 | PromiseLike<Result1>) | null,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    onrejected?: ((reason: any) => Result2 | PromiseLike<Result2>) | null,
  ): Promise<Result1 | Result2> {
    return this.data().then(onfulfilled, onrejected);
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override catch<Result = never>(onrejected?: ((reason: any) => Result | PromiseLike<Result>) | null): Promise<Data | Result> {
    return this.data().catch(onrejected);
  }

  override finally(onfinally?: (() => void) | null): Promise<Data> {
    return this.data().finally(onfinally);
  }

  private data(): Promise<Data> {
    return (this.#data ??= this.#answer.then(({ data }) => data));
  }
}
