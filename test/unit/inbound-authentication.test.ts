import { createHash } from "node:crypto";
import type { Resolver } from "node:dns/promises";
import { describe, expect, it } from "vitest";
import { authenticateSender, senderDomains } from "../../src/inbound/authentication.js";
import { dkimTestKeys, mailauthSignatures } from "../helpers/dkim-signers.js";

const keys = dkimTestKeys();
const message = ["From: Ada <ada@acme.example>", "To: reply@bounces.sender.example", "Subject: Re: Your receipt", "Date: Sat, 21 Nov 2026 10:12:00 +0000", "", "Thanks, got it.", ""].join("\r\n");

// The body's hash (relaxed canonicalisation leaves this body as it is): a signature whose bh= is
// right has its key looked up, as anyone who writes the message can make every one of theirs.
const bodyHash = createHash("sha256").update("Thanks, got it.\r\n").digest("base64");
/** A DKIM-Signature field that verifies nothing, under a selector of its own: a DNS lookup each. */
const forged = (i: number) => `DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=acme.example; s=f${i}; h=from:subject; bh=${bodyHash}; b=${"B".repeat(340)}\r\n`;

/** The test keys' DKIM records and nothing else, counting the DKIM key lookups. */
function countingResolver(): { resolver: Resolver; keyLookups: () => number } {
  let lookups = 0;
  const resolve = async (name: string, type: string) => {
    if (type === "TXT" && name.includes("._domainkey.")) lookups++;
    if (type === "TXT") return keys.resolver(name);
    throw Object.assign(new Error("no record"), { code: "ENOTFOUND" });
  };
  return { resolver: { resolve } as unknown as Resolver, keyLookups: () => lookups };
}

describe("inbound sender authentication", () => {
  const connection = { ip: "192.0.2.1", helo: "mx.acme.example", mailFrom: "" };

  it("verifies at most 5 DKIM signatures, the topmost, however many a message carries (2,000): each costs a DNS lookup, and with an l= of its own a pass over the body", async () => {
    const signature = await mailauthSignatures(message, [{ signingDomain: "acme.example", selector: "mr1", privateKey: keys.rsa.privateKeyPem, algorithm: "rsa-sha256" }]);
    const raw = Buffer.from(signature + Array.from({ length: 2_000 }, (_, i) => forged(i)).join("") + message);

    const replying = countingResolver();
    expect(await authenticateSender(raw, connection, replying.resolver, "mta.example")).toMatchObject({ dkim: "pass" });
    expect(replying.keyLookups()).toBeLessThanOrEqual(5);

    const reporting = countingResolver();
    expect((await senderDomains(raw, connection, reporting.resolver, "mta.example")).authenticated).toContain("acme.example");
    expect(reporting.keyLookups()).toBeLessThanOrEqual(5);
  });

  it("verifies every signature of a message that carries five, and none below the fifth", async () => {
    const signatures = await mailauthSignatures(message, [
      { signingDomain: "acme.example", selector: "mr1", privateKey: keys.rsa.privateKeyPem, algorithm: "rsa-sha256" },
      { signingDomain: "acme.example", selector: "mr2", privateKey: keys.ed.privateKeyPem, algorithm: "ed25519-sha256" },
    ]);
    const five = countingResolver();
    const fiveSigned = Buffer.from(forged(0) + signatures + forged(1) + forged(2) + message);
    expect(await authenticateSender(fiveSigned, connection, five.resolver, "mta.example")).toMatchObject({ dkim: "pass" });
    expect(five.keyLookups()).toBe(5);

    const below = countingResolver();
    const belowFifth = Buffer.from([0, 1, 2, 3, 4].map(forged).join("") + signatures + message);
    expect(await authenticateSender(belowFifth, connection, below.resolver, "mta.example")).not.toMatchObject({ dkim: "pass" });
    expect(below.keyLookups()).toBe(5);
  });
});
