import type { SealedRow, SealedStore } from "../db/repositories/sealed-store.js";
import type { SealedBox } from "./sealed-box.js";

/** One kind of sealed value, the box that seals it and the table that holds it. */
export interface SealedKind {
  name: "dkim_keys" | "webhook_secrets" | "idempotent_responses";
  box: SealedBox;
  store: SealedStore;
}

export interface ResealCount {
  name: SealedKind["name"];
  /** Rows read. */
  rows: number;
  /** Rows whose values are now sealed under the current key by this run. */
  resealed: number;
  /** Rows that changed between read and write (written meanwhile, so under whatever key did it): left alone. */
  changed: number;
  /** Rows holding a value no key opens (a key missing from SECRET_KEY_PREVIOUS): left alone. */
  unreadable: number;
}

const PAGE = 200;

/**
 * Moves every sealed value (DKIM private keys, webhook endpoint secrets, stored idempotent
 * responses) under the current SECRET_KEY, after a rotation (docs/deployment.md#rotating-the-secret-key).
 * A value already sealed under it is left as it is, so a second run changes nothing, and it can run
 * while the servers do: each row is replaced only if it still holds what was read.
 */
export class ResealService {
  constructor(private readonly kinds: readonly SealedKind[]) {}

  async run(onProgress: (count: ResealCount) => void = () => {}): Promise<ResealCount[]> {
    const counts: ResealCount[] = [];
    for (const kind of this.kinds) {
      const count: ResealCount = { name: kind.name, rows: 0, resealed: 0, changed: 0, unreadable: 0 };
      for (let after: string | null = null; ; ) {
        // A page may hold fewer than PAGE rows before the end (a store of large values pages by
        // bytes too): only an empty one ends the walk.
        const rows = await kind.store.sealedPage(after, PAGE);
        for (const row of rows) {
          count.rows++;
          const outcome = await this.resealRow(kind, row);
          if (outcome !== "current") count[outcome]++;
        }
        if (rows.length > 0 || after === null) onProgress({ ...count });
        if (rows.length === 0) break;
        after = rows[rows.length - 1]!.key;
      }
      counts.push(count);
    }
    return counts;
  }

  private async resealRow(kind: SealedKind, row: SealedRow): Promise<"current" | "resealed" | "changed" | "unreadable"> {
    let next: Array<string | null>;
    try {
      next = row.sealed.map((value) => (value === null ? null : kind.box.reseal(value)));
    } catch {
      return "unreadable";
    }
    if (next.every((value) => value === null)) return "current";
    return (await kind.store.replaceSealed(row, next)) ? "resealed" : "changed";
  }
}
