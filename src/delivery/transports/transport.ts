/**
 * One SMTP transaction's envelope, for live delivery. One recipient per transaction: the
 * return path is per recipient (VERP), so a bounce names the recipient it is about.
 */
export interface Envelope {
  mailFrom: string;
  rcptTo: string;
}

/** The remote answer (or its absence) for one recipient, classified (src/delivery/smtp-reply.ts). */
export interface SendResult {
  outcome: "delivered" | "deferred" | "bounced";
  /** hard: the address is bad (suppress it); soft: this message could not go. Null unless bounced. */
  bounceType: "hard" | "soft" | null;
  /** The server's reply code; null when there was no reply (DNS failure, connection failure, timeout). */
  smtpCode: number | null;
  /** RFC 3463, always of the outcome's class (2.x.x, 4.x.x, 5.x.x). */
  enhancedStatus: string;
  /** The server's reply text, or what happened instead ("connection refused", "DNS: ..."). */
  response: string;
  /** The host that answered or was tried last, "mx.example.com[192.0.2.1]"; null when none was. */
  remoteHost: string | null;
}

/**
 * Hands one rendered (and signed) message to one recipient over SMTP. Mail outcomes are values,
 * never exceptions: a throw is a bug. close() ends pooled connections (at shutdown).
 */
export interface MailTransport {
  send(envelope: Envelope, mime: Buffer): Promise<SendResult>;
  close(): Promise<void>;
}
