import type { Knex } from "knex";

// A bounce is hard or soft (`bounce_type` in its JSON data); metrics (docs/metrics.md) count the
// two apart in SQL over many events, so the type gets a column of its own, as `automated` did.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("events", (t) => t.string("bounce_type", 8).nullable());
  // Bounces written before this migration: the data is this product's own JSON.stringify output,
  // so the type appears exactly as matched here.
  for (const type of ["hard", "soft"]) {
    await knex("events").where("type", "message.bounced").andWhere("data", "like", `%"bounce_type":"${type}"%`).update({ bounce_type: type });
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("events", (t) => t.dropColumn("bounce_type"));
}
