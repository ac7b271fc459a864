import type { Knex } from "knex";

// The address an API key was last used from, stamped with last_used_at (docs/api-keys.md): a key
// used from somewhere unexpected is the first sign of a leak.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("api_keys", (t) => t.string("last_used_ip", 64).nullable());
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("api_keys", (t) => t.dropColumn("last_used_ip"));
}
