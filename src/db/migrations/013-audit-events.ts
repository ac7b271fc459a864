import type { Knex } from "knex";
import { mysqlTable } from "./table-options.js";

// The audit log (docs/audit-log.md): one row per successful change made through /v1, per
// environment whose log shows it. Read newest first per (workspace, environment), filtered at
// times by actor or target; the id orders by time, so one index serves the listing.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("audit_events", (t) => {
    mysqlTable(knex, t);
    t.string("id", 40).primary();
    t.string("workspace_id", 40).notNullable();
    t.string("environment", 8).notNullable();
    t.string("operation", 100).notNullable();
    t.string("actor_type", 16).notNullable();
    t.string("actor_id", 40).notNullable();
    t.string("target_type", 32).notNullable();
    t.string("target_id", 255).nullable();
    // The request's top-level field names, as JSON; never their values.
    t.text("fields").notNullable();
    t.string("ip_address", 64).nullable();
    t.string("request_id", 64).notNullable();
    t.bigInteger("created_at").notNullable();
    t.index(["workspace_id", "environment", "id"], "ix_audit_events__scope");
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable("audit_events");
}
