import type { Knex } from "knex";
import { mysqlTable } from "./table-options.js";

// A deleted webhook endpoint's deliveries and attempts are removed a slice at a time by the
// maintenance round, not by the request that deletes it: a dead endpoint's backlog can run to
// millions of rows, and one statement would hold SQLite's only writer (or MySQL's locks and undo
// log) for all of them. This table lists the endpoints whose rows are still to go.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("webhook_endpoint_purges", (t) => {
    mysqlTable(knex, t);
    t.string("endpoint_id", 40).primary();
    t.bigInteger("deleted_at").notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists("webhook_endpoint_purges");
}
