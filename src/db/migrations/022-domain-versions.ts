import type { Knex } from "knex";

// A domain's records, keys and status are each rewritten from a read made earlier (a check looks
// DNS up for seconds, a rotation makes keys for ~0.3 s, updateDomain rebuilds the record list), so
// every such write is a compare-and-set on this counter, which each of them moves on
// (src/db/repositories/domains.ts). Comparing only the columns one writer changes let another's
// write through: a tracking domain set during a rotation dropped its waiting records.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("domains", (t) => {
    t.integer("version").notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("domains", (t) => t.dropColumn("version"));
}
