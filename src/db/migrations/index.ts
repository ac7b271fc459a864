import type { Knex } from "knex";
import * as initial from "./001-initial.js";
import * as accounts from "./002-accounts.js";
import * as delivery from "./003-delivery.js";

/**
 * Migrations are modules imported here, not files discovered at run time, so they run the same
 * under tsx, vitest and a bundled build. Append new ones; never edit one that has shipped.
 */
const MIGRATIONS: Record<string, Knex.Migration> = {
  "001-initial": initial,
  "002-accounts": accounts,
  "003-delivery": delivery,
};

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(MIGRATIONS),
  getMigrationName: (name) => name,
  getMigration: async (name) => MIGRATIONS[name]!,
};
