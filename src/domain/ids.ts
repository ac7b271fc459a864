import { randomBytes } from "node:crypto";

/** Every id prefix the product uses, in one table (DESIGN.md §5). */
export const ID_PREFIXES = {
  message: "msg",
  event: "evt",
  template: "tpl",
  apiKey: "key",
  webhookEndpoint: "whk",
  webhookAttempt: "wha",
  domain: "dom",
  suppression: "sup",
  inbound: "inb",
  workspace: "ws",
  user: "usr",
  invitation: "inv",
  session: "ses",
  accessToken: "tok",
  request: "req",
  auditEvent: "aud",
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

// Crockford base32, lower-case: sorts the same as the timestamp it encodes.
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

let lastMs = -1;
let lastRandom: Uint8Array = new Uint8Array(10);

/**
 * A ULID-shaped id behind a prefix: 48 bits of milliseconds then 80 random bits, so ids sort by
 * creation time. Within one millisecond the random part is incremented, keeping ids from one
 * process strictly increasing (cursor pagination relies on id order).
 */
export function newId(kind: IdKind, nowMs: number = Date.now()): string {
  let random: Uint8Array;
  if (nowMs === lastMs) {
    random = increment(lastRandom);
  } else {
    random = randomBytes(10);
    lastMs = nowMs;
  }
  lastRandom = random;
  return `${ID_PREFIXES[kind]}_${encodeTime(nowMs)}${encodeRandom(random)}`;
}

/**
 * A string that sorts before every id of `kind` made at or after `ms` and after every one made
 * before it: a time range becomes an id range, which the (scope, id) indexes serve.
 */
export function idTimeBound(kind: IdKind, ms: number): string {
  return `${ID_PREFIXES[kind]}_${encodeTime(Math.max(0, ms))}`;
}

/** When an id of `kind` was made (epoch ms), read back from its time part; null when it is not one. */
export function timeOfId(id: string, kind: IdKind): number | null {
  const time = id.slice(ID_PREFIXES[kind].length + 1, ID_PREFIXES[kind].length + 11);
  if (!hasPrefix(id, kind) || time.length !== 10) return null;
  let ms = 0;
  for (const char of time) {
    const digit = ALPHABET.indexOf(char);
    if (digit < 0) return null;
    ms = ms * 32 + digit;
  }
  return ms;
}

const WELL_FORMED = new RegExp(`^[a-z]+_[${ALPHABET}]{26}$`);

/** Whether `id` has the shape of an id of `kind` that newId makes: its prefix, then 26 characters. */
export function isWellFormedId(id: string, kind: IdKind): boolean {
  return hasPrefix(id, kind) && WELL_FORMED.test(id);
}

export function hasPrefix(id: string, kind: IdKind): boolean {
  return id.startsWith(`${ID_PREFIXES[kind]}_`);
}

function encodeTime(ms: number): string {
  return base32(ms, 10);
}

/** 80 bits as two 40-bit halves: each is exact in a double, and 40 bits are 8 whole characters. */
function encodeRandom(bytes: Uint8Array): string {
  return base32(uint40(bytes, 0), 8) + base32(uint40(bytes, 5), 8);
}

function uint40(bytes: Uint8Array, offset: number): number {
  let value = 0;
  for (let i = offset; i < offset + 5; i++) value = value * 256 + bytes[i]!;
  return value;
}

/** `value` in `length` base32 characters, most significant first (value < 2^53). */
function base32(value: number, length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) {
    out = ALPHABET[value % 32] + out;
    value = Math.floor(value / 32);
  }
  return out;
}

function increment(bytes: Uint8Array): Uint8Array {
  const next = Uint8Array.from(bytes);
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i]! < 255) {
      next[i]!++;
      return next;
    }
    next[i] = 0;
  }
  return randomBytes(10); // 2^80 ids in one millisecond: start over rather than wrap
}
