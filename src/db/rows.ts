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
 * What a string adds to a statement sent to MySQL: mysql2 (as Knex drives it) writes values into
 * the SQL text on the client, as UTF-8, with a backslash before NUL, backspace, tab, LF, CR,
 * Ctrl-Z, quotes and backslash, so each of those takes two bytes. The one count of it: what
 * chunks multi-row statements below and what bounds a stored message (storedMessageBytes) both
 * use it. Counted on SQLite too (which binds values instead), so both databases chunk alike.
 */
export function statementBytes(value: string): number {
  let escaped = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x00 || c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x1a || c === 0x22 || c === 0x27 || c === 0x5c) escaped++;
  }
  return Buffer.byteLength(value, "utf8") + escaped;
}

/** A value as mysql2 writes it into a statement: a string quoted and escaped, a Buffer as X'hex', NULL, true, 12.5. */
export function valueBytes(value: unknown): number {
  if (value === null) return 4; // NULL
  if (value === undefined) return 7; // DEFAULT
  if (typeof value === "string") return statementBytes(value) + 2;
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean") return String(value).length;
  if (Buffer.isBuffer(value)) return value.length * 2 + 3;
  if (value instanceof Date) return 25; // '2024-01-02 03:04:05.678'
  // Anything else (a JSON value not yet encoded): counted as its JSON text, which is at least what any encoding takes.
  return statementBytes(JSON.stringify(value) ?? "") + 2;
}

/** A row as a multi-row INSERT carries it: its values, the ", " between them, its parentheses and the ", " before the next row. */
export function rowBytes(row: object): number {
  let bytes = 2;
  for (const value of Object.values(row)) bytes += valueBytes(value) + 2;
  return bytes;
}

/**
 * The bytes of a multi-row statement's rows, at most. MariaDB refuses a statement longer than its
 * max_allowed_packet (16 MiB by default) by closing the connection, which inside a transaction
 * surfaces as a lost connection rather than as that error, so statements are kept well under
 * it before they are sent. A single row larger than this goes alone: a message row is at most
 * about 12.5 MiB (LIMITS.storedMessageMaxBytes plus its bounded JSON columns), and the budget's
 * distance from 16 MiB covers the statement's own text (its column list, DEFAULTs).
 */
export const STATEMENT_ROW_BYTES = 4 * 1024 * 1024;

/**
 * Rows split into statements that stay under SQLite's bound-variable limit (maxRows) and MySQL's
 * max_allowed_packet (STATEMENT_ROW_BYTES, each row counted by sizeOf: by default as the
 * statement carries it). Rows of every submitter of a group commit are chunked together.
 */
export function* statementChunks<R>(rows: Iterable<R>, maxRows: number, sizeOf: (row: R) => number): Generator<R[]> {
  let chunk: R[] = [];
  let bytes = 0;
  for (const row of rows) {
    const size = sizeOf(row);
    if (chunk.length > 0 && (chunk.length >= maxRows || bytes + size > STATEMENT_ROW_BYTES)) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(row);
    bytes += size;
  }
  if (chunk.length > 0) yield chunk;
}

/** Multi-row inserts, a statement per chunk (statementChunks: 200 rows, or fewer as their bytes require). */
export async function insertChunked<R extends object>(db: Knex, table: string, rows: readonly R[], maxRows = 200): Promise<void> {
  for (const chunk of statementChunks(rows, maxRows, rowBytes)) await db(table).insert(chunk);
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
export async function updateEach(trx: Knex.Transaction, table: string, rows: readonly RowUpdate[]): Promise<void> {
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
    for (const chunk of statementChunks(group, 100, updateBytes)) await updateChunk(trx, table, chunk);
  }
}

/**
 * A row as updateChunk's statement carries it: " WHEN id THEN value" in each column's CASE (those
 * it sets and those it matches), and its id in the IN list.
 */
export function updateBytes(row: RowUpdate): number {
  const id = valueBytes(row.id);
  let bytes = id + 2;
  for (const value of [...Object.values(row.set), ...Object.values(row.match ?? {})]) bytes += 12 + id + valueBytes(value);
  return bytes;
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
