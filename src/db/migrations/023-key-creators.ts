import type { Knex } from "knex";

// Who created each API key (docs/api-keys.md): a member or another key. Null for the keys that
// bootstrap and sign-up make, and for keys created before this column.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("api_keys", (t) => {
    t.string("created_by_type", 16).nullable();
    t.string("created_by_id", 40).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("api_keys", (t) => {
    t.dropColumn("created_by_type");
    t.dropColumn("created_by_id");
  });
}
