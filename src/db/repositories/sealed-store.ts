/**
 * A table holding values sealed with a SealedBox, as `mailroom-server reseal` walks it to move
 * them under the current SECRET_KEY (src/services/reseal.ts). Each implementation pages over
 * every workspace's rows and replaces a row's values only if they are still the ones it read.
 */
export interface SealedRow {
  /** An opaque cursor: the row's key. */
  key: string;
  /** The row's sealed values in a fixed order; null where the row has none. */
  sealed: Array<string | null>;
}

export interface SealedStore {
  /**
   * Up to `limit` rows after `after` (null: from the start), in key order; an empty page is the
   * end (a shorter one need not be: a store of large values may also page by bytes).
   */
  sealedPage(after: string | null, limit: number): Promise<SealedRow[]>;
  /**
   * Writes `next` in place of `row.sealed`; false when the row changed or went since it was read
   * (a concurrent rotation wrote a newly sealed value, or it was deleted): nothing is written then.
   */
  replaceSealed(row: SealedRow, next: Array<string | null>): Promise<boolean>;
}
