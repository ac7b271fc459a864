import type { Knex } from "knex";
import { mysqlTable } from "./table-options.js";

// The request log (docs/request-log.md): one row per authenticated /v1 request, under its
// Request-Id. Request ids order by time, so one index serves the newest-first listing per
// (workspace, environment), and the primary key serves pruning by age.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("request_logs", (t) => {
    mysqlTable(knex, t);
    t.string("id", 40).primary();
    t.string("workspace_id", 40).notNullable();
    t.string("environment", 8).notNullable();
    t.string("method", 8).notNullable();
    t.string("path", 1024).notNullable();
    t.string("operation", 100).nullable();
    t.integer("status").notNullable();
    t.string("error_code", 100).nullable();
    // The problem document answered, as JSON, when the request failed.
    t.text("error").nullable();
    t.double("duration_ms").notNullable();
    t.string("credential_type", 16).notNullable();
    t.string("credential_id", 40).notNullable();
    t.string("ip_address", 64).nullable();
    t.string("user_agent", 300).nullable();
    t.string("idempotency_key", 255).nullable();
    t.boolean("idempotent_replayed").notNullable();
    t.bigInteger("created_at").notNullable();
    t.index(["workspace_id", "environment", "id"], "ix_request_logs__scope");
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable("request_logs");
}
