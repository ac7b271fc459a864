import type { Knex } from "knex";
import { mysqlTable } from "./table-options.js";

// Inbound replies (DESIGN.md §10, docs/inbound.md): each reply threaded to a message, and its
// attachments' content, which the API serves for download. Bounces and complaints are not
// stored here: they are events on the message they are about.
export async function up(knex: Knex): Promise<void> {
  // The SMTP server asks, for every RCPT TO, whether the domain is someone's return path.
  await knex.schema.alterTable("domains", (t) => t.index(["return_path_domain"], "ix_domains__return_path"));

  await knex.schema.createTable("inbound_messages", (t) => {
    mysqlTable(knex, t);
    t.string("id", 40).primary();
    t.string("workspace_id", 40).notNullable();
    t.string("environment", 8).notNullable();
    t.string("message_id", 40).notNullable().references("id").inTable("messages");
    // The original recipient it came from; null when the sender was none of them.
    t.string("recipient", 320).nullable();
    t.text("from_mailbox").notNullable();
    t.text("to_list").notNullable();
    t.text("subject").notNullable();
    t.text("text", "longtext").nullable();
    t.text("quoted_text", "longtext").nullable();
    t.text("html", "longtext").nullable();
    t.string("message_id_header", 998).nullable();
    t.string("in_reply_to", 998).nullable();
    t.text("authentication").notNullable();
    t.string("threaded_by", 16).notNullable();
    t.boolean("simulated").notNullable().defaultTo(false);
    t.bigInteger("received_at").notNullable();
    t.index(["workspace_id", "environment", "message_id", "id"], "ix_inbound_messages__message");
  });

  await knex.schema.createTable("inbound_attachments", (t) => {
    mysqlTable(knex, t);
    t.string("inbound_id", 40).notNullable().references("id").inTable("inbound_messages");
    t.integer("position").notNullable();
    t.text("filename").nullable();
    t.string("content_type", 255).notNullable();
    t.text("content_id").nullable();
    t.integer("size").notNullable();
    // Bytes as received (decoded from their transfer encoding); MySQL's BLOB stops at 64 KiB.
    if (knex.client.config.client === "mysql2") t.specificType("content", "longblob").notNullable();
    else t.binary("content").notNullable();
    t.primary(["inbound_id", "position"]);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists("inbound_attachments");
  await knex.schema.dropTableIfExists("inbound_messages");
  await knex.schema.alterTable("domains", (t) => t.dropIndex(["return_path_domain"], "ix_domains__return_path"));
}
