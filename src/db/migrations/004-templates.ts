import type { Knex } from "knex";
import { mysqlTable } from "./table-options.js";

// Templates (docs/templates.md): a template belongs to the workspace and serves both environments
// (DESIGN.md §6); its content lives in numbered versions, and a message records which it used.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("templates", (t) => {
    mysqlTable(knex, t);
    t.string("id", 40).primary();
    t.string("workspace_id", 40).notNullable().references("id").inTable("workspaces");
    // Permanent: messages and code address the template by it, so it never changes.
    t.string("slug", 64).notNullable();
    t.string("name", 200).notNullable();
    t.integer("published_version").nullable();
    // The newest version's number; the draft, when there is one, is always this version.
    t.integer("latest_version").notNullable();
    t.bigInteger("created_at").notNullable();
    t.bigInteger("updated_at").notNullable();
    t.unique(["workspace_id", "slug"], { indexName: "uq_templates__workspace_slug" });
    t.index(["workspace_id", "id"], "ix_templates__scope");
  });

  await knex.schema.createTable("template_versions", (t) => {
    mysqlTable(knex, t);
    t.string("template_id", 40).notNullable().references("id").inTable("templates");
    t.integer("version").notNullable();
    t.string("state", 16).notNullable();
    t.text("subject").notNullable();
    t.text("html", "mediumtext").notNullable();
    // Null: derived from the rendered html.
    t.text("text", "mediumtext").nullable();
    // JSON: the declared variables.
    t.text("variables").notNullable();
    // JSON: the variables each field uses, {subject, html, text: [names]}, found when the version
    // is saved. Sends accept these undeclared (docs/templates.md#variables); kept per field so an
    // edit of one field needs to analyse only that field.
    t.text("referenced_variables").notNullable();
    t.bigInteger("created_at").notNullable();
    t.bigInteger("updated_at").notNullable();
    t.bigInteger("published_at").nullable();
    t.primary(["template_id", "version"]);
  });

  await knex.schema.alterTable("messages", (t) => {
    // Copied, not joined: a message keeps naming what it was rendered from after the template is deleted.
    t.string("template_id", 40).nullable();
    t.string("template_slug", 64).nullable();
    t.integer("template_version").nullable();
    // listMessages?template=slug pages newest first within the tenant.
    t.index(["workspace_id", "environment", "template_slug", "id"], "ix_messages__template");
    // deleteTemplate looks for scheduled messages that still need the template.
    t.index(["template_id", "status"], "ix_messages__template_status");
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("messages", (t) => {
    t.dropIndex([], "ix_messages__template_status");
    t.dropIndex([], "ix_messages__template");
    t.dropColumn("template_version");
    t.dropColumn("template_slug");
    t.dropColumn("template_id");
  });
  for (const table of ["template_versions", "templates"]) await knex.schema.dropTableIfExists(table);
}
