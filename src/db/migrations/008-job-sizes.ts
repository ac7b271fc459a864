import type { Knex } from "knex";

// A delivery job carries the size of its message's content, so that a worker can keep the
// messages it holds within its byte budget (DELIVERY_MAX_BYTES_IN_HAND) before it loads them.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("jobs", (t) => t.bigInteger("content_bytes").notNullable().defaultTo(0));
  // Jobs still queued when this runs: their messages' content, as the accept path measures it
  // (characters on SQLite, bytes on MySQL; an estimate either way).
  await knex("jobs").update({
    content_bytes: knex.raw(
      "COALESCE((SELECT COALESCE(LENGTH(m.subject), 0) + COALESCE(LENGTH(m.html), 0) + COALESCE(LENGTH(m.text), 0) + COALESCE(LENGTH(m.attachments), 0) FROM messages m WHERE m.id = jobs.message_id), 0)",
    ),
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("jobs", (t) => t.dropColumn("content_bytes"));
}
