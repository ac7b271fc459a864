import { createPrivateKey, createPublicKey, generateKeyPair, generateKeyPairSync, randomBytes, type KeyObject } from "node:crypto";

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

/**
 * The same, generated on libuv's thread pool, one at a time in the process: the pool has four
 * threads, which password hashing (scrypt) and file I/O share, and a loop of createDomain or
 * rotateDomainDkim calls must not fill it with RSA generations. Callers wait for their turn.
 */
export function generateDkimKeyAsync(algorithm: DkimAlgorithm): Promise<DkimKey> {
  return inTurn(
    () =>
      new Promise((resolve, reject) => {
        const done = (error: Error | null, _publicKey: KeyObject, privateKey: KeyObject) => (error ? reject(error) : resolve(toDkimKey(algorithm, privateKey)));
        if (algorithm === "rsa-sha256") generateKeyPair("rsa", { modulusLength: RSA_BITS }, done);
        else generateKeyPair("ed25519", undefined, done);
      }),
  );
}

/** Key generations of this process: whether one is running, and those waiting for their turn, first first. */
let generating = false;
const waiting: Array<() => void> = [];

async function inTurn<T>(task: () => Promise<T>): Promise<T> {
  if (generating) await new Promise<void>((resolve) => waiting.push(resolve));
  generating = true;
  try {
    return await task();
  } finally {
    // The turn passes straight to the next waiter, so no newcomer slips in between.
    const next = waiting.shift();
    if (next) next();
    else generating = false;
  }
}

const BASE32 = "0123456789abcdefghjkmnpqrstvwxyz";

/** Three random base-32 characters. */
function randomLabel(): string {
  // 256 is a multiple of 32: every character is equally likely.
  return [...randomBytes(3)].map((byte) => BASE32[byte % 32]).join("");
}

/**
 * The selectors' common part for a domain's new keys, `mr<yymm><3 random characters>`, each key's
 * selector adding `-rsa` or `-ed` (docs/domains.md): the date tells an operator how old a key is,
 * the random part keeps a re-added domain from reusing a selector that resolvers may still cache.
 * Drawn again while a selector it makes is one of `taken` (the domain's current keys'): a
 * rotation that reused its current selector in the same month would publish the new key over the
 * one that signs.
 */
export function dkimSelectorBase(now: number, taken: readonly string[], draw: () => string = randomLabel): string {
  const iso = new Date(now).toISOString();
  for (;;) {
    const base = `mr${iso.slice(2, 4)}${iso.slice(5, 7)}${draw()}`;
    if (!taken.some((selector) => selector.startsWith(`${base}-`))) return base;
  }
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
