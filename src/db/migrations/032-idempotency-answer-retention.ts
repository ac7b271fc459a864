import type { Knex } from "knex";

// A stored answer can hold a message's content (or a new key's secret), so a workspace's content
// retention removes it early; the key itself is kept for its whole window (expires_at), so that a
// different request or another caller under it is still refused, and its own retry is told what
// became of it rather than run again. `answer_expires_at`: when the answer goes (null: with the
// key). `response_location`: the answer's Location, kept outside the sealed answer so that a
// retry after the answer went can still name what the request created (an id, no content).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("idempotency_keys", (t) => {
    t.bigInteger("answer_expires_at").nullable();
    t.string("response_location", 512).nullable();
    t.index(["answer_expires_at"], "ix_idempotency_keys__answer_expiry");
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("idempotency_keys", (t) => {
    t.dropIndex(["answer_expires_at"], "ix_idempotency_keys__answer_expiry");
    t.dropColumn("response_location");
    t.dropColumn("answer_expires_at");
  });
}
