/** Product limits, in one place. The contract states the same numbers to clients. */
export const LIMITS = {
  recipientsPerMessage: 50,
  scheduleHorizonMs: 30 * 24 * 3600 * 1000,
  /** A scheduled_at this far in the past is still accepted as "now" (clock skew). */
  scheduleSkewMs: 60 * 1000,
  pageSizeDefault: 20,
  pageSizeMax: 100,
  /**
   * The deepest a JSON request body may nest (the body object is level 1): free-form values
   * (template variables, metadata) are otherwise unbounded, and deep nesting exhausts the stack
   * of whatever walks them.
   */
  bodyDepth: 32,
  /** The contract's `subject` maxLength (RFC 5322's line limit), which a template's rendered subject must keep too. */
  subjectMaxChars: 998,
  /**
   * What the messages table's columns hold (migration 001), checked before a message is stored.
   * The contract's per-item limits do not bound them: JSON escaping and UTF-8 can make 500
   * characters 3,000 bytes, and quoting a display name doubles its backslashes. On MySQL a longer
   * value fails the insert ("Data too long"), and with it every write sharing its group commit.
   * TEXT (to_list, cc_list, bcc_list, reply_to_list, headers, metadata): bytes of UTF-8 JSON.
   */
  storedJsonMaxBytes: 65_535,
  /** VARCHAR(512) from_mailbox: characters of the sender as its header carries it. */
  storedMailboxMaxChars: 512,
  /**
   * A message's subject, bodies, headers and attachments (base64) together, as the statement that
   * stores it carries them (storedMessageBytes: what MySQL's client escapes counts twice), once
   * its files given by URL are in hand. One row is one INSERT, which MySQL refuses past
   * max_allowed_packet (16 MiB by default on MariaDB, 4 MiB on MySQL 5.7): without this bound, 8 MiB of
   * html and a 9 MiB file by URL failed the insert (a reset connection, answered 503, so clients
   * retried what could never succeed). 12 MiB leaves room for the row's other columns (each at
   * most storedJsonMaxBytes, escaped) and the statement itself.
   */
  storedMessageMaxBytes: 12 * 1024 * 1024,
  /**
   * A message's rendered source (`mime`) and the text part derived for it, as the statement that
   * keeps them after delivery carries them (quoted, escaped: valueBytes). The source is the
   * bodies encoded again (quoted-printable can triple them) with the derived text besides, so
   * it can be several times the stored message: past this it is not kept (`mime` stays null;
   * the derived text alone is kept when it fits), and the mail is delivered all the same. 14 MiB
   * leaves the statement's own text far under MariaDB's 16 MiB max_allowed_packet.
   */
  keptSourceMaxBytes: 14 * 1024 * 1024,
  /**
   * A rendered source and derived text this small (measured as keptSourceMaxBytes is) are kept
   * in the UPDATE that records the delivery outcome, instead of being written to the message row
   * a second time afterwards: that second write cost MariaDB 10-25 % of the delivery rate. A
   * larger source is still kept apart, after the outcome: the outcome's commit must never fail
   * because of the source (a source past max_allowed_packet failed it, and the mail was sent again
   * at every lease). 1 MiB is far under every packet limit (MySQL 5.7's 4 MiB included) and far
   * over a typical transactional message (5-50 KB), so nearly every message takes the one write.
   */
  inlineSourceMaxBytes: 1024 * 1024,
  /**
   * Sending domains per workspace (409 domain_limit_reached past it). Far above what a sender
   * needs, but a bound: each domain costs an RSA key generation (~0.3 s of CPU), a row that every
   * automatic check round may read, and its records in every listDomains page.
   */
  domainsPerWorkspace: 1000,
} as const;
