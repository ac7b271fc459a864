import type { Knex } from "knex";

// An API key's limits (docs/api-keys.md): allowed client addresses, sender and recipient
// domains, as one JSON document read with the key on every request; null for none. Nothing
// queries inside it, so a JSON column type (which SQLite lacks) would buy nothing.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("api_keys", (t) => {
    t.text("restrictions").nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("api_keys", (t) => {
    t.dropColumn("restrictions");
  });
}
