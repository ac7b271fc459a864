import type { Knex } from "knex";

/**
 * On MySQL every table is utf8mb4 with a binary collation, so ids, digests and Idempotency-Keys
 * compare case-sensitively (SQLite already does).
 */
export function mysqlTable(knex: Knex, table: Knex.CreateTableBuilder): void {
  if (knex.client.config.client === "mysql2") {
    table.charset("utf8mb4");
    table.collate("utf8mb4_bin");
  }
}
