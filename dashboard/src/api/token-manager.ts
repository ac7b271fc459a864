import type { TokenGrant } from "../auth/auth-api";
import type { Environment } from "../lib/environment";

// docs/dashboard.md: renew once two thirds of a token's life have passed, so a call never
// carries a token about to expire, without exchanging on every call.
const RENEW_AFTER = 2 / 3;

interface HeldToken {
  token: string;
  renewAt: number;
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
   * unless that one was already replaced, so calls that failed together renew only once.
   */
  token(workspaceId: string, environment: Environment, { replacing }: { replacing?: string } = {}): Promise<string> {
    const key = `${workspaceId}:${environment}`;
    const held = this.held.get(key);
    if (held && held.token !== replacing && this.now() < held.renewAt) return Promise.resolve(held.token);
    // Concurrent calls share one exchange rather than each minting a token.
    const under = this.exchanging.get(key);
    if (under) return under;
    const generation = this.generation;
    const exchange = this.exchange(workspaceId, environment)
      .then((grant) => {
        // The life is measured from receipt with expires_in, on our own clock: the browser's
        // clock may disagree with the server's, so expires_at alone could mislead.
        if (generation === this.generation) {
          this.held.set(key, { token: grant.token, renewAt: this.now() + grant.expires_in * 1000 * RENEW_AFTER });
        }
        return grant.token;
      })
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
