import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";

/**
 * Password hashing with scrypt at OWASP's recommended cost (Password Storage Cheat Sheet:
 * N=2^17, r=8, p=1, 128 MiB). The parameters are stored with each hash, so raising the cost
 * later leaves older hashes verifiable. scrypt runs on libuv's thread pool: a sign-in costs
 * about 0.3 s of a core but never blocks the event loop.
 */
const COST = { logN: 17, r: 8, p: 1 };
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

export const PASSWORD_LIMITS = { min: 10, max: 200 } as const;

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const key = await derive(password, salt, COST);
  return `scrypt$${COST.logN}$${COST.r}$${COST.p}$${salt.toString("base64")}$${key.toString("base64")}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, logN, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64");
  const key = await derive(password, Buffer.from(salt, "base64"), { logN: Number(logN), r: Number(r), p: Number(p) });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/**
 * A hash of no one's password: an unknown address is checked against it so that the answer
 * takes as long as for a known one (no account oracle through timing).
 */
export const DUMMY_PASSWORD_HASH = `scrypt$${COST.logN}$${COST.r}$${COST.p}$${Buffer.alloc(SALT_LENGTH).toString("base64")}$${Buffer.alloc(KEY_LENGTH).toString("base64")}`;

function derive(password: string, salt: Buffer, cost: { logN: number; r: number; p: number }): Promise<Buffer> {
  const N = 2 ** cost.logN;
  // scrypt needs 128 * N * r bytes; Node's default cap (32 MiB) is below the recommended cost.
  const options: ScryptOptions = { N, r: cost.r, p: cost.p, maxmem: 2 * 128 * N * cost.r };
  return new Promise((resolve, reject) => scrypt(password.normalize("NFKC"), salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key))));
}
