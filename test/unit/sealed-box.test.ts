import { describe, expect, it } from "vitest";
import { secretKeys } from "../../src/domain/secret-keys.js";
import { SealedBox } from "../../src/services/sealed-box.js";

const OLD = "0a".repeat(32);
const NEW = "1b".repeat(32);

describe("SealedBox", () => {
  it("opens what it sealed, and nothing sealed for another purpose or under another key", () => {
    const box = new SealedBox(secretKeys(NEW), "dkim-keys");
    const sealed = box.seal("-----BEGIN PRIVATE KEY-----");
    expect(box.open(sealed)).toBe("-----BEGIN PRIVATE KEY-----");
    expect(() => new SealedBox(secretKeys(NEW), "webhook-secrets").open(sealed)).toThrow();
    expect(() => new SealedBox(secretKeys(OLD), "dkim-keys").open(sealed)).toThrow();
  });

  it("opens values sealed under a previous key, and seals new ones under the current key only", () => {
    const before = new SealedBox(secretKeys(OLD), "dkim-keys");
    const rotated = new SealedBox(secretKeys(NEW, [OLD]), "dkim-keys");
    expect(rotated.open(before.seal("old"))).toBe("old");
    expect(() => before.open(rotated.seal("new"))).toThrow();
  });

  it("reseals a previous key's value under the current key, leaves a current one, and throws for one no key opens", () => {
    const rotated = new SealedBox(secretKeys(NEW, [OLD]), "dkim-keys");
    const resealed = rotated.reseal(new SealedBox(secretKeys(OLD), "dkim-keys").seal("old"))!;
    expect(new SealedBox(secretKeys(NEW), "dkim-keys").open(resealed)).toBe("old");
    expect(rotated.reseal(resealed)).toBeNull();
    expect(() => rotated.reseal(new SealedBox(secretKeys("2c".repeat(32)), "dkim-keys").seal("lost"))).toThrow();
  });
});

describe("SealedBox.sealDeflated", () => {
  const html = `<tr><td style="padding: 12px">"Product" &mdash; $19.99</td></tr>\n`.repeat(20_000);

  it("seals a fraction of a repetitive value's size, opens it, and still opens values sealed without deflating", async () => {
    const box = new SealedBox(secretKeys(NEW), "idempotent-responses");
    const sealed = await box.sealDeflated(html);
    expect(sealed.length).toBeLessThan(html.length / 20);
    expect(box.open(sealed)).toBe(html);
    expect(box.open(box.seal(html))).toBe(html);
  });

  it("reseals a deflated value under the current key in its own format", async () => {
    const rotated = new SealedBox(secretKeys(NEW, [OLD]), "idempotent-responses");
    const resealed = rotated.reseal(await new SealedBox(secretKeys(OLD), "idempotent-responses").sealDeflated(html))!;
    expect(resealed.length).toBeLessThan(html.length / 20);
    expect(new SealedBox(secretKeys(NEW), "idempotent-responses").open(resealed)).toBe(html);
    expect(rotated.reseal(resealed)).toBeNull();
  });

  it("does not open a deflated value stripped of its format marker", async () => {
    const box = new SealedBox(secretKeys(NEW), "idempotent-responses");
    const sealed = await box.sealDeflated(html);
    expect(() => box.open(sealed.slice(sealed.indexOf(".") + 1))).toThrow();
  });
});
