import { dkimVerify } from "mailauth/lib/dkim/verify.js";
import { describe, expect, it } from "vitest";
import { signMessage } from "../../src/delivery/dkim.js";
import { dkimTestKeys } from "../helpers/dkim-signers.js";

// The signatures are checked with mailauth's verifier, fed the keys through its resolver hook
// (no DNS). The independent check with python3-dkim runs in the live-delivery integration tests.
const { ed, signers, resolver } = dkimTestKeys();
const verifyAll = async (raw: Buffer) => (await dkimVerify(raw, { resolver })).results.map((r) => ({ selector: r.selector, result: r.status.result, comment: r.status.comment }));

const message = [
  'From: "Acme" <hello@acme.example>',
  "To: bob@example.net",
  "Subject: Your receipt",
  "Date: Wed, 01 Jan 2025 00:00:00 +0000",
  "Message-ID: <msg_1@acme.example>",
  "List-Unsubscribe: <https://acme.example/u/1>",
  "List-Unsubscribe-Post: List-Unsubscribe=One-Click",
  "MIME-Version: 1.0",
  "Content-Type: text/plain; charset=utf-8",
  "Content-Transfer-Encoding: 7bit",
  "X-Not-Signed: ignored",
  "",
  "Thanks for your order.   ",
  "\tTotal:  12 EUR",
  "",
  "",
].join("\r\n");

describe("signMessage", () => {
  it("prepends one relaxed/relaxed signature per signer, in order, that verifies", async () => {
    const signed = await signMessage(message, signers, { now: Date.UTC(2025, 0, 1) });
    const text = signed.toString();
    expect(text.indexOf("a=rsa-sha256")).toBeLessThan(text.indexOf("a=ed25519-sha256"));
    expect(text.endsWith(message)).toBe(true);
    expect(text.match(/^DKIM-Signature:/gm)).toHaveLength(2);
    expect(text).toContain("c=relaxed/relaxed");
    expect(text).toContain(`t=${Date.UTC(2025, 0, 1) / 1000};`);
    expect(await verifyAll(signed)).toMatchObject([
      { selector: "mr1", result: "pass" },
      { selector: "mr2", result: "pass" },
    ]);
  });

  it("signs the headers a reader sees and the one-click unsubscribe ones, and oversigns From", async () => {
    const signed = (await signMessage(message, signers.slice(0, 1))).toString();
    const h = /\bh=([^;]+);/.exec(signed.replace(/\r\n\s+/g, " "))![1]!.split(":").map((name) => name.trim().toLowerCase());
    expect(h.filter((name) => name === "from")).toHaveLength(2);
    for (const name of ["to", "subject", "date", "message-id", "mime-version", "content-type", "list-unsubscribe", "list-unsubscribe-post"]) expect(h).toContain(name);
    expect(h).not.toContain("x-not-signed");
  });

  it("no longer verifies once a second From is added, or the Subject or the body is changed", async () => {
    const signed = (await signMessage(message, signers)).toString();
    const extraFrom = signed.replace(/^From: /m, "From: evil@attacker.example\r\nFrom: ");
    const newSubject = signed.replace("Subject: Your receipt", "Subject: Your receipt!");
    for (const tampered of [extraFrom, newSubject]) {
      expect(await verifyAll(Buffer.from(tampered))).toMatchObject([
        { result: "fail", comment: "bad signature" },
        { result: "fail", comment: "bad signature" },
      ]);
    }
    // mailauth reports a body hash mismatch as "neutral" (not "pass" is what matters).
    expect(await verifyAll(Buffer.from(signed.replace("12 EUR", "13 EUR")))).toMatchObject([
      { result: "neutral", comment: "body hash did not verify" },
      { result: "neutral", comment: "body hash did not verify" },
    ]);
  });

  it("tolerates what relaxed canonicalization allows: refolded headers, changed whitespace", async () => {
    const signed = (await signMessage(message, signers)).toString();
    const refolded = signed.replace("Subject: Your receipt", "Subject:   Your\r\n   receipt").replace("Total:  12", "Total: 12");
    expect((await verifyAll(Buffer.from(refolded))).map((r) => r.result)).toEqual(["pass", "pass"]);
  });

  it("signs what goes on the wire: bare LF line ends become CRLF, a missing final CRLF is added", async () => {
    const lf = message.replace(/\r\n/g, "\n").replace(/\n+$/, "  ");
    const signed = await signMessage(Buffer.from(lf), signers);
    expect(signed.toString()).not.toMatch(/[^\r]\n/);
    expect(signed.subarray(-2).toString()).toBe("\r\n");
    expect((await verifyAll(signed)).map((r) => r.result)).toEqual(["pass", "pass"]);
  });

  it("signs 8-bit and multipart content", async () => {
    const multipart = [
      "From: hello@acme.example",
      "To: bob@example.net",
      "Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?=",
      "MIME-Version: 1.0",
      'Content-Type: multipart/alternative; boundary="b1"',
      "",
      "--b1",
      "Content-Type: text/plain; charset=utf-8",
      "Content-Transfer-Encoding: 8bit",
      "",
      "Grüße aus Köln",
      "--b1--",
      "",
    ].join("\r\n");
    expect((await verifyAll(await signMessage(Buffer.from(multipart, "utf8"), signers))).map((r) => r.result)).toEqual(["pass", "pass"]);
  });

  it("returns the message unchanged without signers", async () => {
    expect((await signMessage(message, [])).toString()).toBe(message);
  });

  it("refuses a key that does not match its algorithm", async () => {
    await expect(signMessage(message, [{ ...signers[0]!, privateKeyPem: ed.privateKeyPem }])).rejects.toThrow(/is ed25519, not rsa/);
  });
});
