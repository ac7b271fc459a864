import type { Knex } from "knex";

// A disabled endpoint's deliveries leave the claim index (docs/webhooks.md#disabling): they are
// `parked`, and the index leads with that flag, so a claim no longer walks past a dead endpoint's
// backlog (200,000 rows cost each claim ~100 ms, holding SQLite's writer). Endpoints count their
// enabled/disabled flips (`parking_epoch`) and the flip their deliveries were last brought in line
// with (`parked_epoch`); src/webhooks/parking.ts closes the gap. Existing disabled endpoints start
// one flip ahead, so their backlogs are parked once after the upgrade.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("webhook_deliveries", (t) => {
    t.boolean("parked").notNullable().defaultTo(false);
    t.dropIndex(["state", "due_at", "event_id"], "ix_webhook_deliveries__due");
  });
  await knex.schema.alterTable("webhook_deliveries", (t) => {
    t.index(["state", "parked", "due_at", "event_id"], "ix_webhook_deliveries__due");
  });
  await knex.schema.alterTable("webhook_endpoints", (t) => {
    t.integer("parking_epoch").notNullable().defaultTo(0);
    t.integer("parked_epoch").notNullable().defaultTo(0);
  });
  await knex("webhook_endpoints").where({ enabled: false }).update({ parking_epoch: 1 });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("webhook_endpoints", (t) => {
    t.dropColumn("parking_epoch");
    t.dropColumn("parked_epoch");
  });
  await knex.schema.alterTable("webhook_deliveries", (t) => {
    t.dropIndex(["state", "parked", "due_at", "event_id"], "ix_webhook_deliveries__due");
  });
  await knex.schema.alterTable("webhook_deliveries", (t) => {
    t.dropColumn("parked");
    t.index(["state", "due_at", "event_id"], "ix_webhook_deliveries__due");
  });
}
