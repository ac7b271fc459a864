import type { Knex } from "knex";
import { mysqlTable } from "./table-options.js";

// Live delivery (DESIGN.md §9): sending domains with their DKIM keys, the suppression list,
// usage counters, a workspace's monthly quota and a message's retry expiry.
export async function up(knex: Knex): Promise<void> {
  // A domain belongs to the workspace and serves both environments (DESIGN.md §6).
  await knex.schema.createTable("domains", (t) => {
    mysqlTable(knex, t);
    t.string("id", 40).primary();
    t.string("workspace_id", 40).notNullable().references("id").inTable("workspaces");
    t.string("name", 253).notNullable();
    t.string("status", 16).notNullable();
    t.string("return_path_domain", 253).notNullable();
    // JSON: [{ selector, algorithm, dns_value, private_key }] with each private key sealed
    // (AES-GCM under a key derived from SECRET_KEY): a database dump alone cannot sign mail.
    t.text("dkim_keys").notNullable();
    // JSON: the records to publish and their status at the last verification.
    t.text("records").notNullable();
    t.bigInteger("created_at").notNullable();
    t.bigInteger("verified_at").nullable();
    t.bigInteger("last_checked_at").nullable();
    t.unique(["workspace_id", "name"], { indexName: "uq_domains__workspace_name" });
    t.index(["workspace_id", "id"], "ix_domains__scope");
  });

  // Per environment: a sandbox bounce never suppresses a live address, and the reverse.
  await knex.schema.createTable("suppressions", (t) => {
    mysqlTable(knex, t);
    t.string("id", 40).primary();
    t.string("workspace_id", 40).notNullable().references("id").inTable("workspaces");
    t.string("environment", 8).notNullable();
    // Lower-cased: suppression matches an address whatever its capitalisation.
    t.string("email", 320).notNullable();
    t.string("reason", 16).notNullable();
    t.string("message_id", 40).nullable();
    t.text("detail").nullable();
    t.bigInteger("created_at").notNullable();
    t.unique(["workspace_id", "environment", "email"], { indexName: "uq_suppressions__email" });
    t.index(["workspace_id", "environment", "id"], "ix_suppressions__scope");
  });

  // Live messages and recipients accepted per workspace and UTC day ("YYYY-MM-DD"), counted in
  // the transaction that accepts them; months are sums of days.
  await knex.schema.createTable("usage_counters", (t) => {
    mysqlTable(knex, t);
    t.string("workspace_id", 40).notNullable();
    t.string("day", 10).notNullable();
    t.bigInteger("messages").notNullable();
    t.bigInteger("recipients").notNullable();
    t.primary(["workspace_id", "day"]);
  });

  await knex.schema.alterTable("workspaces", (t) => {
    t.bigInteger("monthly_quota").nullable();
  });
  await knex.schema.alterTable("messages", (t) => {
    t.bigInteger("expires_at").nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("messages", (t) => t.dropColumn("expires_at"));
  await knex.schema.alterTable("workspaces", (t) => t.dropColumn("monthly_quota"));
  for (const table of ["usage_counters", "suppressions", "domains"]) await knex.schema.dropTableIfExists(table);
}
