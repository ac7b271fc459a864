import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * AES-256-GCM for data kept at rest that must not be readable from a database dump, such as
 * stored idempotent responses (which can hold a new API key's secret). Keys are derived per
 * purpose from the server's SECRET_KEY with HKDF.
 */
export class SealedBox {
  private readonly key: Buffer;

  constructor(secretKeyHex: string, purpose: string) {
    this.key = Buffer.from(hkdfSync("sha256", Buffer.from(secretKeyHex, "hex"), Buffer.alloc(0), `mailroom:${purpose}`, 32));
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64");
  }

  open(sealed: string): string {
    const raw = Buffer.from(sealed, "base64");
    const decipher = createDecipheriv("aes-256-gcm", this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
  }
}
