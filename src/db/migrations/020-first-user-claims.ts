import type { Knex } from "knex";
import { mysqlTable } from "./table-options.js";

// On an invitation-only install, only the first user may sign up without an invitation. "No user
// yet" is a check on rows that do not exist, which nothing can lock under READ COMMITTED (no gap
// locks), so two first sign-ups at once could both pass it. Each inserts this table's one row
// (id 1) in its sign-up transaction instead: the second waits for the first and finds it taken.
// Installs that already have users never insert it: the check on users refuses them first.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("first_user_claims", (t) => {
    mysqlTable(knex, t);
    t.integer("id").primary();
    t.string("user_id", 40).notNullable();
    t.bigInteger("claimed_at").notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists("first_user_claims");
}
