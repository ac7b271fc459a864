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

/** What the caller of one send may ask of it. */
export interface SendOptions {
  /**
   * Called right before a transaction begins: a connection to the host is in hand and MAIL FROM
   * not yet sent. Called again for the next MX host tried, never when no transaction begins (a
   * DNS answer, no host reachable). It may throw to refuse: then nothing is sent, the connection
   * goes back to the pool unused, and send() rejects with that error, the caller's own (the
   * delivery worker withdraws a job this way when it stops before the job's first transaction).
   */
  begin?(): void;
}

/**
 * Hands one rendered (and signed) message to one recipient over SMTP. Mail outcomes are values,
 * never exceptions: a throw is a bug, or the refusal of the caller's own begin(). close() ends
 * pooled connections (at shutdown).
 */
export interface MailTransport {
  send(envelope: Envelope, mime: Buffer, options?: SendOptions): Promise<SendResult>;
  close(): Promise<void>;
}
