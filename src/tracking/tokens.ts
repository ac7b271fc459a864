import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import type { Clock } from "../domain/clock.js";
import { allSecretKeys, type SecretKeys } from "../domain/secret-keys.js";

/**
 * Signed tracking tokens (DESIGN.md §10, docs/tracking.md#tokens). A token names a message, one
 * of its recipients (by position), what it is for, and for a click the URL to go to; the server
 * keeps nothing per link. It is `base64url(payload || mac)`:
 *
 *   payload = version(1) kind(1) key id(u32) issued at(u32, seconds) position(u16)
 *             id length(1) message id  [url, clicks only]
 *   mac     = the first 16 bytes of HMAC-SHA256(key[key id], payload)
 *
 * Keys rotate on their own: key `n` serves the n-th KEY_PERIOD since the epoch and is derived
 * from SECRET_KEY with HKDF, so every node has the same keys and none is ever stored. A token
 * verifies for TOKEN_LIFETIME after it was issued (old keys are still derived for that long);
 * a tampered token, one signed with a key outside that window, or an expired one is not ours.
 * The click URL is inside the signed payload: the redirect can only go where the message linked.
 */
export type TrackingKind = "open" | "click" | "unsubscribe";

export interface TrackingTarget {
  messageId: string;
  position: number;
}

export type TrackingClaims = TrackingTarget & { issuedAt: number } & ({ kind: "open" | "unsubscribe" } | { kind: "click"; url: string });

export type TrackingClaimsInput = TrackingTarget & ({ kind: "open" | "unsubscribe" } | { kind: "click"; url: string });

/** A new key every 30 days. */
export const KEY_PERIOD_MS = 30 * 24 * 3600 * 1000;
/**
 * Links work for a year after the message was sent: long past any open or click that matters,
 * and past the 30 days that CAN-SPAM wants an unsubscribe link to keep working.
 */
export const TOKEN_LIFETIME_MS = 365 * 24 * 3600 * 1000;

const VERSION = 1;
const KINDS: readonly TrackingKind[] = ["open", "click", "unsubscribe"];
const MAC_BYTES = 16; // 128 bits: forging one by guessing over HTTP is out of reach
const HEADER_BYTES = 1 + 1 + 4 + 4 + 2 + 1;
/** Clicked URLs up to this long are tracked; longer links are left as they are. */
export const MAX_TRACKED_URL_BYTES = 2000;
/** The mailto address's tag: hex, like VERP's, because mail systems may fold a local part's case. */
const MAILTO_TAG_LENGTH = 10;
/** Tokens issued "now" by another node whose clock runs ahead are still accepted. */
const CLOCK_SKEW_MS = 60_000;

export class TrackingTokens {
  /** SECRET_KEY, then SECRET_KEY_PREVIOUS: links in mail sent before a rotation still verify. */
  private readonly masters: Buffer[];
  private readonly keys = new Map<string, Buffer>();

  constructor(
    secretKeys: SecretKeys,
    private readonly clock: Clock,
    private readonly periodMs: number = KEY_PERIOD_MS,
    private readonly lifetimeMs: number = TOKEN_LIFETIME_MS,
  ) {
    this.masters = allSecretKeys(secretKeys).map((hex) => Buffer.from(hex, "hex"));
  }

  /** A URL-safe token for `claims`, signed with the current period's key. */
  issue(claims: TrackingClaimsInput): string {
    const now = this.clock.now();
    const keyId = this.keyIdAt(now);
    const id = Buffer.from(claims.messageId, "latin1");
    const url = claims.kind === "click" ? Buffer.from(claims.url, "utf8") : Buffer.alloc(0);
    const payload = Buffer.alloc(HEADER_BYTES + id.length + url.length);
    let at = payload.writeUInt8(VERSION, 0);
    at = payload.writeUInt8(KINDS.indexOf(claims.kind), at);
    at = payload.writeUInt32BE(keyId, at);
    at = payload.writeUInt32BE(Math.floor(now / 1000), at);
    at = payload.writeUInt16BE(claims.position, at);
    at = payload.writeUInt8(id.length, at);
    at += id.copy(payload, at);
    url.copy(payload, at);
    return Buffer.concat([payload, this.mac(keyId, payload)]).toString("base64url");
  }

  /** The token's claims, or null when it is malformed, tampered with, expired or under an unknown key. */
  verify(token: string, kind: TrackingKind): TrackingClaims | null {
    if (!/^[A-Za-z0-9_-]+$/.test(token) || token.length > 4 * MAX_TRACKED_URL_BYTES) return null;
    const raw = Buffer.from(token, "base64url");
    if (raw.length < HEADER_BYTES + MAC_BYTES) return null;
    const payload = raw.subarray(0, raw.length - MAC_BYTES);
    if (payload.readUInt8(0) !== VERSION || KINDS[payload.readUInt8(1)] !== kind) return null;
    const keyId = payload.readUInt32BE(2);
    const issuedAt = payload.readUInt32BE(6) * 1000;
    if (!this.usable(keyId, issuedAt)) return null;
    const mac = raw.subarray(raw.length - MAC_BYTES);
    if (!this.masters.some((_, master) => timingSafeEqual(mac, this.mac(keyId, payload, master)))) return null;
    const position = payload.readUInt16BE(10);
    const idLength = payload.readUInt8(12);
    if (payload.length < HEADER_BYTES + idLength) return null;
    const messageId = payload.subarray(HEADER_BYTES, HEADER_BYTES + idLength).toString("latin1");
    const base = { messageId, position, issuedAt };
    if (kind !== "click") return { ...base, kind };
    return { ...base, kind, url: payload.subarray(HEADER_BYTES + idLength).toString("utf8") };
  }

  /**
   * The mailto half of List-Unsubscribe: `unsubscribe+<message id>-<position>-<key id>-<tag>@`
   * the return-path domain, whose MX is Mailroom's inbound server. Lower-case and hex, like a
   * VERP address, and within the 64 octets a local part may have (RFC 5321 §4.5.3.1.1).
   */
  unsubscribeMailto(target: TrackingTarget, returnPathDomain: string): string {
    const keyId = this.keyIdAt(this.clock.now());
    return `unsubscribe+${target.messageId}-${target.position}-${keyId}-${this.mailtoTag(keyId, target)}@${returnPathDomain}`;
  }

  /** The message and recipient an unsubscribe address names, or null when it is not one we signed (or too old). */
  parseUnsubscribeAddress(address: string): TrackingTarget | null {
    const match = /^unsubscribe\+([a-z]+_[0-9a-z]{26})-(\d{1,3})-(\d{1,10})-([0-9a-f]+)@/i.exec(address.trim());
    if (!match) return null;
    const target = { messageId: match[1]!.toLowerCase(), position: Number(match[2]) };
    const keyId = Number(match[3]);
    // The key's period is all the address says of its age: usable from that period's start (less
    // the skew allowed between nodes) until the lifetime has passed since its end.
    const now = this.clock.now();
    if (keyId * this.periodMs > now + CLOCK_SKEW_MS || now - (keyId + 1) * this.periodMs > this.lifetimeMs) return null;
    const given = Buffer.from(match[4]!.toLowerCase());
    const signed = this.masters.some((_, master) => {
      const expected = Buffer.from(this.mailtoTag(keyId, target, master));
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
    return signed ? target : null;
  }

  private keyIdAt(now: number): number {
    return Math.floor(now / this.periodMs);
  }

  /** A key id is usable when it matches the issue time and that time is neither in the future nor too old. */
  private usable(keyId: number, issuedAt: number): boolean {
    const now = this.clock.now();
    if (issuedAt > now + CLOCK_SKEW_MS || now - issuedAt > this.lifetimeMs) return false;
    return keyId === this.keyIdAt(issuedAt);
  }

  /** `master` indexes `masters`: 0, the current SECRET_KEY, signs; the others only verify. */
  private mac(keyId: number, payload: Buffer, master = 0): Buffer {
    return createHmac("sha256", this.key(keyId, master)).update(payload).digest().subarray(0, MAC_BYTES);
  }

  private mailtoTag(keyId: number, target: TrackingTarget, master = 0): string {
    return createHmac("sha256", this.key(keyId, master)).update(`unsubscribe:${target.messageId}:${target.position}`).digest("hex").slice(0, MAILTO_TAG_LENGTH);
  }

  /** Key `n`, derived once per process: HKDF-SHA256(SECRET_KEY, info "mailroom:tracking:<n>"). */
  private key(keyId: number, master: number): Buffer {
    const cacheKey = `${master}:${keyId}`;
    let key = this.keys.get(cacheKey);
    if (!key) {
      key = Buffer.from(hkdfSync("sha256", this.masters[master]!, Buffer.alloc(0), `mailroom:tracking:${keyId}`, 32));
      this.keys.set(cacheKey, key);
      // Only the periods within the lifetime are ever derived; keep the map from growing past them.
      if (this.keys.size > (Math.ceil(this.lifetimeMs / this.periodMs) + 4) * this.masters.length) this.keys.delete(this.keys.keys().next().value!);
    }
    return key;
  }
}
