import type { Knex } from "knex";

// A version's declarations (`variables`) and the names it uses (`referenced_variables`) are JSON
// whose size the contract allows past MySQL's TEXT (65,535 bytes): 100 declarations with
// 500-character descriptions (up to 2,000 bytes each in UTF-8) and defaults of up to 64 KiB each
// (docs/templates.md#variables), and the names a large template reads. A longer value failed the
// save with a 500 (ER_DATA_TOO_LONG). MEDIUMTEXT holds 16 MiB. SQLite's TEXT has no such bound.
const COLUMNS = ["variables", "referenced_variables"] as const;

export async function up(knex: Knex): Promise<void> {
  if (knex.client.config.client !== "mysql2") return;
  await knex.schema.alterTable("template_versions", (t) => {
    for (const column of COLUMNS) t.text(column, "mediumtext").notNullable().alter();
  });
}

export async function down(knex: Knex): Promise<void> {
  if (knex.client.config.client !== "mysql2") return;
  await knex.schema.alterTable("template_versions", (t) => {
    for (const column of COLUMNS) t.text(column).notNullable().alter();
  });
}
