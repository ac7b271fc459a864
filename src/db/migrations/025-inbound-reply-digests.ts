import type { Knex } from "knex";

// A reply is stored once per message it is threaded to (docs/inbound.md#replies): a sending MTA
// that lost the 250 delivers it again, maybe to another smtp node at the same moment, and the
// unique key settles it where a read before the write could not. The digest is SHA-256 of the
// reply's Message-ID (else of its bytes), since the field itself may be 998 characters, past what
// a MySQL index takes. Replies stored before this have none (NULL never conflicts): a retry of
// one of them across the upgrade is stored again, as it was before. The digest leads the key: led
// by message_id, the key would stand in for the index MySQL made for that column's foreign key,
// which then drops it, and the key could not be dropped again.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("inbound_messages", (t) => {
    t.string("reply_digest", 64).nullable();
    t.unique(["reply_digest", "message_id"], { indexName: "uq_inbound_messages__reply" });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("inbound_messages", (t) => {
    t.dropUnique(["reply_digest", "message_id"], "uq_inbound_messages__reply");
    t.dropColumn("reply_digest");
  });
}
