import type { Knex } from "knex";

/** JSON lives in TEXT columns in both databases; this is the one place it is decoded. */
export function parseJson<T>(value: unknown): T {
  return (typeof value === "string" ? JSON.parse(value) : value) as T;
}

/** BIGINT columns may come back as strings from mysql2 when large; timestamps fit a double. */
export const toNumber = (value: unknown): number => (typeof value === "number" ? value : Number(value));
export const toNumberOrNull = (value: unknown): number | null => (value == null ? null : toNumber(value));

/**
 * Multi-row inserts in chunks that stay under SQLite's bound-variable limit and MySQL's
 * max_allowed_packet (large html bodies and attachments count by size, not only by rows).
 */
export async function insertChunked<R extends Record<string, unknown>>(
  trx: Knex.Transaction,
  table: string,
  rows: readonly R[],
  sizeOf: (row: R) => number = () => 256,
): Promise<void> {
  const maxRows = 200;
  const maxBytes = 4 * 1024 * 1024;
  let chunk: R[] = [];
  let bytes = 0;
  for (const row of rows) {
    const size = sizeOf(row);
    if (chunk.length > 0 && (chunk.length >= maxRows || bytes + size > maxBytes)) {
      await trx(table).insert(chunk);
      chunk = [];
      bytes = 0;
    }
    chunk.push(row);
    bytes += size;
  }
  if (chunk.length > 0) await trx(table).insert(chunk);
}
