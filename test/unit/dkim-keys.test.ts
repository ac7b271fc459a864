import { createPublicKey, verify, sign, createPrivateKey } from "node:crypto";
import { describe, expect, it } from "vitest";
import { dkimDnsValue, generateDkimKey, generateDkimKeyAsync } from "../../src/domain/dkim-keys.js";

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
});

describe("dkimDnsValue", () => {
  it("derives the published value from a stored private key", () => {
    const key = generateDkimKey("ed25519-sha256");
    expect(dkimDnsValue(key.privateKeyPem)).toBe(key.dnsValue);
  });
});
