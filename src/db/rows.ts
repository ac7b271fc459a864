import type { Knex } from "knex";

/** JSON lives in TEXT columns in both databases; this is the one place it is decoded. */
export function parseJson<T>(value: unknown): T {
  return (typeof value === "string" ? JSON.parse(value) : value) as T;
}

/** BIGINT columns may come back as strings from mysql2 when large; timestamps fit a double. */
export const toNumber = (value: unknown): number => (typeof value === "number" ? value : Number(value));
export const toNumberOrNull = (value: unknown): number | null => (value == null ? null : toNumber(value));

/** A queue's gauges (/metrics) from its counts and the earliest due time among its due items. */
export function queueStats(depth: unknown, due: unknown, oldestDueAt: unknown, now: number): { depth: number; due: number; oldestDueAgeSeconds: number } {
  const oldest = toNumberOrNull(oldestDueAt);
  return { depth: toNumber(depth), due: toNumber(due), oldestDueAgeSeconds: oldest === null ? 0 : Math.max(0, (now - oldest) / 1000) };
}

/**
 * Rows split into chunks that stay under SQLite's bound-variable limit and MySQL's
 * max_allowed_packet (large html bodies and attachments count by size, not only by rows).
 */
function* chunked<R>(rows: Iterable<R>, sizeOf: (row: R) => number, maxRows: number): Generator<R[]> {
  const maxBytes = 4 * 1024 * 1024;
  let chunk: R[] = [];
  let bytes = 0;
  for (const row of rows) {
    const size = sizeOf(row);
    if (chunk.length > 0 && (chunk.length >= maxRows || bytes + size > maxBytes)) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(row);
    bytes += size;
  }
  if (chunk.length > 0) yield chunk;
}

/** Multi-row inserts, a statement per chunk. */
export async function insertChunked<R extends Record<string, unknown>>(
  trx: Knex.Transaction,
  table: string,
  rows: readonly R[],
  sizeOf: (row: R) => number = () => 256,
): Promise<void> {
  for (const chunk of chunked(rows, sizeOf, 200)) await trx(table).insert(chunk);
}

/** One row of an updateEach: its id, columns that must also match, and its new values. */
export interface RowUpdate {
  id: string | number;
  /** Further conditions on the row (its tenant, its parent), checked as an update by id alone would not. */
  match?: Record<string, string | number>;
  set: Record<string, string | number | null>;
}

/**
 * Many rows updated by their `id`, each with its own values, in one statement per chunk instead
 * of one per row:
 *
 *   UPDATE t SET c = CASE id WHEN ? THEN ? ... END, ... WHERE id IN (...) AND m = CASE id WHEN ? THEN ? END
 *
 * Standard SQL that SQLite and MySQL run alike. Rows are grouped by the columns they set and
 * match, so every row of a statement sets the same ones. A row given twice takes its values in
 * order (the later wins), as consecutive updates would.
 */
export async function updateEach(trx: Knex.Transaction, table: string, rows: readonly RowUpdate[], sizeOf: (row: RowUpdate) => number = () => 256): Promise<void> {
  const merged = new Map<string | number, RowUpdate>();
  for (const row of rows) {
    const earlier = merged.get(row.id);
    merged.set(row.id, earlier ? { id: row.id, match: { ...earlier.match, ...row.match }, set: { ...earlier.set, ...row.set } } : row);
  }
  const groups = new Map<string, RowUpdate[]>();
  for (const row of merged.values()) {
    const shape = `${Object.keys(row.set).sort().join(",")}|${Object.keys(row.match ?? {}).sort().join(",")}`;
    const group = groups.get(shape);
    if (group) group.push(row);
    else groups.set(shape, [row]);
  }
  for (const group of groups.values()) {
    for (const chunk of chunked(group, sizeOf, 100)) await updateChunk(trx, table, chunk);
  }
}

// The key column, quoted as both SQLite and MySQL accept.
const ID = "`id`";

async function updateChunk(trx: Knex.Transaction, table: string, rows: readonly RowUpdate[]): Promise<void> {
  const [first] = rows;
  const bindings: Knex.RawBinding[] = [table];
  const caseOf = (column: string, value: (row: RowUpdate) => Knex.RawBinding): string => {
    bindings.push(column);
    for (const row of rows) bindings.push(row.id, value(row));
    return `CASE ${ID} ${rows.map(() => "WHEN ? THEN ?").join(" ")} END`;
  };
  const sets = Object.keys(first!.set).map((column) => `?? = ${caseOf(column, (row) => row.set[column] ?? null)}`);
  bindings.push(...rows.map((row) => row.id));
  const matches = Object.keys(first!.match ?? {}).map((column) => `?? = ${caseOf(column, (row) => row.match![column]!)}`);
  const sql = `UPDATE ?? SET ${sets.join(", ")} WHERE ${ID} IN (${rows.map(() => "?").join(", ")})${matches.map((m) => ` AND ${m}`).join("")}`;
  await trx.raw(sql, bindings);
}
