import type { Knex } from "knex";

// Automatic re-verification of verified domains (docs/domains.md#automatic-checks): when a
// domain is due for its next check, and since when its records have been missing.
export async function up(knex: Knex): Promise<void> {
  // "temporary_failure" is 17 characters. SQLite does not enforce a VARCHAR's length, and an
  // ALTER there would rebuild the table for nothing.
  if (knex.client.config.client === "mysql2") await knex.schema.alterTable("domains", (t) => t.string("status", 24).notNullable().alter());
  await knex.schema.alterTable("domains", (t) => {
    t.bigInteger("failing_since").nullable();
    t.bigInteger("next_check_at").nullable();
    t.index(["next_check_at"], "ix_domains__next_check");
  });
  // Domains verified before this migration get their first automatic check soon after it.
  await knex("domains").where({ status: "verified" }).update({ next_check_at: knex.raw("COALESCE(last_checked_at, 0)") });
}

export async function down(knex: Knex): Promise<void> {
  await knex("domains").whereIn("status", ["temporary_failure", "failed"]).update({ status: "pending" });
  await knex.schema.alterTable("domains", (t) => {
    t.dropIndex(["next_check_at"], "ix_domains__next_check");
    t.dropColumn("failing_since");
    t.dropColumn("next_check_at");
  });
}
