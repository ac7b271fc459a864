import { dkimSign } from "mailauth/lib/dkim/sign.js";
import type { DkimSigner } from "../../src/delivery/dkim.js";
import { generateDkimKey } from "../../src/domain/dkim-keys.js";

/**
 * A fresh RSA-2048 and Ed25519 key for acme.example (selectors mr1 and mr2), and a resolver for
 * mailauth's verifier that answers their published records without DNS.
 */
export function dkimTestKeys() {
  const rsa = generateDkimKey("rsa-sha256");
  const ed = generateDkimKey("ed25519-sha256");
  const signers: DkimSigner[] = [
    { domain: "acme.example", selector: "mr1", privateKeyPem: rsa.privateKeyPem, algorithm: "rsa-sha256" },
    { domain: "acme.example", selector: "mr2", privateKeyPem: ed.privateKeyPem, algorithm: "ed25519-sha256" },
  ];
  const records: Record<string, string> = { "mr1._domainkey.acme.example": rsa.dnsValue, "mr2._domainkey.acme.example": ed.dnsValue };
  const resolver = async (name: string) => {
    const value = records[name];
    if (value === undefined) throw Object.assign(new Error(`no TXT at ${name}`), { code: "ENOTFOUND" });
    return [[value]];
  };
  return { rsa, ed, signers, resolver };
}

export interface MailauthSigner {
  signingDomain: string;
  selector: string;
  /** PEM. */
  privateKey: string;
  algorithm: "rsa-sha256" | "ed25519-sha256";
}

/**
 * The DKIM-Signature field(s) mailauth's own dkimSign() makes for a message, relaxed/relaxed,
 * as another sender's MTA signs, with t= fixed to `signTime`. It must be passed: without it
 * mailauth reads the clock twice, as Math.round(Date.now() / 1000), once for the header it signs
 * and once for the header it emits, and when the RSA signature between the two reads straddles
 * a half second, t= differs by one and the signature fails ("bad signature"). The same reason
 * src/delivery/dkim.ts passes signTime.
 */
export async function mailauthSignatures(message: string | Buffer, signers: readonly MailauthSigner[], signTime = new Date()): Promise<string> {
  const signatureData = signers.map((signer) => ({ ...signer, canonicalization: "relaxed/relaxed" }));
  const result = await dkimSign(message, { ...signatureData[0]!, signatureData, signTime });
  if (result.errors.length > 0) throw new Error(`dkimSign: ${result.errors.map((e) => String((e as { err?: unknown }).err ?? e)).join("; ")}`);
  return result.signatures;
}
