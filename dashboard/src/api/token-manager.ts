import { APIError } from "mailroom";
import type { TokenGrant } from "../auth/auth-api.js";
import type { Environment } from "../lib/environment.js";

// docs/dashboard.md: renew once two thirds of a token's life have passed, so a call never
// carries a token about to expire, without exchanging on every call.
const RENEW_AFTER = 2 / 3;
// After a renewal that failed while the held token is still good: how long calls keep using it
// before one tries again, so that a throttled or failing exchange is not asked on every call.
const RENEW_RETRY_MS = 15_000;

interface HeldToken {
  token: string;
  renewAt: number;
  /** When the server stops accepting it, on our clock. */
  expiresAt: number;
}

/**
 * Whether a failed exchange may succeed later, the session being fine: too many exchanges (429),
 * the server failing (5xx), no answer. Its other refusals (401: the session ended, 403, 404: no
 * longer a member) say that the session's tokens are worth nothing any more.
 */
function mayPass(error: unknown): boolean {
  return !(error instanceof APIError) || error.status === 429 || error.status >= 500;
}

type Exchange = (workspaceId: string, environment: Environment) => Promise<TokenGrant>;

/**
 * User access tokens, one per (workspace, environment), held in memory only: never in storage or
 * a cookie, so nothing outlives the tab and no script-readable store keeps a credential.
 */
export class TokenManager {
  private readonly held = new Map<string, HeldToken>();
  private readonly exchanging = new Map<string, Promise<string>>();
  // Bumped by clear(), so an exchange that was under way when the user signed out is not kept.
  private generation = 0;

  constructor(
    private readonly exchange: Exchange,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * A usable token. `replacing` names a token the server refused (a 401): a new one is exchanged
   * unless that one was already replaced, so calls that failed together renew only once. A
   * renewal ahead of time that fails for a reason that may pass (mayPass) leaves the held token
   * in use until it expires: only then does the failure reach the call.
   */
  token(workspaceId: string, environment: Environment, { replacing }: { replacing?: string } = {}): Promise<string> {
    const key = `${workspaceId}:${environment}`;
    const found = this.held.get(key);
    // The server refused it: no call is to carry it again, whatever becomes of its renewal.
    if (found && found.token === replacing) this.held.delete(key);
    const held = found && found.token !== replacing && this.now() < found.expiresAt ? found : undefined;
    if (held && this.now() < held.renewAt) return Promise.resolve(held.token);
    // Concurrent calls share one exchange rather than each minting a token.
    const exchange = this.exchanging.get(key) ?? this.renew(key, workspaceId, environment);
    if (!held) return exchange;
    return exchange.catch((error: unknown) => {
      // Still the token held (not cleared by a sign-out meanwhile) and still good.
      if (!mayPass(error) || this.held.get(key) !== held || this.now() >= held.expiresAt) throw error;
      return held.token;
    });
  }

  private renew(key: string, workspaceId: string, environment: Environment): Promise<string> {
    const generation = this.generation;
    const exchange = this.exchange(workspaceId, environment)
      .then(
        (grant) => {
          // The life is measured from receipt with expires_in, on our own clock: the browser's
          // clock may disagree with the server's, so expires_at alone could mislead.
          if (generation === this.generation) {
            const now = this.now();
            this.held.set(key, { token: grant.token, renewAt: now + grant.expires_in * 1000 * RENEW_AFTER, expiresAt: now + grant.expires_in * 1000 });
          }
          return grant.token;
        },
        (error: unknown) => {
          const held = this.held.get(key);
          if (held && mayPass(error)) held.renewAt = Math.min(this.now() + RENEW_RETRY_MS, held.expiresAt);
          throw error;
        },
      )
      .finally(() => {
        if (this.exchanging.get(key) === exchange) this.exchanging.delete(key);
      });
    this.exchanging.set(key, exchange);
    return exchange;
  }

  /** Forget every token: on sign-out and password change, which revoke them server-side too. */
  clear(): void {
    this.held.clear();
    this.exchanging.clear();
    this.generation += 1;
  }
}
