import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { deflateRaw, inflateRawSync } from "node:zlib";
import { allSecretKeys, type SecretKeys } from "../domain/secret-keys.js";

const deflate = promisify(deflateRaw);

/**
 * Starts a value whose plaintext was deflated (raw DEFLATE, RFC 1951) before sealing. A value
 * without it is base64 alone, as every value was before, and base64 never holds a ".", so the two
 * cannot be mistaken. The marker is also the cipher's additional data: a value stripped of it (or
 * given it) fails to open rather than being read in the wrong format.
 */
const DEFLATED = "z1.";

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
    return sealWith(this.keys[0]!, "", Buffer.from(plaintext, "utf8"));
  }

  /**
   * Deflates, then seals: for values that can be large and are mostly text (a stored answer holds
   * a message's html, escaped once more inside JSON), which deflate to a small part of their size.
   * Deflating runs off the event loop. Not for a secret sealed beside text an attacker chooses:
   * the length of a compressed value tells what repeats in it (CRIME).
   */
  async sealDeflated(plaintext: string): Promise<string> {
    return sealWith(this.keys[0]!, DEFLATED, await deflate(Buffer.from(plaintext, "utf8")));
  }

  /** Opens either format. Throws when no key opens it (GCM's tag does not match: the wrong key, or altered data). */
  open(sealed: string): string {
    const { format, raw } = parse(sealed);
    const bytes = this.openBytes(format, raw);
    return (format === DEFLATED ? inflateRawSync(bytes) : bytes).toString("utf8");
  }

  /**
   * The value sealed under the current key, in its own format, or null when it already is.
   * Throws when no key opens it. Its bytes are sealed again as they are: nothing is inflated.
   */
  reseal(sealed: string): string | null {
    const { format, raw } = parse(sealed);
    try {
      openWith(this.keys[0]!, format, raw);
      return null;
    } catch {
      return sealWith(this.keys[0]!, format, this.openBytes(format, raw));
    }
  }

  private openBytes(format: string, raw: Buffer): Buffer {
    let failure: unknown;
    for (const key of this.keys) {
      try {
        return openWith(key, format, raw);
      } catch (error) {
        failure = error;
      }
    }
    throw failure;
  }
}

function parse(sealed: string): { format: string; raw: Buffer } {
  const format = sealed.startsWith(DEFLATED) ? DEFLATED : "";
  return { format, raw: Buffer.from(sealed.slice(format.length), "base64") };
}

/** `format` (the marker, or "" for a bare value) is the cipher's additional data. */
function sealWith(key: Buffer, format: string, bytes: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  if (format !== "") cipher.setAAD(Buffer.from(format, "ascii"));
  const body = Buffer.concat([cipher.update(bytes), cipher.final()]);
  return format + Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64");
}

function openWith(key: Buffer, format: string, raw: Buffer): Buffer {
  const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
  if (format !== "") decipher.setAAD(Buffer.from(format, "ascii"));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]);
}
