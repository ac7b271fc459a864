/**
 * Entries sorted by their key, in code-unit order (the same in every process, unlike
 * localeCompare). A writer that locks several rows in one transaction takes them in this order:
 * two transactions taking the same rows' locks in different orders deadlock on MySQL.
 */
export function inLockOrder<T>(entries: Iterable<readonly [string, T]>): Array<readonly [string, T]> {
  return [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
