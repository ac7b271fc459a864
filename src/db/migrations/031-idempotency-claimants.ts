import type { Knex } from "knex";

// Who claimed an Idempotency-Key (the API key's or the member's id, as an Actor's id), so that a
// finished answer is replayed, and a crashed claim taken over, only for the caller who made it.
// Without it, anyone in the workspace and environment who learnt a key (the request log shows
// keys) could replay an answer they may not see themselves: an admin's new full_access key and
// its secret, to a developer. Null on keys claimed before: those match any caller, as they did,
// until they expire (IDEMPOTENCY_RETENTION_HOURS).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("idempotency_keys", (t) => {
    t.string("claimed_by", 64).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("idempotency_keys", (t) => {
    t.dropColumn("claimed_by");
  });
}
