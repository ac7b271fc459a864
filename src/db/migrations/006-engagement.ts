import type { Knex } from "knex";

// Tracking and engagement (DESIGN.md §10): what each message tracks (decided at acceptance from
// its own options, else the domain's, else the workspace's defaults), what its recipients did,
// and those defaults. Counters and first-time stamps are kept on the rows the API reads, so
// listing messages needs no aggregate over events.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("messages", (t) => {
    t.boolean("track_opens").notNullable().defaultTo(false);
    t.boolean("track_clicks").notNullable().defaultTo(false);
    t.boolean("track_replies").notNullable().defaultTo(false);
    t.boolean("unsubscribe").notNullable().defaultTo(false);
    // Human engagement only: machine opens and link-scanner clicks are events, not counts.
    t.integer("opens").notNullable().defaultTo(0);
    t.integer("clicks").notNullable().defaultTo(0);
    t.integer("replies").notNullable().defaultTo(0);
  });
  await knex.schema.alterTable("message_recipients", (t) => {
    t.bigInteger("opened_at").nullable();
    t.bigInteger("clicked_at").nullable();
    t.bigInteger("replied_at").nullable();
    t.bigInteger("complained_at").nullable();
    t.bigInteger("unsubscribed_at").nullable();
  });
  await knex.schema.alterTable("workspaces", (t) => {
    t.boolean("track_opens").notNullable().defaultTo(false);
    t.boolean("track_clicks").notNullable().defaultTo(false);
    t.boolean("track_replies").notNullable().defaultTo(false);
    t.boolean("unsubscribe").notNullable().defaultTo(false);
  });
  await knex.schema.alterTable("domains", (t) => {
    // null: follow the workspace's default.
    t.boolean("track_opens").nullable();
    t.boolean("track_clicks").nullable();
    t.string("tracking_domain", 253).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("domains", (t) => t.dropColumns("track_opens", "track_clicks", "tracking_domain"));
  await knex.schema.alterTable("workspaces", (t) => t.dropColumns("track_opens", "track_clicks", "track_replies", "unsubscribe"));
  await knex.schema.alterTable("message_recipients", (t) => t.dropColumns("opened_at", "clicked_at", "replied_at", "complained_at", "unsubscribed_at"));
  await knex.schema.alterTable("messages", (t) => t.dropColumns("track_opens", "track_clicks", "track_replies", "unsubscribe", "opens", "clicks", "replies"));
}
