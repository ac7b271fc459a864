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
