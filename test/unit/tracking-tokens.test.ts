import { createHmac, hkdfSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { secretKeys } from "../../src/domain/secret-keys.js";
import { ManualClock } from "../../src/domain/clock.js";
import { KEY_PERIOD_MS, TOKEN_LIFETIME_MS, TrackingTokens } from "../../src/tracking/tokens.js";

const SECRET = "ab".repeat(32);
const messageId = "msg_01jd3k8m2q5v7w9x1y3z5a7b9c";
const DAY = 24 * 3600 * 1000;
/** The host a click link was issued for: the tracking domain, or TRACKING_BASE_URL's host. */
const HOST = "t.mail.example";

const setup = () => {
  const clock = new ManualClock(Date.parse("2026-11-21T10:00:00Z"));
  return { clock, tokens: new TrackingTokens(secretKeys(SECRET), clock) };
};

/** Flips one bit of the decoded token at `byte` (from the start, or from the end when negative). */
function flip(token: string, byte: number): string {
  const raw = Buffer.from(token, "base64url");
  const at = byte < 0 ? raw.length + byte : byte;
  raw[at] = raw[at]! ^ 0x01;
  return raw.toString("base64url");
}

describe("TrackingTokens", () => {
  it("reads back what it signed: the message, the recipient, the kind, the click URL and when it was issued", () => {
    const { clock, tokens } = setup();
    const url = "https://shop.example/orders/42?utm_source=mail&q=é";
    const click = tokens.issue({ kind: "click", messageId, position: 7, url, host: HOST, sandbox: false });
    expect(click).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(tokens.verifyClick(click, HOST)).toEqual({ kind: "click", messageId, position: 7, url, sandbox: false, issuedAt: Math.floor(clock.now() / 1000) * 1000 });
    expect(tokens.verify(tokens.issue({ kind: "open", messageId, position: 0 }), "open")).toMatchObject({ kind: "open", messageId, position: 0 });
    expect(tokens.verify(tokens.issue({ kind: "unsubscribe", messageId, position: 49 }), "unsubscribe")).toMatchObject({ kind: "unsubscribe", position: 49 });
  });

  it("refuses a token with any byte changed: the URL, the recipient, the message or the signature", () => {
    const { tokens } = setup();
    const token = tokens.issue({ kind: "click", messageId, position: 1, url: "https://shop.example/a", host: HOST, sandbox: false });
    for (const byte of [0, 1, 9, 11, 12, 14, 30, -17, -1]) expect(tokens.verifyClick(flip(token, byte), HOST)).toBeNull();
    // A URL swapped for another with the signature kept: the open redirect an attacker wants.
    const other = tokens.issue({ kind: "click", messageId, position: 1, url: "https://evil.example/a", host: HOST, sandbox: false });
    const forged = Buffer.concat([Buffer.from(other, "base64url").subarray(0, -16), Buffer.from(token, "base64url").subarray(-16)]).toString("base64url");
    expect(tokens.verifyClick(forged, HOST)).toBeNull();
  });

  it("verifies tokens and mailto addresses signed under a key listed in SECRET_KEY_PREVIOUS, and signs new ones with SECRET_KEY", () => {
    const { clock, tokens: before } = setup();
    const link = before.issue({ kind: "click", messageId, position: 2, url: "https://acme.example/a", host: HOST, sandbox: false });
    const mailto = before.unsubscribeMailto({ messageId, position: 2 }, "b.example");
    const rotated = new TrackingTokens(secretKeys("cd".repeat(32), [SECRET]), clock);
    expect(rotated.verifyClick(link, HOST)).toMatchObject({ messageId, position: 2, url: "https://acme.example/a" });
    expect(rotated.parseUnsubscribeAddress(mailto)).toEqual({ messageId, position: 2 });
    // New tokens are the new key's: a server that has only the old key refuses them.
    expect(before.verify(rotated.issue({ kind: "open", messageId, position: 0 }), "open")).toBeNull();
    // Once the old key is dropped, what it signed no longer verifies.
    const dropped = new TrackingTokens(secretKeys("cd".repeat(32)), clock);
    expect(dropped.verifyClick(link, HOST)).toBeNull();
    expect(dropped.parseUnsubscribeAddress(mailto)).toBeNull();
  });

  it("refuses a token of another kind, from another server's secret, or that is not a token at all", () => {
    const { clock, tokens } = setup();
    const open = tokens.issue({ kind: "open", messageId, position: 0 });
    expect(tokens.verify(open, "unsubscribe")).toBeNull();
    expect(tokens.verifyClick(open, HOST)).toBeNull();
    expect(tokens.verify(new TrackingTokens(secretKeys("cd".repeat(32)), clock).issue({ kind: "open", messageId, position: 0 }), "open")).toBeNull();
    for (const junk of ["", "x", "not a token", "A".repeat(40), `${open}.gif`, open.slice(0, -2)]) expect(tokens.verify(junk, "open")).toBeNull();
  });

  it("rotates its key every period while older links keep working for the documented lifetime, then 404", () => {
    const { clock, tokens } = setup();
    const first = tokens.issue({ kind: "unsubscribe", messageId, position: 0 });
    clock.advance(KEY_PERIOD_MS);
    const second = tokens.issue({ kind: "unsubscribe", messageId, position: 0 });
    // A new key: the same claims sign differently.
    expect(Buffer.from(second, "base64url").readUInt32BE(2)).toBe(Buffer.from(first, "base64url").readUInt32BE(2) + 1);
    expect(tokens.verify(first, "unsubscribe")).not.toBeNull();
    clock.advance(TOKEN_LIFETIME_MS - KEY_PERIOD_MS - DAY);
    expect(tokens.verify(first, "unsubscribe")).not.toBeNull();
    clock.advance(2 * DAY);
    expect(tokens.verify(first, "unsubscribe")).toBeNull();
    expect(tokens.verify(second, "unsubscribe")).not.toBeNull();
  });

  it("refuses a token that claims to have been issued in the future", () => {
    const { clock, tokens } = setup();
    const later = new TrackingTokens(secretKeys(SECRET), new ManualClock(clock.now() + 2 * KEY_PERIOD_MS)).issue({ kind: "open", messageId, position: 0 });
    expect(tokens.verify(later, "open")).toBeNull();
  });

  it("takes a click token only at the host it was issued for, however that host is written", () => {
    const { tokens } = setup();
    const click = tokens.issue({ kind: "click", messageId, position: 0, url: "https://shop.example/", host: "Track.Acme.Example", sandbox: true });
    for (const host of ["track.acme.example", "TRACK.acme.example", "track.acme.example:443", "track.acme.example."]) expect(tokens.verifyClick(click, host), host).toMatchObject({ url: "https://shop.example/", sandbox: true });
    for (const host of ["track.evil.example", "acme.example", "evil@track.acme.example", "track.acme.example.evil.example", "", "[::1]"]) expect(tokens.verifyClick(click, host), host).toBeNull();
    // The host is length-prefixed in the MAC: bytes cannot move between the URL and the host.
    const shifted = tokens.issue({ kind: "click", messageId, position: 0, url: "https://shop.example/track", host: "acme.example", sandbox: false });
    expect(tokens.verifyClick(shifted, "trackacme.example")).toBeNull();
    expect(tokens.verifyClick(tokens.issue({ kind: "click", messageId, position: 0, url: "https://a.example/", host: "[::1]", sandbox: false }), "[0:0::1]:8080")).not.toBeNull();
  });

  it("still takes a click token issued before tokens named their host (version 1), at any host, until it expires", () => {
    const { clock, tokens } = setup();
    // Version 1: version kind key-id issued-at position id-length message-id url, then the MAC over those bytes alone.
    const url = "https://shop.example/old";
    const id = Buffer.from(messageId, "latin1");
    const payload = Buffer.concat([Buffer.from([1, 1]), Buffer.alloc(4), Buffer.alloc(4), Buffer.from([0, 3, id.length]), id, Buffer.from(url)]);
    const keyId = Math.floor(clock.now() / KEY_PERIOD_MS);
    payload.writeUInt32BE(keyId, 2);
    payload.writeUInt32BE(Math.floor(clock.now() / 1000), 6);
    const key = Buffer.from(hkdfSync("sha256", Buffer.from(SECRET, "hex"), Buffer.alloc(0), `mailroom:tracking:${keyId}`, 32));
    const legacy = Buffer.concat([payload, createHmac("sha256", key).update(payload).digest().subarray(0, 16)]).toString("base64url");
    for (const host of [HOST, "anywhere.example"]) expect(tokens.verifyClick(legacy, host)).toEqual({ kind: "click", messageId, position: 3, url, sandbox: false, issuedAt: Math.floor(clock.now() / 1000) * 1000 });
    expect(tokens.verifyClick(flip(legacy, -1), HOST)).toBeNull();
    clock.advance(TOKEN_LIFETIME_MS + DAY);
    expect(tokens.verifyClick(legacy, HOST)).toBeNull();
  });

  it("gives a lower-case unsubscribe address that fits a local part, and reads it back whatever the case", () => {
    const { tokens } = setup();
    const address = tokens.unsubscribeMailto({ messageId, position: 12 }, "bounces.acme.example");
    expect(address).toMatch(/^unsubscribe\+msg_01jd3k8m2q5v7w9x1y3z5a7b9c-12-\d+-[0-9a-f]{10}@bounces\.acme\.example$/);
    expect(address.split("@")[0]!.length).toBeLessThanOrEqual(64);
    expect(tokens.parseUnsubscribeAddress(address)).toEqual({ messageId, position: 12 });
    expect(tokens.parseUnsubscribeAddress(address.toUpperCase())).toEqual({ messageId, position: 12 });
  });

  it("refuses an unsubscribe address with another recipient, a forged tag, another key or too old", () => {
    const { clock, tokens } = setup();
    const address = tokens.unsubscribeMailto({ messageId, position: 1 }, "b.example");
    expect(tokens.parseUnsubscribeAddress(address.replace("-1-", "-2-"))).toBeNull();
    expect(tokens.parseUnsubscribeAddress(address.replace(/-[0-9a-f]{10}@/, "-0000000000@"))).toBeNull();
    expect(tokens.parseUnsubscribeAddress(new TrackingTokens(secretKeys("cd".repeat(32)), clock).unsubscribeMailto({ messageId, position: 1 }, "b.example"))).toBeNull();
    expect(tokens.parseUnsubscribeAddress("reply+msg_01jd3k8m2q5v7w9x1y3z5a7b9c-0123456789@b.example")).toBeNull();
    clock.advance(TOKEN_LIFETIME_MS + 2 * KEY_PERIOD_MS);
    expect(tokens.parseUnsubscribeAddress(address)).toBeNull();
  });
});
