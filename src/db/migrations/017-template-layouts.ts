import type { Knex } from "knex";

// Template layouts (docs/templates.md#layouts). A template's kind is chosen at creation; the
// layout a version is sent in is part of the version's content (a slug, as the wire gives it),
// so changing it waits for a publish like any edit. A message keeps which layout version it was
// rendered in, beside its template reference.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("templates", (t) => t.string("kind", 16).notNullable().defaultTo("standard"));
  await knex.schema.alterTable("template_versions", (t) => {
    t.string("layout", 64).nullable();
    // Deleting a layout asks which templates' published versions or drafts still use it.
    t.index(["layout", "state"], "ix_template_versions__layout");
  });
  await knex.schema.alterTable("messages", (t) => {
    t.string("layout_id", 40).nullable();
    t.string("layout_slug", 64).nullable();
    t.integer("layout_version").nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("messages", (t) => {
    t.dropColumn("layout_id");
    t.dropColumn("layout_slug");
    t.dropColumn("layout_version");
  });
  await knex.schema.alterTable("template_versions", (t) => {
    t.dropIndex([], "ix_template_versions__layout");
    t.dropColumn("layout");
  });
  await knex.schema.alterTable("templates", (t) => t.dropColumn("kind"));
}
