import type { Knex } from "knex";
import { toIso } from "../../domain/clock.js";
import { UniqueViolation } from "../../domain/errors.js";
import type { components } from "../../../generated/v1.js";
import { isUniqueViolation } from "../driver-errors.js";
import { toNumber } from "../rows.js";

type User = components["schemas"]["User"];

export const UQ_USER_EMAIL = "uq_users__email";

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

  /** Throws UniqueViolation(UQ_USER_EMAIL) when the address has an account (one made meanwhile). */
  async insert(row: UserRow, trx: Knex | Knex.Transaction = this.knex): Promise<void> {
    try {
      await trx("users").insert(row);
    } catch (error) {
      // The id is fresh; email_normalized is the table's only other unique key.
      if (isUniqueViolation(error)) throw new UniqueViolation(UQ_USER_EMAIL);
      throw error;
    }
  }

  async any(trx: Knex | Knex.Transaction = this.knex): Promise<boolean> {
    return (await trx("users").first("id")) !== undefined;
  }

  /**
   * Records `userId` as the install's first user, inside its sign-up transaction; false when
   * another user holds the claim. Insert-if-absent, then read what is there: on MySQL the insert
   * waits for a racing first sign-up's uncommitted claim, and the read (READ COMMITTED) then sees
   * it.
   */
  async claimFirst(userId: string, now: number, trx: Knex.Transaction): Promise<boolean> {
    await trx("first_user_claims").insert({ id: 1, user_id: userId, claimed_at: now }).onConflict("id").ignore();
    const row = (await trx("first_user_claims").where({ id: 1 }).first("user_id")) as { user_id: string } | undefined;
    return row?.user_id === userId;
  }

  async findByEmail(emailNormalized: string, trx: Knex | Knex.Transaction = this.knex): Promise<UserRow | undefined> {
    return normalise(await trx("users").where({ email_normalized: emailNormalized }).first());
  }

  async find(id: string): Promise<UserRow | undefined> {
    return normalise(await this.knex("users").where({ id }).first());
  }

  /**
   * The user's password hash, read with their row locked until `trx` ends (FOR UPDATE on MySQL;
   * SQLite has one writer): a password change holds the same row from its update to its commit,
   * so this waits for it and then reads the new hash.
   */
  async lockPasswordHash(id: string, trx: Knex.Transaction): Promise<string | undefined> {
    const row = (await trx("users").where({ id }).forUpdate().first("password_hash")) as { password_hash: string } | undefined;
    return row?.password_hash;
  }

  async updatePasswordHash(id: string, passwordHash: string, now: number, trx: Knex | Knex.Transaction = this.knex): Promise<void> {
    await trx("users").where({ id }).update({ password_hash: passwordHash, updated_at: now });
  }

  async updateName(id: string, name: string | null, now: number): Promise<void> {
    await this.knex("users").where({ id }).update({ name, updated_at: now });
  }

  static toWire(row: UserRow): User {
    return { id: row.id, object: "user", email: row.email, name: row.name, created_at: toIso(row.created_at) };
  }
}

function normalise(row: UserRow | undefined): UserRow | undefined {
  return row && { ...row, created_at: toNumber(row.created_at), updated_at: toNumber(row.updated_at) };
}
