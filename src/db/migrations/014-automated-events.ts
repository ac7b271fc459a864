import type { Knex } from "knex";

// Opens by image proxies and clicks by link scanners are events like any other, flagged in their
// JSON data (`machine_open`, `machine_click`). Metrics (docs/metrics.md) count them apart from
// people's, in SQL over many events, so the flag gets a column of its own.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("events", (t) => t.boolean("automated").notNullable().defaultTo(false));
  // Events written before this migration: the data is this product's own JSON.stringify output,
  // so the flag appears exactly as matched here.
  await knex("events")
    .whereIn("type", ["message.opened", "message.clicked"])
    .andWhere((q) => q.where("data", "like", '%"machine_open":true%').orWhere("data", "like", '%"machine_click":true%'))
    .update({ automated: true });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("events", (t) => t.dropColumn("automated"));
}
