import { createPrivateKey, createPublicKey, generateKeyPair, generateKeyPairSync, type KeyObject } from "node:crypto";

/**
 * DKIM keys of a sending domain (DESIGN.md §9): an RSA-2048 key, which every verifier knows, and
 * optionally an Ed25519 one (RFC 8463), smaller and faster, signed alongside it because not every
 * verifier knows Ed25519 yet. The DNS value is what the domain publishes at
 * `<selector>._domainkey.<domain>` (RFC 6376 §3.6.1).
 */
export type DkimAlgorithm = "rsa-sha256" | "ed25519-sha256";

export interface DkimKey {
  algorithm: DkimAlgorithm;
  /** PKCS#8 PEM, the form src/delivery/dkim.ts signs with. */
  privateKeyPem: string;
  /** The TXT record value: "v=DKIM1; k=rsa; p=..." or "v=DKIM1; k=ed25519; p=...". */
  dnsValue: string;
}

// RFC 8301 §3.2: at least 1024 bits, 2048 recommended; 2048 still fits one TXT record well.
const RSA_BITS = 2048;

/**
 * A fresh key pair. RSA-2048 generation costs about 300 ms of CPU and blocks the event loop
 * for that long: request handlers should use generateDkimKeyAsync.
 */
export function generateDkimKey(algorithm: DkimAlgorithm): DkimKey {
  const { privateKey } = algorithm === "rsa-sha256" ? generateKeyPairSync("rsa", { modulusLength: RSA_BITS }) : generateKeyPairSync("ed25519");
  return toDkimKey(algorithm, privateKey);
}

/** The same, generated on libuv's thread pool. */
export function generateDkimKeyAsync(algorithm: DkimAlgorithm): Promise<DkimKey> {
  return new Promise((resolve, reject) => {
    const done = (error: Error | null, _publicKey: KeyObject, privateKey: KeyObject) => (error ? reject(error) : resolve(toDkimKey(algorithm, privateKey)));
    if (algorithm === "rsa-sha256") generateKeyPair("rsa", { modulusLength: RSA_BITS }, done);
    else generateKeyPair("ed25519", undefined, done);
  });
}

/** The TXT value for a stored private key, so that only the private key needs keeping. */
export function dkimDnsValue(privateKeyPem: string): string {
  const publicKey = createPublicKey(createPrivateKey(privateKeyPem));
  switch (publicKey.asymmetricKeyType) {
    case "rsa":
      // RFC 6376 §3.6.1: p= is the base64 of the DER SubjectPublicKeyInfo.
      return `v=DKIM1; k=rsa; p=${publicKey.export({ type: "spki", format: "der" }).toString("base64")}`;
    case "ed25519": {
      // RFC 8463 §4.2: p= is the base64 of the raw 32-byte public key, not of an SPKI structure.
      const raw = Buffer.from(publicKey.export({ format: "jwk" }).x!, "base64url");
      return `v=DKIM1; k=ed25519; p=${raw.toString("base64")}`;
    }
    default:
      throw new Error(`not a DKIM key type: ${publicKey.asymmetricKeyType}`);
  }
}

function toDkimKey(algorithm: DkimAlgorithm, privateKey: KeyObject): DkimKey {
  const privateKeyPem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  return { algorithm, privateKeyPem, dnsValue: dkimDnsValue(privateKeyPem) };
}
