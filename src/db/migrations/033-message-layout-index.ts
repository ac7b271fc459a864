import type { Knex } from "knex";

// Deleting a layout asks whether a scheduled message rendered in it still waits to be sent
// (docs/templates.md#deleting), as deleting a template asks by template_id
// (ix_messages__template_status): without this, that question scans the messages.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("messages", (t) => {
    t.index(["layout_id", "status"], "ix_messages__layout_status");
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("messages", (t) => {
    t.dropIndex([], "ix_messages__layout_status");
  });
}
