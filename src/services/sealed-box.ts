import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { allSecretKeys, type SecretKeys } from "../domain/secret-keys.js";

/**
 * AES-256-GCM for data kept at rest that must not be readable from a database dump, such as
 * stored idempotent responses (which can hold a new API key's secret). Keys are derived per
 * purpose from the server's SECRET_KEY with HKDF. Sealing uses the current key; opening also
 * tries the previous ones (SECRET_KEY_PREVIOUS), whose values `reseal` moves to the current key.
 */
export class SealedBox {
  /** The current key's first. */
  private readonly keys: Buffer[];

  constructor(secretKeys: SecretKeys, purpose: string) {
    this.keys = allSecretKeys(secretKeys).map((hex) => Buffer.from(hkdfSync("sha256", Buffer.from(hex, "hex"), Buffer.alloc(0), `mailroom:${purpose}`, 32)));
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.keys[0]!, iv);
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64");
  }

  /** Throws when no key opens it (GCM's tag does not match: the wrong key, or altered data). */
  open(sealed: string): string {
    let failure: unknown;
    for (const key of this.keys) {
      try {
        return openWith(key, sealed);
      } catch (error) {
        failure = error;
      }
    }
    throw failure;
  }

  /** The value sealed under the current key, or null when it already is. Throws when no key opens it. */
  reseal(sealed: string): string | null {
    try {
      openWith(this.keys[0]!, sealed);
      return null;
    } catch {
      return this.seal(this.open(sealed));
    }
  }
}

function openWith(key: Buffer, sealed: string): string {
  const raw = Buffer.from(sealed, "base64");
  const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
}
