import { dkimSign } from "mailauth/lib/dkim/sign.js";
import { dkimVerify } from "mailauth/lib/dkim/verify.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { dkimTestKeys, mailauthSignatures, type MailauthSigner } from "../helpers/dkim-signers.js";

// mailauthSignatures is the test helper that signs as another sender's MTA would (the inbound
// tests send its signatures to the inbound server). Its signatures must verify whenever they are
// made: the inbound DKIM test once saw a validly signed reply recorded as dkim "fail".
const { rsa, ed, resolver } = dkimTestKeys();
const signers: MailauthSigner[] = [
  { signingDomain: "acme.example", selector: "mr1", privateKey: rsa.privateKeyPem, algorithm: "rsa-sha256" },
  { signingDomain: "acme.example", selector: "mr2", privateKey: ed.privateKeyPem, algorithm: "ed25519-sha256" },
];
const message = ["From: Ada <ada@acme.example>", "To: support@example.net", "Subject: Re: Your receipt", "Date: Sat, 21 Nov 2026 10:12:00 +0000", "", "Signed and sealed.", ""].join("\r\n");

// A clock at x.499 s that moves on a millisecond at every read: mailauth's Math.round(Date.now() / 1000)
// gives x for its first read and x + 1 for every later one, as a real clock does when the RSA
// signature between two reads takes past x.500.
function clockAtHalfSecondEdge() {
  let now = Date.UTC(2026, 10, 21, 10, 12, 0) + 499;
  vi.spyOn(Date, "now").mockImplementation(() => now++);
}
const verify = async (signed: string) => {
  vi.restoreAllMocks();
  return (await dkimVerify(Buffer.from(signed), { resolver })).results.map((r) => [r.selector, r.status.comment ? `${r.status.result} (${r.status.comment})` : r.status.result]);
};

describe("mailauthSignatures", () => {
  afterEach(() => vi.restoreAllMocks());

  it("signs the t= it emits when the clock crosses a half second during signing", async () => {
    clockAtHalfSecondEdge();
    const signatures = await mailauthSignatures(message, signers);
    expect(await verify(signatures + message)).toEqual([
      ["mr1", "pass"],
      ["mr2", "pass"],
    ]);
  });

  it("(the race it avoids: mailauth's dkimSign left to read the clock itself signs one t= and emits another)", async () => {
    clockAtHalfSecondEdge();
    const signer = { ...signers[0]!, canonicalization: "relaxed/relaxed" };
    const signed = await dkimSign(message, { ...signer, signatureData: [signer] });
    expect(await verify(signed.signatures + message)).toEqual([["mr1", "fail (bad signature)"]]);
  });
});
