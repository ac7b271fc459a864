import { digestSecret, digestsEqual, parseSecret } from "../domain/api-key-secret.js";
import type { Clock } from "../domain/clock.js";
import { AuthenticationError, IpNotAllowedError } from "../domain/errors.js";
import type { Environment, Principal } from "../domain/environments.js";
import { addressAllowed } from "../domain/key-restrictions.js";
import type { ApiKeysRepository } from "../db/repositories/api-keys.js";
import type { SessionsRepository } from "../db/repositories/sessions.js";

/** Turns a bearer secret (API key or user access token) into a principal, or throws the one AuthenticationError. */
export class AuthService {
  constructor(
    private readonly apiKeys: ApiKeysRepository,
    private readonly sessions: SessionsRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * `clientAddress` is the caller's address as the server sees it (through TRUST_PROXY): a key
   * limited to addresses (restrictions.allowed_ips) is refused from any other, with 403 rather
   * than 401, since the caller evidently holds the secret and needs to know why it fails.
   */
  async authenticate(secret: string | undefined, clientAddress: string): Promise<Principal> {
    // The checksum rejects typos and scanners' noise without touching the database.
    const claimed = secret === undefined ? null : parseSecret(secret);
    if (secret === undefined || claimed === null) throw new AuthenticationError();
    const principal = claimed.kind === "api_key" ? await this.apiKey(secret, claimed.environment) : await this.userToken(secret, claimed.environment);
    if (!principal) throw new AuthenticationError();
    const { credential } = principal;
    if (credential.kind === "api_key" && credential.restrictions && !addressAllowed(credential.restrictions, clientAddress)) throw new IpNotAllowedError(clientAddress, principal);
    return principal;
  }

  private async apiKey(secret: string, environment: Environment): Promise<Principal | null> {
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
      return null;
    }
    return {
      workspaceId: found.key.workspace_id,
      environment: found.key.environment,
      credential: { kind: "api_key", id: found.key.id, permission: found.key.permission, restrictions: found.key.restrictions },
    };
  }

  /**
   * A dashboard token: live, unexpired, its session still live, and its user still a member (with
   * their current role). The session is only read here, never renewed: each exchange renews it
   * for longer than the token it issues lives (SESSION_POLICY), so a token never outlives its
   * session by idling, and a call with one costs no write.
   */
  private async userToken(secret: string, environment: Environment): Promise<Principal | null> {
    const digest = digestSecret(secret);
    const found = await this.sessions.findToken(digest);
    const now = this.clock.now();
    if (!found || !digestsEqual(found.token.digest, digest) || found.token.environment !== environment || found.token.expires_at <= now || found.sessionExpiresAt <= now || found.role === null) {
      return null;
    }
    return {
      workspaceId: found.token.workspace_id,
      environment: found.token.environment,
      credential: { kind: "user_token", id: found.token.id, userId: found.token.user_id, role: found.role },
    };
  }
}
