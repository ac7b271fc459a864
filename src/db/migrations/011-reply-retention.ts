import type { Knex } from "knex";

// Content retention covers inbound replies too (docs/retention.md): a reply keeps its text, HTML
// and attachments' bytes for the workspace's content_retention_days after it was received.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("inbound_messages", (t) => {
    t.bigInteger("content_removed_at").nullable();
    t.index(["workspace_id", "content_removed_at", "received_at"], "ix_inbound_messages__content_retention");
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("inbound_messages", (t) => {
    t.dropIndex(["workspace_id", "content_removed_at", "received_at"], "ix_inbound_messages__content_retention");
    t.dropColumn("content_removed_at");
  });
}
