import { digestSecret, digestsEqual, parseSecret } from "../domain/api-key-secret.js";
import type { Clock } from "../domain/clock.js";
import { AuthenticationError } from "../domain/errors.js";
import type { Principal } from "../domain/environments.js";
import type { ApiKeysRepository } from "../db/repositories/api-keys.js";

/** Turns a bearer secret into a principal, or throws the one AuthenticationError. */
export class AuthService {
  constructor(
    private readonly apiKeys: ApiKeysRepository,
    private readonly clock: Clock,
  ) {}

  async authenticate(secret: string | undefined): Promise<Principal> {
    // The checksum rejects typos and scanners' noise without touching the database.
    const environment = secret === undefined ? null : parseSecret(secret);
    if (secret === undefined || environment === null) throw new AuthenticationError();
    const digest = digestSecret(secret);
    const found = await this.apiKeys.findBySecretDigest(digest);
    const now = this.clock.now();
    if (
      !found ||
      !digestsEqual(found.digest, digest) ||
      found.key.environment !== environment ||
      found.key.revoked_at !== null ||
      (found.key.expires_at !== null && found.key.expires_at <= now) ||
      (found.secretExpiresAt !== null && found.secretExpiresAt <= now)
    ) {
      throw new AuthenticationError();
    }
    return {
      workspaceId: found.key.workspace_id,
      environment: found.key.environment,
      permission: found.key.permission,
      credential: { kind: "api_key", id: found.key.id },
    };
  }
}
