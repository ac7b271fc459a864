/**
 * Driver errors that mean "the database cannot be reached right now", by driver code (never by
 * message text). Such a request stored nothing, so the API answers 503 with Retry-After instead
 * of a 500: a client should retry it, with the same Idempotency-Key.
 */
const UNAVAILABLE_CODES = new Set([
  // network, from mysql2 and Node
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "EPIPE",
  "PROTOCOL_CONNECTION_LOST",
  // MySQL/MariaDB server states
  "ER_CON_COUNT_ERROR",
  "ER_SERVER_SHUTDOWN",
  "ER_LOCK_WAIT_TIMEOUT",
  "ER_LOCK_DEADLOCK",
  // SQLite: another process held the write lock past busy_timeout
  "SQLITE_BUSY",
]);

export function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, name } = error as { code?: unknown; name?: unknown };
  return (typeof code === "string" && UNAVAILABLE_CODES.has(code)) || name === "KnexTimeoutError";
}

/**
 * Whether an error is a unique-key violation, by driver code. Neither driver reports the index
 * name apart from its message text, so a repository names the constraint itself: it calls this
 * only around an insert whose table has one unique key besides a freshly generated primary key.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code } = error as { code?: unknown };
  return code === "ER_DUP_ENTRY" || code === "SQLITE_CONSTRAINT_UNIQUE";
}
