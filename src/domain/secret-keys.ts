/**
 * The server's secret keys (docs/deployment.md#rotating-the-secret-key): SECRET_KEY, which
 * seals and signs everything new, and the keys it replaced (SECRET_KEY_PREVIOUS), under which
 * what was sealed or signed before still opens or verifies: DKIM keys and webhook secrets until
 * `mailroom-server reseal` has moved them to the current key, and links, reply addresses and
 * return paths in mail already sent for as long as the old key is listed.
 */
export interface SecretKeys {
  /** 64 hex characters. */
  current: string;
  /** Older keys, newest first. */
  previous: readonly string[];
}

export function secretKeys(current: string, previous: readonly string[] = []): SecretKeys {
  return { current, previous };
}

/** Every key, the current one first: the order in which anything is tried. */
export function allSecretKeys(keys: SecretKeys): string[] {
  return [keys.current, ...keys.previous];
}
