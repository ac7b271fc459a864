import { createHash, createPrivateKey, sign, type KeyObject } from "node:crypto";
import { createRequire } from "node:module";
import { promisify } from "node:util";
import type { DkimAlgorithm } from "../domain/dkim-keys.js";

/**
 * DKIM signing of every outgoing message (RFC 6376; Ed25519 per RFC 8463), relaxed/relaxed,
 * one DKIM-Signature per signer (typically the domain's RSA key and its Ed25519 key).
 *
 * Canonicalization, the body hash and the signature header's layout are mailauth's, the same
 * code its verifier uses. mailauth's own dkimSign() is not called, because it parses the PEM
 * private key on every message (OpenSSL 3 takes ~0.3 ms per parse, more than an RSA-2048
 * signature), streams the message through a Writable a chunk per tick, and cannot oversign.
 * Measured on the 2-core dev machine, 4.7 KB message, RSA-2048 + Ed25519, CPU per message:
 *   mailauth dkimSign()                              ~1.6 ms (~450-620 messages/s per core)
 *   this module (mailauth canonicalization, cached
 *   KeyObjects, one body hash for both signatures)   ~0.45 ms (~2,000 per core; RSA signing is 0.3 ms of it)
 * So the building blocks come from mailauth's internals (lib/tools, lib/dkim/body,
 * lib/dkim/header) at the pinned version; test/unit/dkim.test.ts verifies the output with
 * mailauth's verifier, and the lead's python3-dkim test independently.
 */
export interface DkimSigner {
  domain: string;
  selector: string;
  privateKeyPem: string;
  algorithm: DkimAlgorithm;
}

export interface SignOptions {
  /** The t= tag; injectable for tests. */
  now?: number;
}

/**
 * The headers signed, when present: the ones a reader sees or a client acts on. From is signed
 * once more than it occurs ("oversigned", RFC 6376 §8.15), so that nobody can add a second From
 * to a signed message and have it still verify. List-Unsubscribe and List-Unsubscribe-Post must
 * be signed for one-click unsubscribe to be honoured (RFC 8058 §4); Gmail wants Feedback-ID signed.
 * Bcc never appears in the headers (the composer leaves it out).
 */
const SIGNED_HEADERS = [
  "From", "Sender", "Reply-To", "To", "Cc", "Subject", "Date", "Message-ID", "In-Reply-To", "References",
  "MIME-Version", "Content-Type", "Content-Transfer-Encoding",
  "List-Id", "List-Unsubscribe", "List-Unsubscribe-Post", "Feedback-ID",
].join(":");
const OVERSIGNED = "From";

/**
 * Signs off the event loop: with a callback, crypto.sign runs on libuv's thread pool, so an
 * RSA-2048 signature (~0.3 ms) no longer stalls the worker's other deliveries and both cores
 * can sign at once.
 */
export async function signMessage(mime: Buffer | string, signers: readonly DkimSigner[], options: SignOptions = {}): Promise<Buffer> {
  const { message, unsigned } = prepareSignatures(mime, signers, options);
  const signatures = await Promise.all(unsigned.map(({ algorithm, data, key }) => signOnThreadPool(algorithm, data, key)));
  return assemble(message, unsigned, signatures);
}

/** The same, synchronously (it does no I/O); for benchmarks and callers that batch. */
export function signMessageSync(mime: Buffer | string, signers: readonly DkimSigner[], options: SignOptions = {}): Buffer {
  const { message, unsigned } = prepareSignatures(mime, signers, options);
  return assemble(message, unsigned, unsigned.map(({ algorithm, data, key }) => sign(algorithm, data, key)));
}

const signOnThreadPool = promisify(sign) as (algorithm: string | null, data: Buffer, key: KeyObject) => Promise<Buffer>;

/** A signature to compute: what to sign, with which key, and the header fields around it. */
interface UnsignedSignature {
  algorithm: "sha256" | null;
  data: Buffer;
  key: KeyObject;
  headerOptions: Record<string, unknown>;
}

/** Everything but the signing itself: wire form, one body hash, each signer's canonical header. */
function prepareSignatures(mime: Buffer | string, signers: readonly DkimSigner[], options: SignOptions): { message: Buffer; unsigned: UnsignedSignature[] } {
  // What is signed must be what goes on the wire.
  const message = wireForm(typeof mime === "string" ? Buffer.from(mime, "utf8") : mime);
  if (signers.length === 0) return { message, unsigned: [] };

  const end = message.indexOf("\r\n\r\n");
  const head = end === -1 ? message : message.subarray(0, end + 2);
  const body = end === -1 ? Buffer.alloc(0) : message.subarray(end + 4);

  // Both algorithms hash the body with SHA-256 and relaxed canonicalization: one body hash.
  const bodyHasher = mailauth.dkimBody("relaxed", "sha256", false);
  bodyHasher.update(body);
  const bodyHash = bodyHasher.digest("base64");

  const signing = mailauth.tools.getSigningHeaderLines(mailauth.tools.parseHeaders(head).parsed, SIGNED_HEADERS);
  // The extra name stands for an instance that does not exist, which canonicalizes to nothing
  // (RFC 6376 §5.4.2): it changes h= and nothing else.
  const oversigned = { keys: `${signing.keys}: ${OVERSIGNED}`, headers: signing.headers };
  // The same t= for every signature, and passed in: without it mailauth reads the clock once
  // for the signed header and again for the emitted one, which differ across a second boundary.
  const signTime = new Date(options.now ?? Date.now());

  const unsigned = signers.map((signer): UnsignedSignature => {
    const key = privateKey(signer);
    const { canonicalizedHeader, dkimHeaderOpts } = mailauth.generateCanonicalizedHeader("DKIM", oversigned, {
      signingDomain: signer.domain,
      selector: signer.selector,
      algorithm: signer.algorithm,
      canonicalization: "relaxed/relaxed",
      bodyHash,
      signTime,
    });
    // RFC 8463 §3: Ed25519 signs the SHA-256 hash of the canonicalized headers (PureEdDSA over it).
    return signer.algorithm === "rsa-sha256"
      ? { algorithm: "sha256", data: canonicalizedHeader, key, headerOptions: dkimHeaderOpts }
      : { algorithm: null, data: createHash("sha256").update(canonicalizedHeader).digest(), key, headerOptions: dkimHeaderOpts };
  });
  return { message, unsigned };
}

/** The DKIM-Signature fields, in signer order, in front of the message. */
function assemble(message: Buffer, unsigned: readonly UnsignedSignature[], signatures: readonly Buffer[]): Buffer {
  if (unsigned.length === 0) return message;
  const lines = unsigned.map(({ headerOptions }, i) => mailauth.tools.formatSignatureHeaderLine("DKIM", { ...headerOptions, b: signatures[i]!.toString("base64") }, true));
  return Buffer.concat([Buffer.from(lines.join("\r\n") + "\r\n", "latin1"), message]);
}

// Parsed keys by PEM. Parsing is the expensive part of signing; a worker signs for a bounded
// number of domains, and the bound keeps a process that has seen many from growing for ever.
const MAX_CACHED_KEYS = 1000;
const keys = new Map<string, KeyObject>();

function privateKey(signer: DkimSigner): KeyObject {
  const cached = keys.get(signer.privateKeyPem);
  if (cached) {
    // Most recently used last: the first entry is the one to evict.
    keys.delete(signer.privateKeyPem);
    keys.set(signer.privateKeyPem, cached);
    return checked(cached, signer);
  }
  const key = checked(createPrivateKey(signer.privateKeyPem), signer);
  keys.set(signer.privateKeyPem, key);
  if (keys.size > MAX_CACHED_KEYS) keys.delete(keys.keys().next().value!);
  return key;
}

/** A key that does not match its algorithm is a configuration bug: fail loudly, never sign wrongly. */
function checked(key: KeyObject, signer: DkimSigner): KeyObject {
  const expected = signer.algorithm === "rsa-sha256" ? "rsa" : "ed25519";
  if (key.asymmetricKeyType !== expected) throw new Error(`DKIM key for ${signer.selector}._domainkey.${signer.domain} is ${key.asymmetricKeyType}, not ${expected}`);
  if (expected === "rsa" && (key.asymmetricKeyDetails?.modulusLength ?? 0) < 1024) {
    throw new Error(`DKIM key for ${signer.selector}._domainkey.${signer.domain} is shorter than 1024 bits (RFC 8301)`);
  }
  return key;
}

/**
 * The message as SMTP carries it: CRLF line ends, and a CRLF at the end (the DATA stream adds
 * one before the final dot anyway). The common case, already so, is checked without copying.
 * Ending the body with CRLF also keeps clear of mailauth 4.13's relaxed body hash, which keeps
 * a single trailing space on a last line that has no line end.
 */
function wireForm(message: Buffer): Buffer {
  let bare = false;
  for (let at = message.indexOf(0x0a); at !== -1; at = message.indexOf(0x0a, at + 1)) {
    if (at === 0 || message[at - 1] !== 0x0d) {
      bare = true;
      break;
    }
  }
  const crlf = bare ? Buffer.from(message.toString("latin1").replace(/\r?\n/g, "\r\n"), "latin1") : message;
  return crlf.length === 0 || (crlf[crlf.length - 2] === 0x0d && crlf[crlf.length - 1] === 0x0a) ? crlf : Buffer.concat([crlf, Buffer.from("\r\n")]);
}

// mailauth's internals carry no type declarations: the few functions used, as they are at 4.13.
interface ParsedHeader {
  key: string;
  casedKey: string;
  line: Buffer;
}
interface SigningHeaderLines {
  keys: string;
  headers: ParsedHeader[];
}
interface Mailauth {
  tools: {
    parseHeaders(head: Buffer): { parsed: ParsedHeader[] };
    getSigningHeaderLines(parsed: ParsedHeader[], fieldNames: string): SigningHeaderLines;
    formatSignatureHeaderLine(type: "DKIM", values: Record<string, unknown>, folded: boolean): string;
  };
  dkimBody(canonicalization: "relaxed", hashAlgo: "sha256", maxBodyLength: false): { update(chunk: Buffer): void; digest(encoding: "base64"): string };
  generateCanonicalizedHeader(
    type: "DKIM",
    lines: SigningHeaderLines,
    options: { signingDomain: string; selector: string; algorithm: string; canonicalization: string; bodyHash: string; signTime: Date },
  ): { canonicalizedHeader: Buffer; dkimHeaderOpts: Record<string, unknown> };
}

const require = createRequire(import.meta.url);
const mailauth: Mailauth = {
  tools: require("mailauth/lib/tools.js") as Mailauth["tools"],
  dkimBody: (require("mailauth/lib/dkim/body/index.js") as { dkimBody: Mailauth["dkimBody"] }).dkimBody,
  generateCanonicalizedHeader: (require("mailauth/lib/dkim/header/index.js") as { generateCanonicalizedHeader: Mailauth["generateCanonicalizedHeader"] }).generateCanonicalizedHeader,
};
