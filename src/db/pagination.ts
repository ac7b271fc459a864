import type { Knex } from "knex";

export interface PageRequest {
  limit: number;
  after?: string | undefined;
}

export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/**
 * Cursor pagination over a time-sortable id column: newest first (`desc`) or oldest first
 * (`asc`). Fetches one row more than asked to know whether another page follows.
 */
export async function paginate<Row extends object, T>(
  query: Knex.QueryBuilder,
  column: string,
  cursorOf: (row: Row) => string | number,
  page: PageRequest,
  order: "asc" | "desc",
  map: (row: Row) => T,
): Promise<Page<T>> {
  if (page.after !== undefined) query.where(column, order === "desc" ? "<" : ">", page.after);
  const rows = (await query.orderBy(column, order).limit(page.limit + 1)) as Row[];
  const hasMore = rows.length > page.limit;
  const pageRows = hasMore ? rows.slice(0, page.limit) : rows;
  return {
    data: pageRows.map(map),
    has_more: hasMore,
    next_cursor: hasMore ? String(cursorOf(pageRows[pageRows.length - 1]!)) : null,
  };
}
