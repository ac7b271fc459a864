import { readFileSync } from "node:fs";
import { simpleParser } from "mailparser";
import { describe, expect, it } from "vitest";
import { fieldBlocks, parseReport, REPORT_PARSER_OPTIONS } from "../../src/inbound/reports.js";
import { deliveryStatusReport } from "../helpers/dsn.js";

const fixture = (name: string) => readFileSync(new URL(`../fixtures/inbound/${name}`, import.meta.url));
const reportOf = async (raw: Buffer | string) => parseReport(await simpleParser(raw, REPORT_PARSER_OPTIONS));

describe("parseReport", () => {
  it("reads Postfix's DSN for an unknown local user: failed, 5.1.1, the original's Message-ID and return path", async () => {
    expect(await reportOf(fixture("postfix-unknown-user.eml"))).toEqual({
      kind: "dsn",
      reportingMta: "mx1.example.net",
      originalSender: "bounces+msg_01m7zptw28y1m59kzrepxam83e-0-0a1b2c3d4e@bounces.acme.example",
      recipients: [
        {
          finalRecipient: "nosuchuser@example.net",
          originalRecipient: "nosuchuser@example.net",
          action: "failed",
          status: "5.1.1",
          diagnosticCode: 'X-Postfix; unknown user: "nosuchuser"',
          remoteMta: null,
        },
      ],
      original: { messageId: "<msg_01m7zptw28y1m59kzrepxam83e@acme.example>", returnPath: "bounces+msg_01m7zptw28y1m59kzrepxam83e-0-0a1b2c3d4e@bounces.acme.example", to: ["nosuchuser@example.net"] },
    });
  });

  it("reads Postfix's DSN for a remote 552 5.2.2, with the folded Diagnostic-Code unfolded and the remote MTA", async () => {
    const report = await reportOf(fixture("postfix-mailbox-full.eml"));
    expect(report?.kind).toBe("dsn");
    expect(report?.kind === "dsn" && report.recipients).toEqual([
      {
        finalRecipient: "full@remote2.example",
        originalRecipient: "full@remote2.example",
        action: "failed",
        status: "5.2.2",
        diagnosticCode: "smtp; 552 5.2.2 <full@remote2.example>: Mailbox full, quota exceeded",
        remoteMta: "127.0.0.1",
      },
    ]);
  });

  it("reads Postfix's delay warning as action delayed, with headers-only original (text/rfc822-headers)", async () => {
    const report = await reportOf(fixture("postfix-delayed.eml"));
    expect(report).toMatchObject({
      kind: "dsn",
      recipients: [{ finalRecipient: "grace@remote.example", action: "delayed", status: "4.4.1" }],
      original: { messageId: "<msg_01m7zq3c5d2e9g7hx4k6n8p0r2@acme.example>" },
    });
  });

  it("reads an RFC 5965 abuse report: type, user agent, reporting MTA, the original's recipient and return path", async () => {
    expect(await reportOf(fixture("arf-abuse.eml"))).toEqual({
      kind: "arf",
      feedbackType: "abuse",
      userAgent: "ExampleFBL/2.1",
      reportingMta: "mail.feedback.mailbox.example",
      originalMailFrom: "bounces+msg_01m7zptw28y1m59kzrepxam83e-0-0a1b2c3d4e@bounces.acme.example",
      originalRcptTo: ["ada@example.net"],
      sourceIp: "192.0.2.25",
      original: { messageId: "<msg_01m7zptw28y1m59kzrepxam83e@acme.example>", returnPath: "bounces+msg_01m7zptw28y1m59kzrepxam83e-0-0a1b2c3d4e@bounces.acme.example", to: ["ada@example.net"] },
    });
  });

  /** RFC 5965 Appendix B.1's report, the original quoted whole as message/rfc822 with the given disposition. */
  const b1 = (disposition: string) =>
    [
      "From: <abusedesk@example.com>",
      "Date: Thu, 8 Mar 2005 17:40:36 EDT",
      "Subject: FW: Earn money",
      "To: <abuse@example.net>",
      "MIME-Version: 1.0",
      "Content-Type: multipart/report; report-type=feedback-report;",
      '     boundary="part1_13d.2e68ed54_boundary"',
      "",
      "--part1_13d.2e68ed54_boundary",
      'Content-Type: text/plain; charset="US-ASCII"',
      "Content-Transfer-Encoding: 7bit",
      "",
      "This is an email abuse report for an email message received from IP",
      "192.0.2.1 on Thu, 8 Mar 2005 14:00:00 EDT.  For more information",
      "about this format please see http://www.mipassoc.org/arf/.",
      "",
      "--part1_13d.2e68ed54_boundary",
      "Content-Type: message/feedback-report",
      "",
      "Feedback-Type: abuse",
      "User-Agent: SomeGenerator/1.0",
      "Version: 1",
      "",
      "--part1_13d.2e68ed54_boundary",
      "Content-Type: message/rfc822",
      `Content-Disposition: ${disposition}`,
      "",
      "Return-Path: <bounces+msg_01m7zptw28y1m59kzrepxam83e-0-0a1b2c3d4e@bounces.acme.example>",
      "From: <hello@acme.example>",
      "Received: from mailserver.example.net",
      "     (mailserver.example.net [192.0.2.1])",
      "     by example.com with ESMTP id M63d4137594e46;",
      "     Thu, 08 Mar 2005 14:00:00 -0400",
      "To: <ada@example.net>",
      "Subject: Earn money",
      "MIME-Version: 1.0",
      "Content-type: text/plain",
      "Message-ID: <msg_01m7zptw28y1m59kzrepxam83e@acme.example>",
      "Date: Thu, 02 Sep 2004 12:31:03 -0500",
      "",
      "Spam Spam Spam",
      "Spam Spam Spam",
      "--part1_13d.2e68ed54_boundary--",
      "",
    ].join("\r\n");

  it.each(["inline", "attachment"])("reads the original of RFC 5965 B.1's report, quoted whole as message/rfc822 with disposition %s", async (disposition) => {
    expect(await reportOf(b1(disposition))).toMatchObject({
      kind: "arf",
      feedbackType: "abuse",
      original: { messageId: "<msg_01m7zptw28y1m59kzrepxam83e@acme.example>", returnPath: "bounces+msg_01m7zptw28y1m59kzrepxam83e-0-0a1b2c3d4e@bounces.acme.example", to: ["ada@example.net"] },
    });
  });

  it.each([
    ["the notification", "Content-Type: text/plain; charset=us-ascii"],
    ["the returned original", "Content-Type: message/rfc822"],
  ])("reads a DSN in which %s has an empty Content-Type, a part MIME takes as text/plain", async (_part, field) => {
    const raw = fixture("postfix-unknown-user.eml").toString("utf8").replace(field, "Content-Type: ");
    expect(await reportOf(raw)).toMatchObject({ kind: "dsn", recipients: [{ action: "failed", status: "5.1.1" }] });
  });

  it("reads address fields that run to 50,000 spaces or angle brackets in linear time (the sender writes them: a backtracking pattern took most of a minute)", async () => {
    // Timed, with three orders of magnitude to spare: a pattern's backtracking cannot be counted.
    const run = 50_000;
    const raw = deliveryStatusReport({
      from: "MAILER-DAEMON@mx.example.net",
      to: "bounces@bounces.acme.example",
      subject: "Undelivered Mail Returned to Sender",
      reportingMta: "mx.example.net",
      recipient: [`Final-Recipient: rfc822; ada@example.net${" ".repeat(run)}x`, `Original-Recipient: rfc822; ${"<".repeat(run)}`, "Action: failed", "Status: 5.1.1"],
      original: [`Return-Path: <bounces@acme.example${"(".repeat(run)}`, "Message-ID: <msg_01m7zptw28y1m59kzrepxam83e@acme.example>"],
    });
    const mail = await simpleParser(raw, REPORT_PARSER_OPTIONS);
    const started = performance.now();
    const report = parseReport(mail);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(report).toMatchObject({ kind: "dsn", recipients: [{ originalRecipient: null, action: "failed", status: "5.1.1" }], original: { messageId: "<msg_01m7zptw28y1m59kzrepxam83e@acme.example>" } });
  });

  it("reads an address in angle brackets, bare, or with a trailing comment", async () => {
    const raw = deliveryStatusReport({
      from: "MAILER-DAEMON@mx.example.net",
      to: "bounces@bounces.acme.example",
      subject: "Undelivered Mail Returned to Sender",
      reportingMta: "mx.example.net",
      recipient: ["Final-Recipient: rfc822; Ada@Example.NET (Ada Lovelace)", "Original-Recipient: rfc822;<ada@EXAMPLE.net>", "Action: failed", "Status: 5.1.1"],
      original: ["Return-Path: Bounces <bounces@Acme.Example>", "To: Ada <ada@example.net>, grace@EXAMPLE.net (Grace)"],
    });
    expect(await reportOf(raw)).toMatchObject({
      recipients: [{ finalRecipient: "Ada@example.net", originalRecipient: "ada@example.net" }],
      original: { returnPath: "bounces@acme.example", to: ["ada@example.net", "grace@example.net"] },
    });
  });

  it("is null for a plain message and for a multipart/report of another kind", async () => {
    expect(await reportOf("From: ada@example.net\r\nSubject: hi\r\n\r\nHello\r\n")).toBeNull();
    const disposition = 'Content-Type: multipart/report; report-type=disposition-notification; boundary="b"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nread\r\n--b--\r\n';
    expect(await reportOf(disposition)).toBeNull();
  });
});

describe("fieldBlocks", () => {
  it("unfolds continuation lines, lower-cases names, keeps repeated fields and splits blocks at blank lines", () => {
    const blocks = fieldBlocks("Reporting-MTA: dns; a.example\r\n\r\nFinal-Recipient: rfc822; x@y.example\r\nDiagnostic-Code: smtp; 550 5.1.1\r\n  no such user\r\nX-Note: one\r\nX-Note: two\r\n");
    expect(blocks.map((block) => Object.fromEntries(block))).toEqual([
      { "reporting-mta": ["dns; a.example"] },
      { "final-recipient": ["rfc822; x@y.example"], "diagnostic-code": ["smtp; 550 5.1.1 no such user"], "x-note": ["one", "two"] },
    ]);
  });
});
