import type { Knex } from "knex";
import { mysqlTable } from "./table-options.js";

// Conventions: ids are prefixed strings; timestamps are BIGINT epoch milliseconds (one
// representation in both databases); JSON is TEXT, parsed by repositories.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("workspaces", (t) => {
    mysqlTable(knex, t);
    t.string("id", 40).primary();
    t.string("name", 100).notNullable();
    t.string("default_from", 512).nullable();
    t.bigInteger("created_at").notNullable();
    t.bigInteger("updated_at").notNullable();
  });

  await knex.schema.createTable("api_keys", (t) => {
    mysqlTable(knex, t);
    t.string("id", 40).primary();
    t.string("workspace_id", 40).notNullable().references("id").inTable("workspaces");
    t.string("environment", 8).notNullable();
    t.string("name", 100).notNullable();
    t.string("permission", 16).notNullable();
    t.string("redacted_key", 32).notNullable();
    t.bigInteger("expires_at").nullable();
    t.bigInteger("revoked_at").nullable();
    t.bigInteger("last_used_at").nullable();
    t.bigInteger("created_at").notNullable();
    t.index(["workspace_id", "environment", "id"], "ix_api_keys__scope");
  });

  // A key may have two live secrets during a rotation's overlap; each is one row.
  await knex.schema.createTable("api_key_secrets", (t) => {
    mysqlTable(knex, t);
    t.string("digest", 64).primary();
    t.string("api_key_id", 40).notNullable().references("id").inTable("api_keys");
    t.string("redacted_key", 32).notNullable();
    t.bigInteger("expires_at").nullable();
    t.bigInteger("created_at").notNullable();
    t.index(["api_key_id"], "ix_api_key_secrets__key");
  });

  await knex.schema.createTable("messages", (t) => {
    mysqlTable(knex, t);
    t.string("id", 40).primary();
    t.string("workspace_id", 40).notNullable().references("id").inTable("workspaces");
    t.string("environment", 8).notNullable();
    t.string("status", 16).notNullable();
    t.string("from_mailbox", 512).notNullable();
    t.text("to_list").notNullable();
    t.text("cc_list").notNullable();
    t.text("bcc_list").notNullable();
    t.text("reply_to_list").notNullable();
    t.text("subject").notNullable();
    t.text("html", "longtext").nullable();
    t.text("text", "longtext").nullable();
    t.text("headers").notNullable();
    t.text("attachments", "longtext").notNullable();
    t.text("tags").notNullable();
    t.text("metadata").notNullable();
    t.bigInteger("scheduled_at").nullable();
    t.string("idempotency_key", 255).nullable();
    t.string("message_id_header", 300).notNullable();
    t.text("mime", "longtext").nullable();
    t.integer("event_seq").notNullable();
    t.bigInteger("created_at").notNullable();
    t.bigInteger("updated_at").notNullable();
    t.index(["workspace_id", "environment", "id"], "ix_messages__scope");
    t.index(["workspace_id", "environment", "status", "id"], "ix_messages__status");
    t.unique(["workspace_id", "environment", "idempotency_key"], { indexName: "uq_messages__idempotency_key" });
  });

  await knex.schema.createTable("message_recipients", (t) => {
    mysqlTable(knex, t);
    t.increments("id").primary();
    t.string("message_id", 40).notNullable().references("id").inTable("messages");
    t.string("workspace_id", 40).notNullable();
    t.string("environment", 8).notNullable();
    t.integer("position").notNullable();
    t.string("type", 3).notNullable();
    t.string("email", 320).notNullable();
    t.string("email_search", 320).notNullable();
    t.string("name", 200).nullable();
    t.string("status", 16).notNullable();
    t.text("detail").nullable();
    t.integer("attempts").notNullable().defaultTo(0);
    t.bigInteger("updated_at").notNullable();
    t.index(["message_id", "position"], "ix_message_recipients__message");
    t.index(["workspace_id", "environment", "email_search", "message_id"], "ix_message_recipients__search");
  });

  await knex.schema.createTable("message_tags", (t) => {
    mysqlTable(knex, t);
    t.string("message_id", 40).notNullable().references("id").inTable("messages");
    t.string("workspace_id", 40).notNullable();
    t.string("environment", 8).notNullable();
    t.string("tag", 64).notNullable();
    t.primary(["message_id", "tag"]);
    t.index(["workspace_id", "environment", "tag", "message_id"], "ix_message_tags__search");
  });

  await knex.schema.createTable("events", (t) => {
    mysqlTable(knex, t);
    t.string("id", 40).primary();
    t.string("workspace_id", 40).notNullable();
    t.string("environment", 8).notNullable();
    t.string("message_id", 40).notNullable().references("id").inTable("messages");
    t.string("recipient", 320).nullable();
    t.string("type", 32).notNullable();
    t.integer("sequence").notNullable();
    t.string("from_status", 16).nullable();
    t.string("to_status", 16).nullable();
    t.text("data").notNullable();
    t.bigInteger("created_at").notNullable();
    t.index(["workspace_id", "environment", "id"], "ix_events__scope");
    t.index(["workspace_id", "environment", "type", "id"], "ix_events__type");
    t.unique(["message_id", "sequence"], { indexName: "uq_events__message_sequence" });
  });

  // The outbox: a job row is written in the same transaction as the message it delivers.
  await knex.schema.createTable("jobs", (t) => {
    mysqlTable(knex, t);
    t.increments("id").primary();
    t.string("kind", 32).notNullable();
    t.string("message_id", 40).notNullable();
    t.string("workspace_id", 40).notNullable();
    t.string("environment", 8).notNullable();
    t.bigInteger("run_at").notNullable();
    t.integer("attempts").notNullable().defaultTo(0);
    t.string("locked_by", 64).nullable();
    t.bigInteger("locked_until").nullable();
    t.bigInteger("created_at").notNullable();
    t.index(["run_at", "id"], "ix_jobs__due");
    t.unique(["kind", "message_id"], { indexName: "uq_jobs__kind_message" });
  });

  await knex.schema.createTable("idempotency_keys", (t) => {
    mysqlTable(knex, t);
    t.string("workspace_id", 40).notNullable();
    t.string("environment", 8).notNullable();
    t.string("idempotency_key", 255).notNullable();
    t.primary(["workspace_id", "environment", "idempotency_key"]);
    t.string("fingerprint", 64).notNullable();
    t.string("claim_token", 32).notNullable();
    t.string("state", 12).notNullable();
    t.integer("response_status").nullable();
    t.text("response", "longtext").nullable();
    t.bigInteger("locked_until").notNullable();
    t.bigInteger("created_at").notNullable();
    t.bigInteger("expires_at").notNullable();
    t.index(["expires_at"], "ix_idempotency_keys__expiry");
  });

  await knex.schema.createTable("rate_limit_counters", (t) => {
    mysqlTable(knex, t);
    t.string("bucket", 120).primary();
    t.integer("count").notNullable();
    t.bigInteger("expires_at").notNullable();
    t.index(["expires_at"], "ix_rate_limit_counters__expiry");
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ["rate_limit_counters", "idempotency_keys", "jobs", "events", "message_tags", "message_recipients", "messages", "api_key_secrets", "api_keys", "workspaces"]) {
    await knex.schema.dropTableIfExists(table);
  }
}
