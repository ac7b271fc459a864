import type { Knex } from "knex";

// One pending invitation per address and workspace: a new one replaces (closes) the pending one.
// Two sent at the same moment could each close what was pending (nothing yet) and both insert,
// since under READ COMMITTED neither sees the other's uncommitted row. pending_email is the
// address while the invitation is open and NULL once it is closed (NULLs never conflict), so the
// unique key makes the second insert wait for the first and fail; the repository then replaces
// again, closing the first. Open invitations already duplicated are closed first, all but the
// newest, as replacing them would have. The address leads the key: led by workspace_id, MySQL
// could take it for the foreign key's index and then refuse to drop it.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("invitations", (t) => {
    t.string("pending_email", 320).nullable();
  });
  const open = (await knex("invitations").whereNull("closed_at").orderBy([{ column: "created_at", order: "desc" }, { column: "id", order: "desc" }]).select("id", "workspace_id", "email_normalized", "created_at")) as Array<{ id: string; workspace_id: string; email_normalized: string; created_at: number | string }>;
  const newest = new Map<string, number>();
  for (const row of open) {
    const key = `${row.workspace_id} ${row.email_normalized}`;
    const replacedAt = newest.get(key);
    if (replacedAt === undefined) newest.set(key, Number(row.created_at));
    else await knex("invitations").where({ id: row.id }).update({ closed_at: replacedAt });
  }
  await knex("invitations").whereNull("closed_at").update({ pending_email: knex.ref("email_normalized") });
  await knex.schema.alterTable("invitations", (t) => {
    t.unique(["pending_email", "workspace_id"], { indexName: "uq_invitations__pending" });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable("invitations", (t) => {
    t.dropUnique(["pending_email", "workspace_id"], "uq_invitations__pending");
    t.dropColumn("pending_email");
  });
}
