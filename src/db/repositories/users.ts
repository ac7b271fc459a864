import type { Knex } from "knex";
import { toIso } from "../../domain/clock.js";
import type { components } from "../../../generated/v1.js";
import { toNumber } from "../rows.js";

type User = components["schemas"]["User"];

export interface UserRow {
  id: string;
  email: string;
  email_normalized: string;
  name: string | null;
  password_hash: string;
  created_at: number;
  updated_at: number;
}

/** Users are people, not tenants: the one table that is not scoped by workspace. */
export class UsersRepository {
  constructor(private readonly knex: Knex) {}

  async insert(row: UserRow, trx: Knex | Knex.Transaction = this.knex): Promise<void> {
    await trx("users").insert(row);
  }

  async any(trx: Knex | Knex.Transaction = this.knex): Promise<boolean> {
    return (await trx("users").first("id")) !== undefined;
  }

  async findByEmail(emailNormalized: string, trx: Knex | Knex.Transaction = this.knex): Promise<UserRow | undefined> {
    return normalise(await trx("users").where({ email_normalized: emailNormalized }).first());
  }

  async find(id: string): Promise<UserRow | undefined> {
    return normalise(await this.knex("users").where({ id }).first());
  }

  async updatePasswordHash(id: string, passwordHash: string, now: number): Promise<void> {
    await this.knex("users").where({ id }).update({ password_hash: passwordHash, updated_at: now });
  }

  static toWire(row: UserRow): User {
    return { id: row.id, object: "user", email: row.email, name: row.name, created_at: toIso(row.created_at) };
  }
}

function normalise(row: UserRow | undefined): UserRow | undefined {
  return row && { ...row, created_at: toNumber(row.created_at), updated_at: toNumber(row.updated_at) };
}
