import type { Knex } from "knex";
import { mysqlTable } from "./table-options.js";

// Webhooks (DESIGN.md §10): endpoints per environment, what each subscribes to, a durable
// delivery queue filled in the transaction that writes the events, and every attempt made.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("webhook_endpoints", (t) => {
    mysqlTable(knex, t);
    t.string("id", 40).primary();
    t.string("workspace_id", 40).notNullable().references("id").inTable("workspaces");
    t.string("environment", 8).notNullable();
    t.string("url", 2048).notNullable();
    t.text("description").nullable();
    // JSON array as the API shows it, null = every type; webhook_subscriptions is what fan-out reads.
    t.text("event_types").nullable();
    t.boolean("enabled").notNullable();
    t.string("disabled_reason", 16).nullable();
    t.bigInteger("disabled_at").nullable();
    t.bigInteger("failing_since").nullable();
    // Sealed (AES-GCM under a key derived from SECRET_KEY), like DKIM keys: a dump cannot sign.
    t.text("secret").notNullable();
    t.text("previous_secret").nullable();
    t.bigInteger("previous_secret_expires_at").nullable();
    t.bigInteger("created_at").notNullable();
    t.bigInteger("updated_at").notNullable();
    t.index(["workspace_id", "environment", "id"], "ix_webhook_endpoints__scope");
  });

  // One row per (endpoint, event type), '*' for every type: fan-out is one INSERT … SELECT.
  await knex.schema.createTable("webhook_subscriptions", (t) => {
    mysqlTable(knex, t);
    t.string("endpoint_id", 40).notNullable();
    t.string("event_type", 32).notNullable();
    t.string("workspace_id", 40).notNullable();
    t.string("environment", 8).notNullable();
    t.primary(["endpoint_id", "event_type"]);
    t.index(["workspace_id", "environment", "event_type"], "ix_webhook_subscriptions__fan_out");
  });

  // The queue. One row per (endpoint, event): redelivery and replay re-queue the same row, so
  // the event id stays the webhook-id. No foreign keys: fan-out and outcomes write in batches
  // that a concurrent endpoint deletion must not fail.
  await knex.schema.createTable("webhook_deliveries", (t) => {
    mysqlTable(knex, t);
    t.string("endpoint_id", 40).notNullable();
    t.string("event_id", 40).notNullable();
    t.string("state", 16).notNullable(); // pending | succeeded | failed
    t.integer("attempts").notNullable();
    t.bigInteger("due_at").notNullable();
    t.string("locked_by", 64).nullable();
    t.bigInteger("locked_until").nullable();
    t.bigInteger("last_attempt_at").nullable();
    // The event's creation time (replay's `since`, and the creation-to-receipt latency).
    t.bigInteger("event_created_at").notNullable();
    // Test events (testWebhook) have no event row: their sample payload travels here.
    t.text("payload").nullable();
    t.bigInteger("created_at").notNullable();
    t.primary(["endpoint_id", "event_id"]);
    t.index(["state", "due_at", "event_id"], "ix_webhook_deliveries__due");
    t.index(["endpoint_id", "state", "event_created_at"], "ix_webhook_deliveries__replay");
    t.index(["state", "last_attempt_at"], "ix_webhook_deliveries__settled");
  });

  await knex.schema.createTable("webhook_attempts", (t) => {
    mysqlTable(knex, t);
    t.string("id", 40).primary();
    t.string("endpoint_id", 40).notNullable();
    t.string("event_id", 40).notNullable();
    t.integer("attempt").notNullable();
    t.string("status", 16).notNullable();
    t.integer("response_status").nullable();
    t.text("response_body").nullable();
    t.string("error", 32).nullable();
    t.integer("duration_ms").notNullable();
    t.bigInteger("created_at").notNullable();
    t.index(["endpoint_id", "id"], "ix_webhook_attempts__endpoint");
    t.index(["endpoint_id", "event_id", "id"], "ix_webhook_attempts__event");
    t.index(["created_at"], "ix_webhook_attempts__created");
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ["webhook_attempts", "webhook_deliveries", "webhook_subscriptions", "webhook_endpoints"]) await knex.schema.dropTableIfExists(table);
}
