import { createHash } from "node:crypto";
import type { Resolver } from "node:dns/promises";
import type { AddressObject, ParsedMail } from "mailparser";
import { formatMailbox } from "../domain/addresses.js";
import { cut } from "../domain/cut.js";
import { LIMITS } from "../domain/limits.js";
import type { Clock } from "../domain/clock.js";
import { bounceTypeFor, parseEnhancedStatus, parseReply } from "../delivery/smtp-reply.js";
import { REPLY_MAX_ATTACHMENTS, REPLY_STATEMENT_MAX_BYTES, ReplyTooLarge, type InboundRoute, type InboundService, type ReceivedReply, type ReportTarget } from "../services/inbound.js";
import { sameOrganization } from "../domain/organizational-domain.js";
import { authenticateSender, senderDomains, type Connection, type SenderDomains } from "./authentication.js";
import { parseReport, REPORT_PARSER_OPTIONS, type DeliveryStatusReport, type DsnRecipient, type FeedbackReport } from "./reports.js";
import { bodyText } from "./body-text.js";
import { mediaTypeOf } from "../smtp/mime-part.js";
import { parseWithinLimits, PARSER_LIMITS_TEXT } from "../smtp/bounded-parse.js";
import { splitReply } from "./reply-text.js";

/** The routes of a transaction's accepted recipients (InboundService.route). */
export type AcceptedRoute = Exclude<InboundRoute, { kind: "unknown_token" | "relay" }>;

/** The answer to DATA: 250 only once everything it caused is committed. */
export type Verdict = { accepted: true; summary: string } | { accepted: false; code: number; message: string };

export interface ReceiverLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * Whether a report may speak for the recipient it names: asked only of reports found by the
 * Message-ID they quote (see believed). Throws DnsTemporarilyFailing when DNS could not say for now.
 */
type Vouch = (recipient: string) => Promise<boolean>;

/**
 * A report's authenticity could not be checked for now: the lookup of a DKIM key or SPF record of
 * the recipient's organisation failed temporarily (SERVFAIL, a timeout). Answered 451, so the
 * reporting MTA keeps the report and tries again, rather than 250 and a genuine report dropped.
 */
class DnsTemporarilyFailing extends Error {}

/** What became of one accepted recipient's copy. */
type Handled = { handled: true; what: string } | { handled: false };

/** One received message, as each accepted recipient's route reads it. */
interface Received {
  raw: Buffer;
  mail: ParsedMail;
  /** Its plain text (bodyText): its text parts, else its HTML's text, bounded. */
  text: string | null;
  report: ReturnType<typeof parseReport>;
  connection: Connection;
  vouch: Vouch;
  /** The reply recorded for each message so far: two routes may find the same one. */
  replies: Map<string, Handled>;
}

// RFC 5965 §7.3 and RFC 6591: these report types are not someone complaining about the mail.
const NOT_COMPLAINTS = new Set(["not-spam", "auth-failure"]);

// A report's fields go into TEXT columns (64 KiB on MySQL: the event's data, the recipient's and a
// suppression's detail); one folded over thousands of lines would fail the write, and the report,
// answered 451, be retried and lost. Diagnostics run to a line or two.
const REPORT_FIELD_MAX = 1000;

function kept<T extends string | null>(value: T): T {
  return (value === null ? value : cut(value, REPORT_FIELD_MAX)) as T;
}

/**
 * Classifies a received message and records what it says (docs/inbound.md#what-is-accepted):
 * at a VERP address a DSN is a bounce and an ARF report a complaint about that recipient; at a
 * reply address it is a reply; at an unsubscribe address an unsubscribe; at any other mailbox of
 * a return-path domain a report is matched by what it quotes (and, found by Message-ID alone,
 * believed only from the null sender of the recipient's organisation) and a reply by In-Reply-To
 * or References, and anything else is refused (550 5.1.1), since nobody reads that mailbox. A
 * reply is stored once per message, however often it comes. An automatic response (RFC 3834) is
 * neither a reply nor, unless it says it is a failure notice, a bounce.
 */
export class InboundReceiver {
  constructor(
    private readonly inbound: InboundService,
    private readonly resolver: Resolver,
    /** This server's host name (SENDING_HOSTNAME): the receiving MTA named in authentication results. */
    private readonly hostname: string,
    private readonly clock: Clock,
    private readonly log: ReceiverLog,
  ) {}

  async receive(raw: Buffer, connection: Connection, routes: readonly AcceptedRoute[]): Promise<Verdict> {
    // The text of HTML is derived here, bounded (bodyText): mailparser's has no bound.
    const mail = await parseWithinLimits(raw, PARSER_OPTIONS);
    if (mail === null) return { accepted: false, code: 552, message: `5.3.4 Message too big for system: it has more MIME parts than a reply or report can ${PARSER_LIMITS_TEXT}` };
    const received: Received = { raw, mail, text: bodyText(mail.text, mail.html), report: parseReport(mail), connection, vouch: this.vouchFor(raw, connection), replies: new Map() };
    const outcomes: Handled[] = [];
    try {
      for (const route of dedupe(routes)) outcomes.push(await this.handle(route, received));
    } catch (error) {
      // RFC 3463 X.4.3: a directory server (here DNS) failed. What was recorded before is recorded
      // once: the retry's second recording of it changes nothing.
      if (error instanceof DnsTemporarilyFailing) return { accepted: false, code: 451, message: "4.4.3 Temporary DNS failure while authenticating the report, try again later" };
      // RFC 3463 X.3.4: too big for this system, though within the size advertised. For good: the
      // retry would be as large, and the person who wrote it learns why from their own server.
      if (error instanceof ReplyTooLarge) return { accepted: false, code: 552, message: tooLargeText(error) };
      throw error;
    }
    // A reply that two routes found is one outcome (the same object), said once.
    const done = [...new Set(outcomes)].filter((o): o is Extract<Handled, { handled: true }> => o.handled);
    if (done.length === 0) return { accepted: false, code: 550, message: "5.1.1 No such mailbox: this address takes only replies to and reports about messages sent through it" };
    return { accepted: true, summary: done.map((o) => o.what).join(", ") };
  }

  private async handle(route: AcceptedRoute, received: Received): Promise<Handled> {
    const { mail, text, report, connection, vouch } = received;
    switch (route.kind) {
      case "bounce": {
        const target: ReportTarget = { messageId: route.target.messageId, recipient: { position: route.target.position } };
        if (report?.kind === "dsn") return this.deliveryStatus(report, route.workspaceIds, target, vouch);
        if (report?.kind === "arf") return this.feedback(report, route.workspaceIds, target, vouch);
        if (connection.mailFrom !== "") {
          // Mail from a real sender to a return path: an auto-reply sent to the wrong address.
          this.log.info({ messageId: target.messageId }, "inbound: mail to a return path that is no report; ignored");
          return { handled: true, what: "ignored" };
        }
        if (isAutoResponse(mail, text)) {
          // RFC 3834: an out-of-office or vacation notice answers the return path from the null sender too.
          this.log.info({ messageId: target.messageId, autoSubmitted: autoSubmitted(mail) }, "inbound: automatic response to a return path; ignored");
          return { handled: true, what: "auto-reply ignored" };
        }
        return this.unstructuredBounce(mail, text, target);
      }
      case "reply":
        return this.reply(route.messageId, "reply_address", received);
      case "unsubscribe": {
        const outcome = await this.inbound.recordUnsubscribe(route.target);
        return { handled: true, what: outcome?.eventId ? "unsubscribed" : "already unsubscribed" };
      }
      case "mailbox": {
        if (report?.kind === "dsn") return this.deliveryStatus(report, route.workspaceIds, null, vouch);
        if (report?.kind === "arf") return this.feedback(report, route.workspaceIds, null, vouch);
        const references = typeof mail.references === "string" ? [mail.references] : (mail.references ?? []);
        const messageId = await this.inbound.threadByHeaders(route.workspaceIds, mail.inReplyTo ?? null, references);
        return messageId === null ? { handled: false } : this.reply(messageId, "in_reply_to", received);
      }
      case "postmaster": {
        // A reporting MTA may fall back on postmaster: at a return-path domain a report or reply is
        // recorded as at any other mailbox there.
        const read = route.workspaceIds.length > 0 ? await this.handle({ kind: "mailbox", workspaceIds: route.workspaceIds }, received) : null;
        if (read?.handled) return read;
        // RFC 5321 §4.5.1: taken, so that whoever runs this server can be reached; but Mailroom has no
        // mailbox to put it in, so it is logged for the operator, and not kept.
        this.log.warn({ from: kept(mail.from?.text ?? null), subject: kept(mail.subject ?? null), messageIdHeader: kept(mail.messageId ?? null), bytes: received.raw.length }, "inbound: mail to postmaster; logged, not kept");
        return { handled: true, what: "postmaster mail logged" };
      }
    }
  }

  /**
   * RFC 3464: each failed recipient is a bounce (hard or soft by its status, as the SMTP client
   * classifies live replies); `delayed` is only logged (the sending MTA is still trying, and
   * Mailroom's message was already delivered to it); other actions are successes.
   */
  private async deliveryStatus(report: DeliveryStatusReport, workspaceIds: readonly string[], verpTarget: ReportTarget | null, vouch: Vouch): Promise<Handled> {
    const failed = report.recipients.filter((r) => r.action === "failed");
    const delayed = report.recipients.filter((r) => r.action === "delayed");
    // One line, however many delays the report lists (the first few name the recipients).
    if (delayed.length > 0) {
      const named = delayed.slice(0, LIMITS.recipientsPerMessage).map((r) => ({ recipient: kept(r.finalRecipient), status: r.status }));
      this.log.info({ delayed: named, count: delayed.length, reportingMta: kept(report.reportingMta) }, "inbound: delivery delayed (DSN); no change");
    }
    // A VERP envelope had one recipient: its report's first failure is about that one. Elsewhere the
    // report is the sender's to write, and 10 MiB of it lists some 250,000 failures, each a lookup
    // and a transaction on the message: each address is read once, and no more of them than one
    // message can have recipients (the rest cannot all be its recipients).
    const recipients = verpTarget ? failed.slice(0, 1) : distinctRecipients(failed).slice(0, LIMITS.recipientsPerMessage);
    // A quoted VERP return path names one recipient too, whichever failures the report lists.
    const targets = new Set<string>();
    let recorded = 0;
    for (const r of recipients) {
      const target =
        verpTarget ??
        (await this.inbound.locate(workspaceIds, { returnPaths: [report.original?.returnPath ?? null, report.originalSender], messageId: report.original?.messageId ?? null, recipient: recipientOf(r) }));
      if (!target) {
        this.log.info({ recipient: kept(r.finalRecipient), messageId: kept(report.original?.messageId ?? null) }, "inbound: DSN about no message of ours; ignored");
        continue;
      }
      const key = JSON.stringify(target);
      if (targets.has(key)) continue;
      targets.add(key);
      if (!(await believed(target, vouch))) {
        this.log.info({ recipient: kept(r.finalRecipient), messageId: target.messageId, reportingMta: kept(report.reportingMta) }, "inbound: DSN found by Message-ID, not from the null sender authenticated by the recipient's organisation; ignored");
        continue;
      }
      const diagnostic = kept(r.diagnosticCode?.replace(/^[^;]*;\s*/, "") ?? "");
      const enhancedStatus = recipientStatus(r.status, diagnostic);
      // A "failed" with a 4.x.x status (gave up after retrying: 4.4.7) is permanent for this message only.
      const bounceType = enhancedStatus.startsWith("5") ? bounceTypeFor(enhancedStatus, parseReply(diagnostic).code, "rcpt") : "soft";
      const outcome = await this.inbound.recordBounce(target, {
        bounceType,
        detail: [enhancedStatus, diagnostic].filter(Boolean).join(" "),
        data: {
          source: "dsn",
          bounce_type: bounceType,
          enhanced_status: enhancedStatus,
          diagnostic_code: kept(r.diagnosticCode),
          reporting_mta: kept(report.reportingMta),
          remote_mta: kept(r.remoteMta),
          final_recipient: kept(r.finalRecipient),
        },
      });
      if (outcome) recorded++;
    }
    return { handled: true, what: recorded > 0 ? `${recorded} bounce(s) recorded` : "report noted" };
  }

  /** RFC 5965: a complaint marks the recipient complained and suppresses it (engagement service). */
  private async feedback(report: FeedbackReport, workspaceIds: readonly string[], verpTarget: ReportTarget | null, vouch: Vouch): Promise<Handled> {
    if (NOT_COMPLAINTS.has(report.feedbackType)) {
      this.log.info({ feedbackType: report.feedbackType, reportingMta: report.reportingMta }, "inbound: feedback report that is no complaint; ignored");
      return { handled: true, what: "report noted" };
    }
    const quotedRecipient = report.originalRcptTo[0] ?? (report.original?.to.length === 1 ? report.original.to[0]! : null);
    const target =
      verpTarget ??
      (await this.inbound.locate(workspaceIds, { returnPaths: [report.original?.returnPath ?? null, report.originalMailFrom], messageId: report.original?.messageId ?? null, recipient: quotedRecipient }));
    if (!target) {
      this.log.info({ messageId: report.original?.messageId, reportingMta: report.reportingMta }, "inbound: complaint about no message of ours; ignored");
      return { handled: true, what: "report noted" };
    }
    if (!(await believed(target, vouch))) {
      this.log.info({ messageId: target.messageId, reportingMta: report.reportingMta }, "inbound: complaint found by Message-ID, not from the null sender authenticated by the recipient's organisation; ignored");
      return { handled: true, what: "report noted" };
    }
    const outcome = await this.inbound.recordComplaint(target, {
      feedback_type: kept(report.feedbackType),
      user_agent: kept(report.userAgent),
      reporting_mta: kept(report.reportingMta),
      source_ip: kept(report.sourceIp),
    });
    return { handled: true, what: outcome?.eventId ? "complaint recorded" : "complaint noted" };
  }

  /**
   * A bounce from the null sender that is no RFC 3464 report (older MTAs, some providers):
   * VERP still names the recipient. The status is read from the text when it quotes one, and
   * kept as quoted: a 4.x.x (the remote gave up retrying) is a soft bounce, as in a DSN. Without
   * one it is soft too, so an unreadable notice never suppresses an address by itself.
   */
  private async unstructuredBounce(mail: ParsedMail, text: string | null, target: ReportTarget): Promise<Handled> {
    const { failure, basicCode } = failureInText(text ?? "");
    const enhancedStatus = failure ?? "5.0.0";
    const bounceType = failure?.startsWith("5") ? bounceTypeFor(failure, basicCode, "rcpt") : "soft";
    const outcome = await this.inbound.recordBounce(target, {
      bounceType,
      detail: `${enhancedStatus} ${kept(mail.subject ?? "bounce")}`,
      data: { source: "unstructured", bounce_type: bounceType, enhanced_status: enhancedStatus, diagnostic_code: null, reporting_mta: null },
    });
    return { handled: true, what: outcome ? "bounce recorded" : "report noted" };
  }

  /**
   * The vouching of one received message: none from a real sender (see believed); else the domains
   * it authenticates for, looked up once, and only if a report found by Message-ID asks. A domain
   * of the recipient's organisation whose check failed temporarily could have vouched, so unless
   * another already does, the answer waits for the retry; one of another organisation could not
   * have, and changes nothing. Any other failure is thrown too: answered 451 like every failure
   * while processing.
   */
  private vouchFor(raw: Buffer, connection: Connection): Vouch {
    if (connection.mailFrom !== "") return async () => false;
    let domains: Promise<SenderDomains> | null = null;
    return async (recipient) => {
      domains ??= senderDomains(raw, connection, this.resolver, this.hostname);
      const { authenticated, unsettled } = await domains;
      const recipientDomain = recipient.slice(recipient.lastIndexOf("@") + 1);
      const ofRecipient = (domain: string) => sameOrganization(domain, recipientDomain);
      if (authenticated.some(ofRecipient)) return true;
      if (unsettled.some(ofRecipient)) {
        this.log.info({ unsettled, reportingHelo: connection.helo }, "inbound: DNS failed temporarily while authenticating a report; answering 451");
        throw new DnsTemporarilyFailing();
      }
      return false;
    };
  }

  /** A reply, recorded once for each message however many routes of the transaction find it. */
  private async reply(messageId: string, threadedBy: "reply_address" | "in_reply_to", received: Received): Promise<Handled> {
    const earlier = received.replies.get(messageId);
    if (earlier) return earlier;
    const handled = await this.recordReply(messageId, threadedBy, received);
    received.replies.set(messageId, handled);
    return handled;
  }

  private async recordReply(messageId: string, threadedBy: "reply_address" | "in_reply_to", { mail, text, raw, connection }: Received): Promise<Handled> {
    if (isAutomatic(mail)) {
      // RFC 3834: vacation responders answer the From or Reply-To too, not only the return path. No
      // person wrote it, so it is no reply, as at the return path it is no bounce. Here no failure
      // notice is told apart: a bounce names no recipient at this address, so it could not be read.
      this.log.info({ messageId, autoSubmitted: autoSubmitted(mail) }, "inbound: automatic response to a message; ignored");
      return { handled: true, what: "auto-reply ignored" };
    }
    const authentication = await authenticateSender(raw, connection, this.resolver, this.hostname);
    const split = splitReply(text);
    const from = mail.from?.value[0];
    const reply: ReceivedReply = {
      // Written the way Mailroom writes addresses (quotes only where RFC 5322 needs them).
      from: from?.address ? formatMailbox({ address: lowerDomain(from.address), name: from.name || null }) : (mail.from?.text ?? ""),
      fromAddress: from?.address ? lowerDomain(from.address) : null,
      to: addresses(mail.to),
      subject: mail.subject ?? "",
      text: split.text,
      quotedText: split.quoted,
      html: typeof mail.html === "string" ? mail.html : null,
      messageIdHeader: mail.messageId ?? null,
      inReplyTo: mail.inReplyTo ?? null,
      authentication,
      attachments: mail.attachments.map((a) => ({ filename: a.filename ?? null, content_type: mediaTypeOf(a), content_id: a.cid ?? null, content: a.content })),
      receivedAt: this.clock.now(),
      rawDigest: createHash("sha256").update(raw).digest("hex"),
    };
    const outcome = await this.inbound.recordReply(messageId, reply, threadedBy);
    // RFC 1047: a 250 lost after DATA brings the same mail again; it is answered as the first was.
    if (outcome.stored && outcome.repeated) this.log.info({ messageId, inboundId: outcome.inboundId }, "inbound: the same reply again (a retry); recorded once");
    return { handled: true, what: outcome.stored ? `reply ${outcome.inboundId}` : "reply to no message; dropped" };
  }
}

/**
 * Whether a report is believed about its target. A VERP address, in the envelope or quoted, is
 * signed and was on that recipient's copy alone, so it is proof enough. A report found only by
 * the Message-ID it quotes and the address it names could be anyone's who received the message
 * (they know its Message-ID and its other recipients), and would get a colleague's address
 * suppressed; so it is believed only when it came from the null sender and is authenticated
 * (DKIM, or SPF for the HELO name) by a domain of the recipient's organisation, as the recipient's
 * own MTA sends it. Authentication by that organisation alone is not enough: every person with a
 * mailbox there sends mail it authenticates. The null sender is what a DSN is sent from (RFC 5321
 * §4.5.5, RFC 3461 §6) and what a mail client cannot send; a complaint is held to the same,
 * since any sender address a feedback loop uses is one a person's mailbox could use as well
 * (docs/inbound.md#reports-found-by-message-id).
 */
async function believed(target: ReportTarget, vouch: Vouch): Promise<boolean> {
  return "email" in target.recipient ? vouch(target.recipient.email) : true;
}

/**
 * The enhanced status of a failed recipient of a DSN: its Status, unless that gives only a class
 * (`5.0.0`, as Exim writes) and the Diagnostic-Code quotes a specific one ("550 5.7.1 rejected as
 * spam"), whose subject and detail then tell hard from soft. The class stays the Status's: the
 * reporting MTA decided whether the failure is permanent (as classifyReply keeps the basic code's).
 */
function recipientStatus(status: string | null, diagnostic: string): string {
  const quoted = parseEnhancedStatus(diagnostic);
  if (status === null) return quoted ?? "5.0.0";
  if (!status.endsWith(".0.0") || quoted === null) return status;
  return `${status.slice(0, 1)}${quoted.slice(quoted.indexOf("."))}`;
}

const PARSER_OPTIONS = { ...REPORT_PARSER_OPTIONS, skipImageLinks: true, skipTextToHtml: true, skipHtmlToText: true };

/** The 552's text: which part is too large, by how much, and what the writer can do instead. Nothing the sender wrote (a file name) is quoted. */
function tooLargeText({ part }: ReplyTooLarge): string {
  if (part.kind === "attachments") return `5.3.4 Message too big for system: it carries ${part.count} attachments, more than a reply can store (at most ${REPLY_MAX_ATTACHMENTS}); send them as a link or an archive`;
  if (part.kind === "attachment") return `5.3.4 Message too big for system: attachment ${part.index} (${part.size} bytes) is more than a reply can store (at most ${part.maxSize} bytes for one file); send it as a link or in smaller files`;
  return `5.3.4 Message too big for system: its text and HTML take ${part.bytes} bytes as stored, more than a reply can (at most ${REPLY_STATEMENT_MAX_BYTES}); send a shorter reply`;
}

/**
 * The failure status (4.x.x or 5.x.x, RFC 3463) a plain-text notice quotes: a server reply ("550
 * 5.1.1 sorry, no mailbox here"), else a set-apart code ("(#5.1.1)"); null when it quotes none.
 * The one rule for both questions asked of a notice, whether it is a failure notice and what its
 * status is: a success (2.x.x) says nothing of a failure, and is more often a version ("Sent from
 * Acme Mail (2.0.1)" under an out-of-office) than a status.
 */
function failureInText(text: string): { failure: string | null; basicCode: number | null } {
  const quoted = /\b[45]\d\d[ -][45]\.\d{1,3}\.\d{1,3}\b.*/.exec(text)?.[0];
  const reply = quoted === undefined ? null : parseReply(quoted);
  const found = reply?.enhancedStatus ?? parseEnhancedStatus(text);
  return { failure: found !== null && /^[45]\./.test(found) ? found : null, basicCode: reply?.code ?? null };
}

/** The Auto-Submitted keyword (RFC 3834 §5), lower-case, without comments or parameters; "" when absent. */
function autoSubmitted(mail: ParsedMail): string {
  const field = mail.headers.get("auto-submitted");
  const value = Array.isArray(field) ? field[0] : field;
  return typeof value === "string" ? (value.trim().split(/[\s;(]/, 1)[0] ?? "").toLowerCase() : "";
}

/** Sent by no person: RFC 3834 §5 marks it `Auto-Submitted` other than `no`. */
function isAutomatic(mail: ParsedMail): boolean {
  const keyword = autoSubmitted(mail);
  return keyword !== "" && keyword !== "no";
}

/**
 * An automatic response (RFC 3834: an out-of-office or vacation notice) is marked `Auto-Submitted`
 * other than `no`. MTAs mark their plain-text bounces so too (Exim: `auto-generated`), and say what
 * they are besides: Exim's X-Failed-Recipients, a MAILER-DAEMON or postmaster sender, a quoted
 * failure status. Such a notice is still a bounce; so is one with no Auto-Submitted at all (qmail).
 */
function isAutoResponse(mail: ParsedMail, text: string | null): boolean {
  if (!isAutomatic(mail)) return false;
  if (mail.headers.has("x-failed-recipients")) return false;
  if (/^(mailer-daemon|postmaster)@/i.test(mail.from?.value[0]?.address ?? "")) return false;
  return failureInText(text ?? "").failure === null;
}

/** The address a DSN's recipient block names: the one the original was sent to, else the last it reached. */
const recipientOf = (r: DsnRecipient): string | null => r.originalRecipient ?? r.finalRecipient;

/** A DSN's failures, one per address it names (of any case: findRecipient compares so), in its order. */
function distinctRecipients(failed: readonly DsnRecipient[]): DsnRecipient[] {
  const seen = new Set<string>();
  return failed.filter((r) => {
    const key = recipientOf(r)?.toLowerCase() ?? "";
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Two recipients of one transaction naming the same target get one recording. */
function dedupe(routes: readonly AcceptedRoute[]): AcceptedRoute[] {
  const seen = new Set<string>();
  return routes.filter((route) => {
    const key = JSON.stringify(route);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function addresses(field: AddressObject | AddressObject[] | undefined): string[] {
  const list = field === undefined ? [] : Array.isArray(field) ? field : [field];
  return list.flatMap((o) => o.value).flatMap((a) => (a.address ? [lowerDomain(a.address)] : []));
}

const lowerDomain = (address: string): string => {
  const at = address.lastIndexOf("@");
  return at === -1 ? address : `${address.slice(0, at)}@${address.slice(at + 1).toLowerCase()}`;
};
