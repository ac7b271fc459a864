import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import type { Clock } from "../domain/clock.js";
import { allSecretKeys, type SecretKeys } from "../domain/secret-keys.js";

/**
 * Signed tracking tokens (DESIGN.md §10, docs/tracking.md#tokens). A token names a message, one
 * of its recipients (by position), what it is for, and for a click the URL to go to; the server
 * keeps nothing per link. It is `base64url(payload || mac)`:
 *
 *   open, unsubscribe (version 1):
 *     payload = 1 kind(1) key id(u32) issued at(u32, seconds) position(u16) id length(1) message id
 *     mac     = the first 16 bytes of HMAC-SHA256(key[key id], payload)
 *   click (version 2):
 *     payload = 2 kind(1) key id(u32) issued at(u32, seconds) position(u16) flags(1)
 *               id length(1) message id url
 *     mac     = the first 16 bytes of HMAC-SHA256(key[key id], host length(1) host payload)
 *
 * A click token is bound to the host its link names (the tracking domain, or TRACKING_BASE_URL's
 * host), which is in the MAC but not in the token: the route verifies it against the host the
 * request was made to. One server answers the operator's host and every workspace's tracking
 * domain, so without it a link any workspace put in its own mail (and can read back from its
 * sandbox) would be a redirect to anywhere on all of them. Flags: bit 0, a sandbox message's
 * (its click is answered with a page, not a redirect). Version 1 click tokens, issued before
 * clicks were bound, name no host and no flags: they are still taken, at any host, until they
 * expire. Opens and unsubscribes are not bound: they go nowhere and act only on their recipient.
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

export type TrackingClaims = TrackingTarget & { issuedAt: number; kind: "open" | "unsubscribe" };

export type ClickClaims = TrackingTarget & {
  issuedAt: number;
  kind: "click";
  url: string;
  /** A sandbox message's link (false for a version 1 token, which does not say). */
  sandbox: boolean;
};

export type TrackingClaimsInput =
  | (TrackingTarget & { kind: "open" | "unsubscribe" })
  /** `host`: the host the link's URL names, where the click must come in. */
  | (TrackingTarget & { kind: "click"; url: string; host: string; sandbox: boolean });

/** A new key every 30 days. */
export const KEY_PERIOD_MS = 30 * 24 * 3600 * 1000;
/**
 * Links work for a year after the message was sent: long past any open or click that matters,
 * and past the 30 days that CAN-SPAM wants an unsubscribe link to keep working.
 */
export const TOKEN_LIFETIME_MS = 365 * 24 * 3600 * 1000;

/** Version 1: opens and unsubscribes, and clicks issued before clicks were bound to their host. */
const VERSION = 1;
/** Version 2: clicks, bound to their host, with flags. */
const CLICK_VERSION = 2;
const SANDBOX_FLAG = 0x01;
const KINDS: readonly TrackingKind[] = ["open", "click", "unsubscribe"];
const MAC_BYTES = 16; // 128 bits: forging one by guessing over HTTP is out of reach
/** Up to and including the id length; a version 2 token has one more byte (flags) before it. */
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
    const click = claims.kind === "click";
    const host = click ? normaliseHost(claims.host) : "";
    if (host === null) throw new RangeError(`not a host: ${JSON.stringify(claims.kind === "click" ? claims.host : "")}`);
    const id = Buffer.from(claims.messageId, "latin1");
    const url = click ? Buffer.from(claims.url, "utf8") : Buffer.alloc(0);
    const payload = Buffer.alloc(HEADER_BYTES + (click ? 1 : 0) + id.length + url.length);
    let at = payload.writeUInt8(click ? CLICK_VERSION : VERSION, 0);
    at = payload.writeUInt8(KINDS.indexOf(claims.kind), at);
    at = payload.writeUInt32BE(keyId, at);
    at = payload.writeUInt32BE(Math.floor(now / 1000), at);
    at = payload.writeUInt16BE(claims.position, at);
    if (click) at = payload.writeUInt8(claims.sandbox ? SANDBOX_FLAG : 0, at);
    at = payload.writeUInt8(id.length, at);
    at += id.copy(payload, at);
    url.copy(payload, at);
    return Buffer.concat([payload, this.mac(keyId, payload, 0, click ? host : null)]).toString("base64url");
  }

  /** An open or unsubscribe token's claims, or null when it is malformed, tampered with, expired or under an unknown key. */
  verify(token: string, kind: Exclude<TrackingKind, "click">): TrackingClaims | null {
    const read = this.read(token, kind, null);
    return read && { messageId: read.messageId, position: read.position, issuedAt: read.issuedAt, kind };
  }

  /**
   * A click token's claims when it was issued for `host` (the request's, as given: a port, a
   * trailing dot and the case do not matter), or null: not ours, expired, or for another host.
   */
  verifyClick(token: string, host: string): ClickClaims | null {
    const read = this.read(token, "click", normaliseHost(host));
    return read && { messageId: read.messageId, position: read.position, issuedAt: read.issuedAt, kind: "click", url: read.rest.toString("utf8"), sandbox: (read.flags & SANDBOX_FLAG) !== 0 };
  }

  /** `host`: what a version 2 token's MAC must cover; null for a request host that is no host (nothing version 2 verifies then). */
  private read(token: string, kind: TrackingKind, host: string | null): { messageId: string; position: number; issuedAt: number; flags: number; rest: Buffer } | null {
    if (!/^[A-Za-z0-9_-]+$/.test(token) || token.length > 4 * MAX_TRACKED_URL_BYTES) return null;
    const raw = Buffer.from(token, "base64url");
    if (raw.length < HEADER_BYTES + MAC_BYTES) return null;
    const payload = raw.subarray(0, raw.length - MAC_BYTES);
    const version = payload.readUInt8(0);
    if (KINDS[payload.readUInt8(1)] !== kind) return null;
    // Version 2 is for clicks only; a version 1 click is one issued before clicks were bound.
    if (!(version === VERSION || (version === CLICK_VERSION && kind === "click" && host !== null))) return null;
    const keyId = payload.readUInt32BE(2);
    const issuedAt = payload.readUInt32BE(6) * 1000;
    if (!this.usable(keyId, issuedAt)) return null;
    const mac = raw.subarray(raw.length - MAC_BYTES);
    const bound = version === CLICK_VERSION ? host : null;
    if (!this.masters.some((_, master) => timingSafeEqual(mac, this.mac(keyId, payload, master, bound)))) return null;
    const position = payload.readUInt16BE(10);
    const header = version === CLICK_VERSION ? HEADER_BYTES + 1 : HEADER_BYTES;
    if (payload.length < header) return null;
    const flags = version === CLICK_VERSION ? payload.readUInt8(12) : 0;
    const idLength = payload.readUInt8(header - 1);
    if (payload.length < header + idLength) return null;
    const messageId = payload.subarray(header, header + idLength).toString("latin1");
    return { messageId, position, issuedAt, flags, rest: payload.subarray(header + idLength) };
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

  /**
   * `master` indexes `masters`: 0, the current SECRET_KEY, signs; the others only verify. A
   * bound `host` goes first, length-prefixed, so no bytes can move between it and the URL.
   */
  private mac(keyId: number, payload: Buffer, master = 0, host: string | null = null): Buffer {
    const hmac = createHmac("sha256", this.key(keyId, master));
    if (host !== null) {
      const name = Buffer.from(host, "latin1");
      hmac.update(Buffer.from([name.length])).update(name);
    }
    return hmac.update(payload).digest().subarray(0, MAC_BYTES);
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

/**
 * A host as the MAC binds it: lower-case, no port, no trailing dot, IPv6 bracketed and
 * compressed, international names in punycode (the WHATWG URL parser's `hostname`). Null for
 * anything that is not a bare host and port (a user part, a path): a Host header like
 * `evil.example@track.acme.example` must not read as the host after its `@`.
 */
export function normaliseHost(host: string): string | null {
  if (host === "" || !/^[A-Za-z0-9._\-[\]:]+$/.test(host)) return null;
  let hostname: string;
  try {
    hostname = new URL(`http://${host}`).hostname;
  } catch {
    return null;
  }
  hostname = hostname.replace(/\.$/, "");
  return hostname === "" || hostname.length > 255 ? null : hostname;
}
