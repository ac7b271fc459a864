import type { Knex } from "knex";

// Content retention (docs/retention.md): a workspace may keep finished messages' content for a
// set number of days; the maintenance round then removes it and stamps the message.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("workspaces", (t) => {
    t.integer("content_retention_days").nullable();
  });
  await knex.schema.alterTable("messages", (t) => {
    t.bigInteger("content_removed_at").nullable();
    // The removal's search: a workspace's messages still holding content, oldest first.
    t.index(["workspace_id", "content_removed_at", "created_at"], "ix_messages__content_retention");
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("messages", (t) => {
    t.dropIndex(["workspace_id", "content_removed_at", "created_at"], "ix_messages__content_retention");
    t.dropColumn("content_removed_at");
  });
  await knex.schema.alterTable("workspaces", (t) => t.dropColumn("content_retention_days"));
}
