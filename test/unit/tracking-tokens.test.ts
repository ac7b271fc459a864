import { describe, expect, it } from "vitest";
import { secretKeys } from "../../src/domain/secret-keys.js";
import { ManualClock } from "../../src/domain/clock.js";
import { KEY_PERIOD_MS, TOKEN_LIFETIME_MS, TrackingTokens } from "../../src/tracking/tokens.js";

const SECRET = "ab".repeat(32);
const messageId = "msg_01jd3k8m2q5v7w9x1y3z5a7b9c";
const DAY = 24 * 3600 * 1000;

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
    const click = tokens.issue({ kind: "click", messageId, position: 7, url });
    expect(click).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(tokens.verify(click, "click")).toEqual({ kind: "click", messageId, position: 7, url, issuedAt: Math.floor(clock.now() / 1000) * 1000 });
    expect(tokens.verify(tokens.issue({ kind: "open", messageId, position: 0 }), "open")).toMatchObject({ kind: "open", messageId, position: 0 });
    expect(tokens.verify(tokens.issue({ kind: "unsubscribe", messageId, position: 49 }), "unsubscribe")).toMatchObject({ kind: "unsubscribe", position: 49 });
  });

  it("refuses a token with any byte changed: the URL, the recipient, the message or the signature", () => {
    const { tokens } = setup();
    const token = tokens.issue({ kind: "click", messageId, position: 1, url: "https://shop.example/a" });
    for (const byte of [1, 9, 11, 14, 30, -17, -1]) expect(tokens.verify(flip(token, byte), "click")).toBeNull();
    // A URL swapped for another with the signature kept: the open redirect an attacker wants.
    const other = tokens.issue({ kind: "click", messageId, position: 1, url: "https://evil.example/a" });
    const forged = Buffer.concat([Buffer.from(other, "base64url").subarray(0, -16), Buffer.from(token, "base64url").subarray(-16)]).toString("base64url");
    expect(tokens.verify(forged, "click")).toBeNull();
  });

  it("verifies tokens and mailto addresses signed under a key listed in SECRET_KEY_PREVIOUS, and signs new ones with SECRET_KEY", () => {
    const { clock, tokens: before } = setup();
    const link = before.issue({ kind: "click", messageId, position: 2, url: "https://acme.example/a" });
    const mailto = before.unsubscribeMailto({ messageId, position: 2 }, "b.example");
    const rotated = new TrackingTokens(secretKeys("cd".repeat(32), [SECRET]), clock);
    expect(rotated.verify(link, "click")).toMatchObject({ messageId, position: 2, url: "https://acme.example/a" });
    expect(rotated.parseUnsubscribeAddress(mailto)).toEqual({ messageId, position: 2 });
    // New tokens are the new key's: a server that has only the old key refuses them.
    expect(before.verify(rotated.issue({ kind: "open", messageId, position: 0 }), "open")).toBeNull();
    // Once the old key is dropped, what it signed no longer verifies.
    const dropped = new TrackingTokens(secretKeys("cd".repeat(32)), clock);
    expect(dropped.verify(link, "click")).toBeNull();
    expect(dropped.parseUnsubscribeAddress(mailto)).toBeNull();
  });

  it("refuses a token of another kind, from another server's secret, or that is not a token at all", () => {
    const { clock, tokens } = setup();
    const open = tokens.issue({ kind: "open", messageId, position: 0 });
    expect(tokens.verify(open, "unsubscribe")).toBeNull();
    expect(tokens.verify(open, "click")).toBeNull();
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
