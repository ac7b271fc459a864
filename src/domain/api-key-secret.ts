import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { crc32 } from "node:zlib";
import type { Environment } from "./environments.js";

/**
 * Bearer secrets: API keys (`svc_live_`, `svc_test_`) and user access tokens (`mru_live_`,
 * `mru_test_`), then 32 base62 characters (190 random bits), then a 6-character base62 CRC-32
 * of everything before it. The checksum lets a typo fail before any database lookup and lets
 * secret scanners tell a real credential from noise (as GitHub's tokens do). Only the SHA-256
 * digest is ever stored.
 */
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
export type CredentialKind = "api_key" | "user_token";
const KIND_PREFIX: Record<CredentialKind, string> = { api_key: "svc", user_token: "mru" };
const ENVIRONMENT_PREFIX: Record<Environment, string> = { live: "live", sandbox: "test" };
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const SHAPE = /^(svc|mru)_(live|test)_([0-9A-Za-z]{38})$/;

export function generateSecret(environment: Environment, kind: CredentialKind = "api_key"): string {
  const body = `${KIND_PREFIX[kind]}_${ENVIRONMENT_PREFIX[environment]}_${randomBase62(RANDOM_LENGTH)}`;
  return body + checksum(body);
}

/** What a well-formed secret claims to be, or null when its shape or checksum is wrong. */
export function parseSecret(secret: string): { kind: CredentialKind; environment: Environment } | null {
  const match = SHAPE.exec(secret);
  if (!match) return null;
  const body = secret.slice(0, -CHECKSUM_LENGTH);
  if (checksum(body) !== secret.slice(-CHECKSUM_LENGTH)) return null;
  return { kind: match[1] === "svc" ? "api_key" : "user_token", environment: match[2] === "live" ? "live" : "sandbox" };
}

export function digestSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** Constant-time comparison of two hex digests. */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, "hex");
  const right = Buffer.from(b, "hex");
  return left.length === right.length && timingSafeEqual(left, right);
}

/** What a key looks like in lists: its prefix and last four characters. */
export function redactSecret(secret: string): string {
  return `${secret.slice(0, 9)}…${secret.slice(-4)}`;
}

function checksum(body: string): string {
  let value = crc32(body);
  let out = "";
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length)) {
      // 248 = 4 * 62: rejecting bytes above it keeps every character equally likely.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}
