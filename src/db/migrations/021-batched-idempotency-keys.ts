import type { Knex } from "knex";

// A batch's messages store its Idempotency-Key as `<key>#<index>`, which a single message could
// also be sent with literally ("orders#0"): under one unique key the two requests found each
// other's message. The origin is now part of the slot, so they are two slots. Rows stored before
// this migration count as single messages; a batch crashed across the upgrade, retried within the
// key's retention, would store its messages again rather than find them.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("messages", (t) => {
    t.boolean("idempotency_batched").notNullable().defaultTo(false);
  });
  await knex.schema.alterTable("messages", (t) => {
    t.dropUnique(["workspace_id", "environment", "idempotency_key"], "uq_messages__idempotency_key");
    t.unique(["workspace_id", "environment", "idempotency_batched", "idempotency_key"], { indexName: "uq_messages__idempotency_key" });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("messages", (t) => {
    t.dropUnique(["workspace_id", "environment", "idempotency_batched", "idempotency_key"], "uq_messages__idempotency_key");
    t.unique(["workspace_id", "environment", "idempotency_key"], { indexName: "uq_messages__idempotency_key" });
  });
  await knex.schema.alterTable("messages", (t) => {
    t.dropColumn("idempotency_batched");
  });
}
