import { APIPromise } from "./api-promise.js";

/** What every list operation of the API returns (DESIGN §5: cursor pagination). */
export interface PageBody<Item> {
  data: Item[];
  has_more: boolean;
  next_cursor: string | null;
}

/**
 * One page of a list, plus the way to the next. Iterating a page with `for await` yields its
 * items and then those of every following page, fetched one page at a time as they are needed.
 */
export class Page<Item> implements PageBody<Item>, AsyncIterable<Item> {
  readonly data: Item[];
  readonly has_more: boolean;
  readonly next_cursor: string | null;

  constructor(
    body: PageBody<Item>,
    private readonly fetchPage: (after: string) => Promise<PageBody<Item>>,
  ) {
    this.data = body.data;
    this.has_more = body.has_more;
    this.next_cursor = body.next_cursor;
  }

  hasNextPage(): boolean {
    return this.has_more && this.next_cursor !== null;
  }

  /** The following page; throws when there is none (check `hasNextPage()` first). */
  async nextPage(): Promise<Page<Item>> {
    if (!this.hasNextPage()) throw new RangeError("This is the last page: check hasNextPage() before nextPage().");
    return new Page(await this.fetchPage(this.next_cursor as string), this.fetchPage);
  }

  /** Every page from this one on. */
  async *pages(): AsyncGenerator<Page<Item>> {
    yield this;
    let page = this.hasNextPage() ? await this.nextPage() : undefined;
    while (page) {
      yield page;
      page = page.hasNextPage() ? await page.nextPage() : undefined;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Item> {
    for await (const page of this.pages()) yield* page.data;
  }
}

/**
 * What a list method returns: await it for the first page, or iterate it directly with
 * `for await (const message of mr.messages.list())` to walk every item of every page. It is an
 * APIPromise of the first page, so a Promise (`finally`, `Promise.all`, `instanceof`) whose
 * `withResponse()` gives the response that page came in.
 */
export class PagePromise<Item> extends APIPromise<Page<Item>> implements AsyncIterable<Item> {
  async *[Symbol.asyncIterator](): AsyncGenerator<Item> {
    yield* await this;
  }
}
