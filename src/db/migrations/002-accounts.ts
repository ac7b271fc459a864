import type { Knex } from "knex";
import { mysqlTable } from "./table-options.js";

// People and their access (DESIGN.md §6): users, their memberships of workspaces, dashboard
// sessions, the short-lived access tokens exchanged for them, and invitations. Secrets (session
// cookies, tokens, invitation links) are stored as SHA-256 digests only.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("users", (t) => {
    mysqlTable(knex, t);
    t.string("id", 40).primary();
    t.string("email", 320).notNullable();
    // Lower-cased: one account per address whatever its capitalisation.
    t.string("email_normalized", 320).notNullable();
    t.string("name", 100).nullable();
    t.string("password_hash", 200).notNullable();
    t.bigInteger("created_at").notNullable();
    t.bigInteger("updated_at").notNullable();
    t.unique(["email_normalized"], { indexName: "uq_users__email" });
  });

  await knex.schema.createTable("memberships", (t) => {
    mysqlTable(knex, t);
    t.string("workspace_id", 40).notNullable().references("id").inTable("workspaces");
    t.string("user_id", 40).notNullable().references("id").inTable("users");
    t.string("role", 12).notNullable();
    t.bigInteger("created_at").notNullable();
    t.primary(["workspace_id", "user_id"]);
    t.index(["user_id"], "ix_memberships__user");
  });

  await knex.schema.createTable("sessions", (t) => {
    mysqlTable(knex, t);
    t.string("id", 40).primary();
    t.string("digest", 64).notNullable();
    t.string("user_id", 40).notNullable().references("id").inTable("users");
    t.bigInteger("created_at").notNullable();
    t.bigInteger("expires_at").notNullable();
    t.bigInteger("absolute_expires_at").notNullable();
    t.unique(["digest"], { indexName: "uq_sessions__digest" });
    t.index(["user_id"], "ix_sessions__user");
  });

  await knex.schema.createTable("access_tokens", (t) => {
    mysqlTable(knex, t);
    t.string("id", 40).primary();
    t.string("digest", 64).notNullable();
    t.string("session_id", 40).notNullable();
    t.string("user_id", 40).notNullable();
    t.string("workspace_id", 40).notNullable();
    t.string("environment", 8).notNullable();
    t.bigInteger("created_at").notNullable();
    t.bigInteger("expires_at").notNullable();
    t.unique(["digest"], { indexName: "uq_access_tokens__digest" });
    t.index(["session_id"], "ix_access_tokens__session");
    t.index(["user_id", "workspace_id"], "ix_access_tokens__member");
    t.index(["expires_at"], "ix_access_tokens__expiry");
  });

  await knex.schema.createTable("invitations", (t) => {
    mysqlTable(knex, t);
    t.string("id", 40).primary();
    t.string("workspace_id", 40).notNullable().references("id").inTable("workspaces");
    t.string("email", 320).notNullable();
    t.string("email_normalized", 320).notNullable();
    t.string("role", 12).notNullable();
    t.string("digest", 64).notNullable();
    t.string("invited_by", 40).nullable();
    t.bigInteger("created_at").notNullable();
    t.bigInteger("expires_at").notNullable();
    // Set once: accepted or revoked (or replaced by a newer invitation to the same address).
    t.bigInteger("closed_at").nullable();
    t.unique(["digest"], { indexName: "uq_invitations__digest" });
    t.index(["workspace_id", "id"], "ix_invitations__workspace");
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ["invitations", "access_tokens", "sessions", "memberships", "users"]) await knex.schema.dropTableIfExists(table);
}
