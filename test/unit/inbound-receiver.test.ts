import type { Resolver } from "node:dns/promises";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/domain/clock.js";
import { InboundReceiver } from "../../src/inbound/receiver.js";
import type { InboundService } from "../../src/services/inbound.js";
import { dkimTestKeys, mailauthSignatures } from "../helpers/dkim-signers.js";
import { deliveryStatusReport } from "../helpers/dsn.js";

const MESSAGE_ID = "msg_01jaaaaaaaaaaaaaaaaaaaaaaa";
const VERP = `bounces+${MESSAGE_ID}-0-0123456789@bounces.acme.example`;

interface RecordedBounce {
  bounceType: "hard" | "soft";
  detail: string;
  data: Record<string, unknown>;
}

/** Receives `raw` from the null sender at the VERP address of the message's first recipient; returns the answer and the bounces recorded. */
async function receiveAtReturnPath(raw: string): Promise<{ summary: string; bounces: RecordedBounce[] }> {
  const bounces: RecordedBounce[] = [];
  const inbound = {
    recordBounce: async (_target: unknown, bounce: RecordedBounce) => {
      bounces.push(bounce);
      return { eventId: "evt_1" };
    },
  } as unknown as InboundService;
  const receiver = new InboundReceiver(inbound, {} as Resolver, "mta.example", new ManualClock(), { info() {}, error() {} });
  const verdict = await receiver.receive(Buffer.from(raw.replace(/\r?\n/g, "\r\n")), { ip: "192.0.2.1", helo: "mx.dest.example", mailFrom: "" }, [
    { kind: "bounce", target: { messageId: MESSAGE_ID, position: 0 }, workspaceIds: ["ws_1"] },
  ]);
  if (!verdict.accepted) throw new Error(`refused: ${verdict.code} ${verdict.message}`);
  return { summary: verdict.summary, bounces };
}

const plain = (headers: string[], body: string) => [`To: ${VERP}`, "Date: Sat, 21 Nov 2026 10:12:00 +0000", ...headers, "Content-Type: text/plain; charset=utf-8", "", body, ""].join("\n");

describe("InboundReceiver at a VERP return path, from the null sender", () => {
  it.each([
    ["a vacation notice (auto-replied)", ["From: Ada <ada@dest.example>", "Subject: Out of office: Your receipt", "Auto-Submitted: auto-replied"], "I am out of the office until Monday."],
    ["Exchange's out-of-office (auto-generated)", ["From: Ada <ada@dest.example>", "Subject: Automatic reply: Your receipt", "Auto-Submitted: auto-generated"], "I am away."],
    ["a keyword with a comment", ["From: ada@dest.example", "Subject: Away", "Auto-Submitted: Auto-Replied (vacation)"], "Away until the 30th."],
  ])("ignores an automatic response (RFC 3834): %s", async (_name, headers, body) => {
    expect(await receiveAtReturnPath(plain(headers, body))).toEqual({ summary: "auto-reply ignored", bounces: [] });
  });

  it.each([
    ["without Auto-Submitted (qmail)", ["From: MAILER-DAEMON@mx.dest.example", "Subject: failure notice"], "I could not deliver your message.", "soft"],
    ["marked Auto-Submitted: no", ["From: ada@dest.example", "Subject: Undeliverable", "Auto-Submitted: no"], "Could not deliver.", "soft"],
    ["from Exim (X-Failed-Recipients)", ["From: Mail Delivery System <Mailer-Daemon@relay.dest.example>", "Subject: Mail delivery failed: returning message to sender", "Auto-Submitted: auto-generated", "X-Failed-Recipients: ada@dest.example"], "  ada@dest.example\n    SMTP error from remote mail server after RCPT TO:<ada@dest.example>:\n    550 5.1.1 User unknown", "hard"],
    ["from a postmaster", ["From: postmaster@dest.example", "Subject: Delivery failure", "Auto-Submitted: auto-replied"], "Your message could not be delivered.", "soft"],
    ["quoting a failure status", ["From: Delivery <noreply@dest.example>", "Subject: Returned mail", "Auto-Submitted: auto-replied"], "<ada@dest.example>: 550 5.1.1 no mailbox here by that name", "hard"],
  ])("still reads a plain-text failure notice as a bounce: %s", async (_name, headers, body, bounceType) => {
    const { summary, bounces } = await receiveAtReturnPath(plain(headers, body));
    expect(summary).toBe("bounce recorded");
    expect(bounces).toMatchObject([{ bounceType, data: { source: "unstructured" } }]);
  });
});

describe("InboundReceiver reading a DSN's failed recipient", () => {
  const dsn = (fields: string[]) =>
    deliveryStatusReport({
      from: "Mail Delivery System <Mailer-Daemon@relay.dest.example>",
      to: VERP,
      subject: "Mail delivery failed",
      reportingMta: "relay.dest.example",
      recipient: ["Action: failed", "Final-Recipient: rfc822;ada@dest.example", ...fields],
    });

  it.each([
    ["a class-only Status refined by the diagnostic's spam refusal (Exim)", ["Status: 5.0.0", "Diagnostic-Code: smtp; 550 5.7.1 Message rejected as spam"], "soft", "5.7.1"],
    ["a class-only Status refined by the diagnostic's unknown user", ["Status: 5.0.0", "Diagnostic-Code: smtp; 550 5.1.1 User unknown"], "hard", "5.1.1"],
    ["a class-only Status with a diagnostic that quotes no status (the basic code decides)", ["Status: 5.0.0", "Diagnostic-Code: smtp; 550 no such user"], "hard", "5.0.0"],
    ["a transient class kept from the Status (gave up retrying)", ["Status: 4.0.0", "Diagnostic-Code: smtp; 550 5.1.1 User unknown"], "soft", "4.1.1"],
    ["a specific Status kept over the diagnostic's", ["Status: 5.2.2", "Diagnostic-Code: smtp; 550 5.1.1 over quota"], "soft", "5.2.2"],
    ["no Status: the diagnostic's", ["Diagnostic-Code: smtp; 550 5.1.1 User unknown"], "hard", "5.1.1"],
  ])("classifies %s", async (_name, fields, bounceType, enhancedStatus) => {
    const { bounces } = await receiveAtReturnPath(dsn(fields));
    expect(bounces).toMatchObject([{ bounceType, data: { source: "dsn", enhanced_status: enhancedStatus } }]);
  });

  it("keeps a diagnostic folded over thousands of lines to its first 1,000 characters", async () => {
    const folded = Array.from({ length: 5000 }, (_, i) => ` line ${i} of the remote server's answer`).join("\n");
    const { bounces } = await receiveAtReturnPath(dsn(["Status: 5.1.1", `Diagnostic-Code: smtp; 550 5.1.1 User unknown\n${folded}`]));
    expect(bounces).toMatchObject([{ bounceType: "hard", data: { enhanced_status: "5.1.1" } }]);
    expect((bounces[0]!.data.diagnostic_code as string).length).toBe(1000);
    expect(bounces[0]!.detail.length).toBeLessThanOrEqual(1006);
    expect(bounces[0]!.detail).toMatch(/^5\.1\.1 550 5\.1\.1 User unknown line 0 /);
  });
});

describe("InboundReceiver at the plain bounces mailbox, believing a DSN found by Message-ID", () => {
  const keys = dkimTestKeys();
  /** Answers the test keys' DKIM records and nothing else (no SPF, no DMARC). */
  const resolver = { resolve: (name: string, type: string) => (type === "TXT" ? keys.resolver(name) : Promise.reject(Object.assign(new Error("no record"), { code: "ENOTFOUND" }))) } as unknown as Resolver;

  /** A DSN about `recipient`, DKIM-signed by acme.example (the test keys) when `signed`, received from the null sender. */
  async function receivePlain(recipient: string, signed: boolean): Promise<{ summary: string; bounced: number }> {
    let bounced = 0;
    const inbound = {
      locate: async () => ({ messageId: MESSAGE_ID, recipient: { email: recipient } }),
      recordBounce: async () => {
        bounced++;
        return { eventId: "evt_1" };
      },
    } as unknown as InboundService;
    const receiver = new InboundReceiver(inbound, resolver, "mta.example", new ManualClock(), { info() {}, error() {} });
    const report = deliveryStatusReport({
      from: "Mail Delivery System <MAILER-DAEMON@mx.acme.example>",
      to: "bounces@bounces.sender.example",
      subject: "Undelivered Mail Returned to Sender",
      reportingMta: "mx.acme.example",
      recipient: [`Final-Recipient: rfc822; ${recipient}`, "Action: failed", "Status: 5.1.1"],
      original: [`Message-ID: <${MESSAGE_ID}@sender.example>`],
    });
    const raw = signed ? (await mailauthSignatures(report, [{ signingDomain: "acme.example", selector: "mr1", privateKey: keys.rsa.privateKeyPem, algorithm: "rsa-sha256" }])) + report : report;
    const verdict = await receiver.receive(Buffer.from(raw), { ip: "192.0.2.1", helo: "mx.acme.example", mailFrom: "" }, [{ kind: "mailbox", workspaceIds: ["ws_1"] }]);
    if (!verdict.accepted) throw new Error(`refused: ${verdict.code} ${verdict.message}`);
    return { summary: verdict.summary, bounced };
  }

  it("records it when a DKIM signature of the recipient's organisation verifies", async () => {
    expect(await receivePlain("ada@eu.acme.example", true)).toEqual({ summary: "1 bounce(s) recorded", bounced: 1 });
  });

  it("notes it without recording when the signature is another organisation's or there is none", async () => {
    expect(await receivePlain("grace@globex.example", true)).toEqual({ summary: "report noted", bounced: 0 });
    expect(await receivePlain("ada@acme.example", false)).toEqual({ summary: "report noted", bounced: 0 });
  });
});
