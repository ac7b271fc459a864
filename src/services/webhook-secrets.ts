import type { WebhookEndpointRow } from "../db/repositories/webhook-endpoints.js";
import type { SealedBox } from "./sealed-box.js";

/** An endpoint's signing secrets, opened. */
export interface SigningSecrets {
  current: string;
  /** The secret before the last rotation, while its overlap lasts and a key opens it; otherwise null. */
  previous: string | null;
  /** When the overlap of `previous` ends; null when `previous` is. */
  previousExpiresAt: number | null;
  /** Why the previous secret, still in its overlap, could not be opened; absent when it could, or there was none to open. */
  previousUnreadable?: unknown;
}

/**
 * Opens an endpoint's signing secrets, for the dispatcher that signs with them and for
 * getWebhookSecret that shows them, so the two always agree. Throws when no key opens the current
 * secret: there is nothing to sign with. A previous secret no key opens (SECRET_KEY_PREVIOUS
 * dropped before `reseal` finished, docs/webhooks.md#secrets-and-rotation) is left out, as after
 * the overlap, rather than stopping what the current secret does alone: deliveries are signed with
 * it, and it is shown.
 */
export function openSigningSecrets(box: SealedBox, endpoint: Pick<WebhookEndpointRow, "secret" | "previous_secret" | "previous_secret_expires_at">, now: number): SigningSecrets {
  const current = box.open(endpoint.secret);
  const expiresAt = endpoint.previous_secret_expires_at;
  if (endpoint.previous_secret === null || expiresAt === null || expiresAt <= now) return { current, previous: null, previousExpiresAt: null };
  try {
    return { current, previous: box.open(endpoint.previous_secret), previousExpiresAt: expiresAt };
  } catch (error) {
    return { current, previous: null, previousExpiresAt: null, previousUnreadable: error };
  }
}
