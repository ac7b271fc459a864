/**
 * A delivery status notification (RFC 3464: multipart/report; report-type=delivery-status) as an
 * MTA writes one, with CRLF line endings: a part for people, the machine-readable part (the
 * reporting MTA, then one recipient's fields as given), and the original's headers when given.
 */
export function deliveryStatusReport(report: {
  from: string;
  to: string;
  subject: string;
  /** More header fields (Auto-Submitted, …), after Subject. */
  headers?: string[];
  reportingMta: string;
  /** The per-recipient fields: Action, Final-Recipient, Status, Diagnostic-Code, … */
  recipient: string[];
  /** The original message's header fields (a text/rfc822-headers part), if the report quotes them. */
  original?: string[];
}): string {
  return [
    `From: ${report.from}`,
    `To: ${report.to}`,
    `Subject: ${report.subject}`,
    ...(report.headers ?? []),
    "MIME-Version: 1.0",
    'Content-Type: multipart/report; report-type=delivery-status; boundary="b1"',
    "",
    "--b1",
    "Content-Type: text/plain; charset=us-ascii",
    "",
    "This message was created automatically by mail delivery software.",
    "",
    "--b1",
    "Content-Type: message/delivery-status",
    "",
    `Reporting-MTA: dns; ${report.reportingMta}`,
    "",
    ...report.recipient,
    "",
    ...(report.original ? ["--b1", "Content-Type: text/rfc822-headers", "", ...report.original, ""] : []),
    "--b1--",
    "",
  ].join("\r\n");
}
