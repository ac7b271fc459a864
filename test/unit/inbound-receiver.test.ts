import type { Resolver } from "node:dns/promises";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/domain/clock.js";
import { InboundReceiver, type Verdict } from "../../src/inbound/receiver.js";
import type { InboundRepository } from "../../src/db/repositories/inbound.js";
import { secretKeys } from "../../src/domain/secret-keys.js";
import { Verp } from "../../src/domain/verp.js";
import { InboundService, type ReceivedReply } from "../../src/services/inbound.js";
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
  const receiver = new InboundReceiver(inbound, {} as Resolver, "mta.example", new ManualClock(), { info() {}, warn() {}, error() {} });
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
    ["one quoting a success status (2.x.x: a version)", ["From: Ada <ada@dest.example>", "Subject: Automatic reply: Your receipt", "Auto-Submitted: auto-replied"], "I am away until Monday.\n\nSent from Acme Mail (2.0.1)"],
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

  it("keeps the 4.x.x status a plain-text notice quotes (the remote gave up retrying), as a soft bounce", async () => {
    const notice = plain(["From: MAILER-DAEMON@mx.dest.example", "Subject: failure notice"], "<ada@dest.example>: 452 4.2.2 mailbox full; giving up after 5 days");
    const { bounces } = await receiveAtReturnPath(notice);
    expect(bounces).toMatchObject([{ bounceType: "soft", detail: "4.2.2 failure notice", data: { source: "unstructured", enhanced_status: "4.2.2" } }]);
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
    const { verdict, bounced } = await verdictOn(recipient, signed, resolver);
    if (!verdict.accepted) throw new Error(`refused: ${verdict.code} ${verdict.message}`);
    return { summary: verdict.summary, bounced };
  }

  /** The same, looked up through `dns` (HELO mx.acme.example) and sent by `mailFrom`; the answer to DATA and the bounces recorded. */
  async function verdictOn(recipient: string, signed: boolean, dns: Resolver, mailFrom = ""): Promise<{ verdict: Verdict; bounced: number }> {
    let bounced = 0;
    const inbound = {
      locate: async () => ({ messageId: MESSAGE_ID, recipient: { email: recipient } }),
      recordBounce: async () => {
        bounced++;
        return { eventId: "evt_1" };
      },
    } as unknown as InboundService;
    const receiver = new InboundReceiver(inbound, dns, "mta.example", new ManualClock(), { info() {}, warn() {}, error() {} });
    const report = deliveryStatusReport({
      from: "Mail Delivery System <MAILER-DAEMON@mx.acme.example>",
      to: "bounces@bounces.sender.example",
      subject: "Undelivered Mail Returned to Sender",
      reportingMta: "mx.acme.example",
      recipient: [`Final-Recipient: rfc822; ${recipient}`, "Action: failed", "Status: 5.1.1"],
      original: [`Message-ID: <${MESSAGE_ID}@sender.example>`],
    });
    const raw = signed ? (await mailauthSignatures(report, [{ signingDomain: "acme.example", selector: "mr1", privateKey: keys.rsa.privateKeyPem, algorithm: "rsa-sha256" }])) + report : report;
    const verdict = await receiver.receive(Buffer.from(raw), { ip: "192.0.2.1", helo: "mx.acme.example", mailFrom }, [{ kind: "mailbox", workspaceIds: ["ws_1"] }]);
    return { verdict, bounced };
  }

  /** A resolver whose every query fails as a DNS server that cannot answer now does (SERVFAIL, a timeout). */
  const failing = (code: string) => ({ resolve: (name: string) => Promise.reject(Object.assign(new Error(`query ${code} ${name}`), { code })) }) as unknown as Resolver;

  it("records it when a DKIM signature of the recipient's organisation verifies", async () => {
    expect(await receivePlain("ada@eu.acme.example", true)).toEqual({ summary: "1 bounce(s) recorded", bounced: 1 });
  });

  it.each(["ESERVFAIL", "ETIMEOUT"])("answers 451 when the recipient's organisation's DNS fails temporarily (%s), so the reporter retries, and records nothing", async (code) => {
    for (const signed of [true, false]) {
      // Signed: the DKIM key lookup fails (temperror); unsigned: SPF of the HELO name mx.acme.example does.
      const { verdict, bounced } = await verdictOn("ada@acme.example", signed, failing(code));
      expect(verdict).toEqual({ accepted: false, code: 451, message: expect.stringMatching(/^4\.4\.3 /) });
      expect(bounced).toBe(0);
    }
  });

  it("notes it without recording when only another organisation's DNS fails: nothing there could vouch for the recipient", async () => {
    const { verdict, bounced } = await verdictOn("grace@globex.example", true, failing("ESERVFAIL"));
    expect([verdict, bounced]).toEqual([{ accepted: true, summary: "report noted" }, 0]);
  });

  it("notes it without recording when the signature is another organisation's or there is none", async () => {
    expect(await receivePlain("grace@globex.example", true)).toEqual({ summary: "report noted", bounced: 0 });
    expect(await receivePlain("ada@acme.example", false)).toEqual({ summary: "report noted", bounced: 0 });
  });

  it("notes it without recording when a real sender sent it, though the recipient's organisation signed it: a colleague's own mailbox does", async () => {
    const { verdict, bounced } = await verdictOn("ada@acme.example", true, resolver, "grace@acme.example");
    expect([verdict, bounced]).toEqual([{ accepted: true, summary: "report noted" }, 0]);
  });
});

describe("InboundReceiver reading a DSN at a plain mailbox that lists many failed recipients", () => {
  const keys = dkimTestKeys();
  const verp = new Verp(secretKeys("00".repeat(32)));
  const OURS = `<${MESSAGE_ID}@acme.example>`;
  /** Answers the test keys' DKIM records and nothing else (no SPF, no DMARC). */
  const resolver = { resolve: (name: string, type: string) => (type === "TXT" ? keys.resolver(name) : Promise.reject(Object.assign(new Error("no record"), { code: "ENOTFOUND" }))) } as unknown as Resolver;
  const many = Array.from({ length: 20_000 }, (_, i) => `ada${i}@acme.example`);

  /**
   * Receives at bounces@ a DSN listing each of `recipients` (as failed, or `action`), through a real
   * InboundService whose repository knows one message (OURS), counting its lookups, what it records
   * and the lines it logs.
   */
  async function receiveDsn(options: { recipients: string[]; action?: string; original: string[]; signed: boolean; mailFrom: string }): Promise<{ verdict: Verdict; lookups: number; recorded: number; logged: number }> {
    let lookups = 0;
    let logged = 0;
    let recorded = 0;
    const repository = {
      findThreadable: async (_workspaceIds: readonly string[], candidates: Array<{ id: string; messageIdHeader: string }>) => {
        lookups++;
        return candidates.some((c) => c.id === MESSAGE_ID && c.messageIdHeader === OURS) ? [{ id: MESSAGE_ID, scope: { workspaceId: "ws_1", environment: "live" } }] : [];
      },
    } as unknown as InboundRepository;
    const engagement = {
      record: async () => {
        recorded++;
        return { messageId: MESSAGE_ID, recipientEmail: "ada0@acme.example", eventId: "evt_1", first: true, scope: { workspaceId: "ws_1", environment: "live" as const } };
      },
    };
    const clock = new ManualClock();
    const inbound = new InboundService({ inbound: repository, engagement, verp, parseUnsubscribeAddress: () => null, clock });
    const count = () => void logged++;
    const receiver = new InboundReceiver(inbound, resolver, "mta.example", clock, { info: count, warn: count, error: count });
    const report = deliveryStatusReport({
      from: "Mail Delivery System <MAILER-DAEMON@mx.acme.example>",
      to: "bounces@bounces.sender.example",
      subject: "Undelivered Mail Returned to Sender",
      reportingMta: "mx.acme.example",
      recipient: options.recipients.flatMap((address) => [`Final-Recipient: rfc822; ${address}`, `Action: ${options.action ?? "failed"}`, `Status: ${options.action === "delayed" ? "4.4.1" : "5.1.1"}`, ""]),
      original: options.original,
    });
    const raw = options.signed ? (await mailauthSignatures(report, [{ signingDomain: "acme.example", selector: "mr1", privateKey: keys.rsa.privateKeyPem, algorithm: "rsa-sha256" }])) + report : report;
    const verdict = await receiver.receive(Buffer.from(raw), { ip: "192.0.2.1", helo: "mx.acme.example", mailFrom: options.mailFrom }, [{ kind: "mailbox", workspaceIds: ["ws_1"] }]);
    return { verdict, lookups, recorded, logged };
  }

  it("records a DSN that quotes a VERP return path once, however many failed recipients it lists (20,000): that address had one recipient", async () => {
    const returnPath = verp.returnPath({ messageId: MESSAGE_ID, position: 0 }, "bounces.acme.example");
    const { verdict, lookups, recorded } = await receiveDsn({ recipients: many, original: [`Return-Path: <${returnPath}>`, `Message-ID: ${OURS}`], signed: false, mailFrom: "" });
    expect(verdict).toEqual({ accepted: true, summary: "1 bounce(s) recorded" });
    expect([lookups, recorded]).toEqual([0, 1]);
  });

  it("looks up and records no more of a DSN's failed recipients found by Message-ID than a message can have (50), however many it lists (20,000)", async () => {
    // Believed (the null sender, signed by the recipients' organisation): each address would be recorded.
    const believed = await receiveDsn({ recipients: many, original: [`Message-ID: ${OURS}`], signed: true, mailFrom: "" });
    expect(believed.verdict).toEqual({ accepted: true, summary: "50 bounce(s) recorded" });
    expect(believed.lookups).toBeLessThanOrEqual(50);
    expect(believed.recorded).toBe(50);

    // Not believed (a real sender): nothing recorded, and the Message-ID is not looked up 20,000 times either.
    const forged = await receiveDsn({ recipients: many, original: [`Message-ID: ${OURS}`], signed: false, mailFrom: "grace@acme.example" });
    expect(forged.verdict).toEqual({ accepted: true, summary: "report noted" });
    expect(forged.lookups).toBeLessThanOrEqual(50);
    expect(forged.recorded).toBe(0);
  });

  it("logs the delays a DSN lists in one line, however many it lists (20,000), and records nothing", async () => {
    const { verdict, recorded, logged } = await receiveDsn({ recipients: many, action: "delayed", original: [`Message-ID: ${OURS}`], signed: false, mailFrom: "" });
    expect(verdict).toEqual({ accepted: true, summary: "report noted" });
    expect([recorded, logged]).toEqual([0, 1]);
  });

  it("records each address a DSN names once, though it lists it again in another case", async () => {
    const { verdict, recorded } = await receiveDsn({ recipients: ["ada@acme.example", "Ada@acme.example", "ADA@ACME.EXAMPLE"], original: [`Message-ID: ${OURS}`], signed: true, mailFrom: "" });
    expect(verdict).toEqual({ accepted: true, summary: "1 bounce(s) recorded" });
    expect(recorded).toBe(1);
  });
});

describe("InboundReceiver threading a reply at a plain mailbox by In-Reply-To and References", () => {
  const OURS = `<${MESSAGE_ID}@acme.example>`;
  /** A Message-ID shaped like Mailroom's own, naming no message. */
  const forged = (i: number) => `<msg_01j${i.toString(36).padStart(23, "0")}@acme.example>`;
  const noDns = { resolve: () => Promise.reject(Object.assign(new Error("no record"), { code: "ENOTFOUND" })) } as unknown as Resolver;

  /** Receives a reply at support@ through a real InboundService whose repository knows one message (OURS), counting its lookups. */
  async function receiveReply(inReplyTo: string, references: string[]): Promise<{ verdict: Verdict; lookups: Array<Array<{ id: string; messageIdHeader: string }>> }> {
    const lookups: Array<Array<{ id: string; messageIdHeader: string }>> = [];
    const repository = {
      findThreadable: async (_workspaceIds: readonly string[], candidates: Array<{ id: string; messageIdHeader: string }>) => {
        lookups.push(candidates);
        const known = candidates.some((c) => c.id === MESSAGE_ID && c.messageIdHeader === OURS);
        return known ? [{ id: MESSAGE_ID, scope: { workspaceId: "ws_1", environment: "live" } }] : [];
      },
    } as unknown as InboundRepository;
    const engagement = { record: async () => ({ messageId: MESSAGE_ID, recipientEmail: null, eventId: "evt_1", first: true, scope: { workspaceId: "ws_1", environment: "live" as const } }) };
    const clock = new ManualClock();
    const inbound = new InboundService({ inbound: repository, engagement, verp: new Verp(secretKeys("00".repeat(32))), parseUnsubscribeAddress: () => null, clock });
    const receiver = new InboundReceiver(inbound, noDns, "mta.example", clock, { info() {}, warn() {}, error() {} });
    const raw = [
      "From: Grace <grace@dest.example>",
      "To: support@bounces.acme.example",
      "Subject: Re: Your receipt",
      `In-Reply-To: ${inReplyTo}`,
      // Folded, ten to a line, as a mail client writes a long field.
      `References: ${references.map((r, i) => (i > 0 && i % 10 === 0 ? `\r\n ${r}` : r)).join(" ")}`,
      "Content-Type: text/plain; charset=utf-8",
      "",
      "Got it.",
      "",
    ].join("\r\n");
    const verdict = await receiver.receive(Buffer.from(raw), { ip: "192.0.2.1", helo: "mail.dest.example", mailFrom: "grace@dest.example" }, [{ kind: "mailbox", workspaceIds: ["ws_1"] }]);
    return { verdict, lookups };
  }

  it("looks up In-Reply-To and the last 10 of Mailroom's Message-IDs in References, in one query, however many a reply lists (20,000)", async () => {
    const guesses = Array.from({ length: 20_000 }, (_, i) => forged(i));
    const unknown = await receiveReply(forged(99_999), guesses);
    expect(unknown.verdict).toMatchObject({ accepted: false, code: 550 });
    expect(unknown.lookups).toHaveLength(1);
    expect(unknown.lookups[0]!.map((c) => c.messageIdHeader)).toEqual([forged(99_999), ...Array.from({ length: 10 }, (_, i) => forged(19_999 - i))]);

    const known = await receiveReply(forged(99_999), [...guesses, OURS]);
    expect(known.verdict).toMatchObject({ accepted: true, summary: expect.stringMatching(/^reply inb_/) });
    expect(known.lookups).toHaveLength(1);
  });

  it("finds the message a long thread began with: other people's Message-IDs after it do not count towards the 10", async () => {
    const others = Array.from({ length: 50 }, (_, i) => `<reply-${i}@mail.dest.example>`);
    const { verdict, lookups } = await receiveReply(others.at(-1)!, [OURS, ...others]);
    expect(verdict).toMatchObject({ accepted: true, summary: expect.stringMatching(/^reply inb_/) });
    expect(lookups).toEqual([[{ id: MESSAGE_ID, messageIdHeader: OURS }]]);
  });

  it("does not look further back than the last 10 of Mailroom's Message-IDs: an older one is not found (550)", async () => {
    const { verdict, lookups } = await receiveReply("<reply-1@mail.dest.example>", [OURS, ...Array.from({ length: 10 }, (_, i) => forged(i))]);
    expect(verdict).toMatchObject({ accepted: false, code: 550 });
    expect(lookups).toHaveLength(1);
    expect(lookups[0]).toHaveLength(10);
  });
});

describe("InboundReceiver storing a reply at its reply address", () => {
  it("records a file whose Content-Type is empty as text/plain, as MIME has it", async () => {
    const replies: ReceivedReply[] = [];
    const inbound = {
      recordReply: async (_messageId: string, reply: ReceivedReply) => {
        replies.push(reply);
        return { stored: true, inboundId: "inb_1", messageId: MESSAGE_ID, recipient: null, eventId: "evt_1", repeated: false };
      },
    } as unknown as InboundService;
    const noDns = { resolve: () => Promise.reject(Object.assign(new Error("no record"), { code: "ENOTFOUND" })) } as unknown as Resolver;
    const receiver = new InboundReceiver(inbound, noDns, "mta.example", new ManualClock(), { info() {}, warn() {}, error() {} });
    const raw = [
      "From: Grace <grace@dest.example>",
      "To: reply@bounces.acme.example",
      "Subject: Re: Your receipt",
      "MIME-Version: 1.0",
      'Content-Type: multipart/mixed; boundary="b"',
      "",
      "--b",
      "Content-Type: text/plain",
      "",
      "Notes attached.",
      "--b",
      "Content-Type: ",
      "Content-Disposition: attachment; filename=notes.txt",
      "",
      "Notes",
      "--b--",
      "",
    ].join("\r\n");
    const verdict = await receiver.receive(Buffer.from(raw), { ip: "192.0.2.1", helo: "mail.dest.example", mailFrom: "grace@dest.example" }, [{ kind: "reply", messageId: MESSAGE_ID, workspaceIds: ["ws_1"] }]);
    expect(verdict).toMatchObject({ accepted: true });
    expect(replies[0]!.attachments).toMatchObject([{ filename: "notes.txt", content_type: "text/plain" }]);
  });
});

describe("InboundReceiver at postmaster", () => {
  it("logs mail that is no report or reply at warn, for the operator, and answers 250 without recording anything", async () => {
    const warnings: object[] = [];
    const receiver = new InboundReceiver({} as InboundService, {} as Resolver, "mta.example", new ManualClock(), { info() {}, warn: (obj) => warnings.push(obj), error() {} });
    const raw = ["From: Admin <admin@example.org>", "To: postmaster", "Subject: Your certificate expires tomorrow", "Message-ID: <note-1@example.org>", "", "Renew it.", ""].join("\r\n");
    const verdict = await receiver.receive(Buffer.from(raw), { ip: "192.0.2.1", helo: "mail.example.org", mailFrom: "admin@example.org" }, [{ kind: "postmaster", workspaceIds: [] }]);
    expect(verdict).toEqual({ accepted: true, summary: "postmaster mail logged" });
    expect(warnings).toEqual([{ from: '"Admin" <admin@example.org>', subject: "Your certificate expires tomorrow", messageIdHeader: "<note-1@example.org>", bytes: raw.length }]);
  });
});
