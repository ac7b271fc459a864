import * as crypto from "node:crypto";
import { createPublicKey, verify, sign, createPrivateKey } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { dkimDnsValue, dkimSelectorBase, generateDkimKey, generateDkimKeyAsync } from "../../src/domain/dkim-keys.js";

// Passes through to the real function; a test wraps it to watch how many generations overlap.
vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof crypto>();
  return { ...actual, generateKeyPair: vi.fn(actual.generateKeyPair) };
});

/** The p= tag of a DKIM TXT value. */
const p = (dnsValue: string) => /(?:^|;\s*)p=([^;]*)/.exec(dnsValue)![1]!;

describe("generateDkimKey", () => {
  it("makes an RSA-2048 key whose TXT value carries the DER SubjectPublicKeyInfo (RFC 6376 §3.6.1)", () => {
    const key = generateDkimKey("rsa-sha256");
    expect(key.algorithm).toBe("rsa-sha256");
    expect(key.privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(key.dnsValue).toMatch(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/]+=*$/);

    const publicKey = createPublicKey({ key: Buffer.from(p(key.dnsValue), "base64"), format: "der", type: "spki" });
    expect(publicKey.asymmetricKeyType).toBe("rsa");
    expect(publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    const signature = sign("sha256", Buffer.from("data"), key.privateKeyPem);
    expect(verify("sha256", Buffer.from("data"), publicKey, signature)).toBe(true);
  });

  it("makes an Ed25519 key whose TXT value is the raw 32-byte public key (RFC 8463 §4.2)", () => {
    const key = generateDkimKey("ed25519-sha256");
    expect(key.dnsValue).toMatch(/^v=DKIM1; k=ed25519; p=[A-Za-z0-9+/]{43}=$/);
    const raw = Buffer.from(p(key.dnsValue), "base64");
    expect(raw).toHaveLength(32);

    const publicKey = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") }, format: "jwk" });
    const signature = sign(null, Buffer.from("data"), key.privateKeyPem);
    expect(verify(null, Buffer.from("data"), publicKey, signature)).toBe(true);
  });

  it("makes a different key every time", () => {
    expect(generateDkimKey("ed25519-sha256").privateKeyPem).not.toBe(generateDkimKey("ed25519-sha256").privateKeyPem);
  });
});

describe("generateDkimKeyAsync", () => {
  it("makes the same kinds of keys off the event loop", async () => {
    const [rsa, ed] = await Promise.all([generateDkimKeyAsync("rsa-sha256"), generateDkimKeyAsync("ed25519-sha256")]);
    expect(createPrivateKey(rsa.privateKeyPem).asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(rsa.dnsValue).toMatch(/^v=DKIM1; k=rsa; p=/);
    expect(ed.dnsValue).toMatch(/^v=DKIM1; k=ed25519; p=/);
  });

  it("generates one key at a time in the process, the others waiting their turn rather than refused", async () => {
    const generateKeyPair = vi.mocked(crypto.generateKeyPair);
    const real = generateKeyPair.getMockImplementation()!;
    generateKeyPair.mockClear();
    let running = 0;
    let most = 0;
    generateKeyPair.mockImplementation(((type: never, options: never, done: (...args: unknown[]) => void) => {
      most = Math.max(most, ++running);
      (real as (...args: unknown[]) => void)(type, options, (...args: unknown[]) => {
        running--;
        done(...args);
      });
    }) as never);
    try {
      const keys = await Promise.all([generateDkimKeyAsync("rsa-sha256"), generateDkimKeyAsync("ed25519-sha256"), generateDkimKeyAsync("rsa-sha256"), generateDkimKeyAsync("ed25519-sha256")]);
      expect(keys.map((key) => key.algorithm)).toEqual(["rsa-sha256", "ed25519-sha256", "rsa-sha256", "ed25519-sha256"]);
      expect(generateKeyPair).toHaveBeenCalledTimes(4);
      expect(most).toBe(1);
    } finally {
      generateKeyPair.mockImplementation(real);
    }
  });

  it("gives the next waiter its turn when a generation fails", async () => {
    const generateKeyPair = vi.mocked(crypto.generateKeyPair);
    generateKeyPair.mockImplementationOnce(((_type: never, _options: never, done: (error: Error) => void) => done(new Error("no entropy"))) as never);
    const [failed, made] = await Promise.allSettled([generateDkimKeyAsync("ed25519-sha256"), generateDkimKeyAsync("ed25519-sha256")]);
    expect(failed).toMatchObject({ status: "rejected", reason: { message: "no entropy" } });
    expect(made).toMatchObject({ status: "fulfilled", value: { algorithm: "ed25519-sha256" } });
  });
});

describe("dkimSelectorBase", () => {
  const NOW = Date.UTC(2026, 10, 22);
  it("is mr<yymm> and three random characters", () => {
    expect(dkimSelectorBase(NOW, [])).toMatch(/^mr2611[0-9a-hjkmnp-tv-z]{3}$/);
  });

  it("draws again while the selectors it would make are ones the domain already has", () => {
    const draws = ["abc", "abc", "abd"];
    const draw = vi.fn(() => draws.shift()!);
    expect(dkimSelectorBase(NOW, ["mr2611abc-rsa", "mr2611abc-ed"], draw)).toBe("mr2611abd");
    expect(draw).toHaveBeenCalledTimes(3);
  });
});

describe("dkimDnsValue", () => {
  it("derives the published value from a stored private key", () => {
    const key = generateDkimKey("ed25519-sha256");
    expect(dkimDnsValue(key.privateKeyPem)).toBe(key.dnsValue);
  });
});
