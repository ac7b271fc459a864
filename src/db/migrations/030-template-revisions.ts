import type { Knex } from "knex";

// A template's revision counts the changes to its versions (a draft saved or made, a publish or
// rollback), so updateTemplate's base_revision can refuse an edit made on an older state: an
// editor holding what it read earlier would otherwise put it back over a draft saved, or a
// version published, since. latest_version cannot tell: a draft changes in place, and a publish
// or rollback leaves it as it is. Existing templates start at 1, as a new one does.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("templates", (t) => {
    t.integer("revision").notNullable().defaultTo(1);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("templates", (t) => {
    t.dropColumn("revision");
  });
}
