import { createHash } from "node:crypto";
import type { Clock } from "../domain/clock.js";
import { ContentRemovedError, NotFoundError, UniqueViolation } from "../domain/errors.js";
import type { Principal, Scope } from "../domain/environments.js";
import { newId } from "../domain/ids.js";
import type { Verp, VerpTarget } from "../domain/verp.js";
import type { Transaction } from "../db/repositories/index.js";
import { replyEventData, replyStatementBytes, UQ_INBOUND_REPLY, type InboundRepository, type NewInboundAttachment, type NewInboundMessage, type StoredInboundAttachment } from "../db/repositories/inbound.js";
import type { Page, PageRequest } from "../db/pagination.js";
import type { EngagementInput, EngagementOutcome, EngagementTarget } from "./engagement.js";
import type { components } from "../../generated/v1.js";

type InboundMessage = components["schemas"]["InboundMessage"];
type AuthenticationResult = components["schemas"]["InboundAuthenticationResult"];

/**
 * What an RCPT TO address is to Mailroom (docs/inbound.md#what-is-accepted). Only addresses at a
 * return-path domain of some workspace's sending domain are ever taken, and bare `postmaster`,
 * so the server is never an open relay; at those domains the three reserved local parts must
 * carry a valid signed token.
 */
export type InboundRoute =
  /** `bounces+<VERP>`: bounces (RFC 3464) and complaints (RFC 5965) about one recipient. */
  | { kind: "bounce"; target: VerpTarget; workspaceIds: string[] }
  /** `reply+<token>`: a reply to one message. */
  | { kind: "reply"; messageId: string; workspaceIds: string[] }
  /** `unsubscribe+<token>`: the mailto half of List-Unsubscribe. */
  | { kind: "unsubscribe"; target: { messageId: string; position: number }; workspaceIds: string[] }
  /** Any other local part at a return-path domain: reports and replies found by what they quote. */
  | { kind: "mailbox"; workspaceIds: string[] }
  /**
   * `postmaster`, bare (no workspace) or at a return-path domain (read as its other mailboxes are
   * first): RFC 5321 §4.5.1 has every SMTP server take it.
   */
  | { kind: "postmaster"; workspaceIds: string[] }
  /** A reserved local part whose token is forged, mangled or expired: 550 5.1.1. */
  | { kind: "unknown_token" }
  /** Not a domain Mailroom receives for: 550 5.7.1. */
  | { kind: "relay" };

/** A reply as parsed from the wire, before it is threaded. */
export interface ReceivedReply {
  /** The From field as written ("Ada <ada@example.com>") and its bare address. */
  from: string;
  fromAddress: string | null;
  to: string[];
  subject: string;
  text: string | null;
  quotedText: string | null;
  html: string | null;
  messageIdHeader: string | null;
  inReplyTo: string | null;
  authentication: { spf: AuthenticationResult; dkim: AuthenticationResult; dmarc: AuthenticationResult };
  attachments: NewInboundAttachment[];
  receivedAt: number;
  /**
   * SHA-256 (hex) of the message's bytes as received: what makes it the same reply when it has no
   * Message-ID (see replyDigest). Absent for a reply made in code, which is then not deduplicated.
   */
  rawDigest?: string;
}

/** Where a report or reply was found to belong: a message and one of its recipients. */
export interface ReportTarget {
  messageId: string;
  recipient: { position: number } | { email: string };
}

/**
 * The most one statement that stores a reply may carry (replyStatementBytes: strings escaped, an
 * attachment's bytes as hex). MySQL refuses a longer statement than its max_allowed_packet (16 MiB
 * by default in MariaDB) by dropping the connection, which the transaction reports as anything
 * but that: the reply was answered 451, and its sender retried for days and lost it. 15 MiB keeps
 * clear of the default and still stores every file that a message within INBOUND_MAX_MESSAGE_BYTES
 * (10 MiB) carries as base64, as mail clients send files (at most ~7.3 MiB: ~14.6 MiB as hex).
 * Counted on SQLite too, so that what one database stores the other does.
 */
export const REPLY_STATEMENT_MAX_BYTES = 15 * 1024 * 1024;

/**
 * The most files one reply may carry. Each is a row written under the message's lock and listed
 * whole by getInboundMessage, and a part costs a sender some 50 bytes: a 10 MiB message could
 * otherwise hold 200,000 of them. People attach a handful; 100 is a whole folder's worth.
 */
export const REPLY_MAX_ATTACHMENTS = 100;

/**
 * A reply that Mailroom will not store: one that would take a statement over
 * REPLY_STATEMENT_MAX_BYTES (a file sent unencoded, 7bit or 8bit as Thunderbird sends a CSV, past
 * ~7.5 MiB, or bodies dense with characters that are escaped), or with more than
 * REPLY_MAX_ATTACHMENTS files. Its retry would be the same, so the SMTP side refuses it for good
 * (552 5.3.4) and the person who wrote it learns why, rather than the reply being lost.
 */
export class ReplyTooLarge extends Error {
  constructor(readonly part: { kind: "body"; bytes: number } | { kind: "attachment"; index: number; size: number; maxSize: number } | { kind: "attachments"; count: number }) {
    super(tooLargeMessage(part));
  }
}

function tooLargeMessage(part: ReplyTooLarge["part"]): string {
  switch (part.kind) {
    case "body":
      return `a reply's row would take ${part.bytes} bytes to store`;
    case "attachment":
      return `a reply's attachment ${part.index} (${part.size} bytes) is over ${part.maxSize} bytes`;
    case "attachments":
      return `a reply carries ${part.count} attachments, more than ${REPLY_MAX_ATTACHMENTS}`;
  }
}

/** `repeated`: the message already had this reply (a retry), so `inboundId` is the first's and nothing was recorded again. */
export type ReplyOutcome = { stored: true; inboundId: string; messageId: string; recipient: string | null; eventId: string | null; repeated: boolean } | { stored: false };

export interface InboundServiceDeps {
  inbound: InboundRepository;
  engagement: { record(input: EngagementInput): Promise<EngagementOutcome | null> };
  verp: Verp;
  /** The tracking tokens' parser of `unsubscribe+…` addresses. */
  parseUnsubscribeAddress(address: string): { messageId: string; position: number } | null;
  clock: Clock;
}

const RESERVED = /^(bounces|reply|unsubscribe)\+/i;
// RFC 5321 §4.5.1: "postmaster", in any case, bare and at each domain the server receives for.
const POSTMASTER = /^postmaster$/i;
// Mailroom's own Message-IDs are `<message id@from domain>` (services/message-input.ts).
const OWN_MESSAGE_ID = /^<(msg_[0-9a-z]{26})@[^>]+>$/i;
// How many of Mailroom's Message-IDs in a reply's References are looked up (besides In-Reply-To).
// The field is the sender's to write: 1 MiB of it lists ~25,000 ids, each a guess at a message.
const REFERENCES_LOOKED_UP = 10;

/**
 * Inbound mail's business rules: which addresses are ours, which message a reply or report is
 * about, and recording it (replies stored with their event in one transaction; bounces,
 * complaints and unsubscribes through the engagement service). Parsing the wire format is the
 * SMTP side's job (src/inbound/); this takes its results.
 */
export class InboundService {
  constructor(private readonly deps: InboundServiceDeps) {}

  async route(address: string): Promise<InboundRoute> {
    const at = address.lastIndexOf("@");
    if (at === -1 && POSTMASTER.test(address)) return { kind: "postmaster", workspaceIds: [] };
    if (at <= 0) return { kind: "relay" };
    const domain = address.slice(at + 1).toLowerCase().replace(/\.$/, "");
    const workspaceIds = await this.deps.inbound.returnPathWorkspaces(domain);
    if (workspaceIds.length === 0) return { kind: "relay" };
    const local = address.slice(0, at);
    if (POSTMASTER.test(local)) return { kind: "postmaster", workspaceIds };
    if (!RESERVED.test(local)) return { kind: "mailbox", workspaceIds };
    const bounce = this.deps.verp.parse(address);
    if (bounce) return { kind: "bounce", target: bounce, workspaceIds };
    const reply = this.deps.verp.parseReply(address);
    if (reply) return { kind: "reply", messageId: reply.messageId, workspaceIds };
    const unsubscribe = this.deps.parseUnsubscribeAddress(address);
    if (unsubscribe) return { kind: "unsubscribe", target: unsubscribe, workspaceIds };
    return { kind: "unknown_token" };
  }

  /**
   * The message and recipient a report is about when its envelope recipient does not say (it
   * came to a plain mailbox): a VERP return path quoted in it (signed, so trusted), else the
   * quoted Message-ID, which must be one of these workspaces' messages, and the address the
   * report names.
   */
  async locate(workspaceIds: readonly string[], quoted: { returnPaths: Array<string | null>; messageId: string | null; recipient: string | null }): Promise<ReportTarget | null> {
    for (const returnPath of quoted.returnPaths) {
      const target = returnPath === null ? null : this.deps.verp.parse(returnPath);
      if (target) return { messageId: target.messageId, recipient: { position: target.position } };
    }
    if (quoted.recipient === null || quoted.messageId === null) return null;
    const message = await this.ownMessage(workspaceIds, quoted.messageId);
    return message ? { messageId: message.id, recipient: { email: quoted.recipient } } : null;
  }

  /**
   * The message of these workspaces that In-Reply-To names, else the newest of those References
   * names, looked up in one query. Of References only Mailroom's own Message-IDs count, and only
   * the last REFERENCES_LOOKED_UP of them: RFC 5322 §3.6.4 has each reply append its parent's id,
   * so the newest are at the end, and other people's replies in a long thread do not push
   * Mailroom's message out of reach.
   */
  async threadByHeaders(workspaceIds: readonly string[], inReplyTo: string | null, references: readonly string[]): Promise<string | null> {
    const ownReferences = references.map(ownMessageId).filter((c) => c !== null);
    const named = [ownMessageId(inReplyTo ?? ""), ...ownReferences.slice(-REFERENCES_LOOKED_UP).reverse()].filter((c) => c !== null);
    // In-Reply-To is most often References' last entry too.
    const candidates = named.filter((c, i) => named.findIndex((d) => d.messageIdHeader === c.messageIdHeader) === i);
    const found = new Set((await this.deps.inbound.findThreadable(workspaceIds, candidates)).map((m) => m.id));
    return candidates.find((c) => found.has(c.id))?.id ?? null;
  }

  /** A bounce reported after the hand-off; null when its message or recipient is unknown or it no longer applies. */
  async recordBounce(target: ReportTarget, bounce: { bounceType: "hard" | "soft"; detail: string; data: Record<string, unknown> }): Promise<EngagementOutcome | null> {
    const now = this.deps.clock.now();
    return this.deps.engagement.record({ ...target, type: "message.bounced", bounce: { bounceType: bounce.bounceType, detail: bounce.detail }, data: bounce.data, at: now });
  }

  async recordComplaint(target: ReportTarget, data: Record<string, unknown>): Promise<EngagementOutcome | null> {
    return this.deps.engagement.record({ ...target, type: "message.complained", data, at: this.deps.clock.now(), human: true });
  }

  async recordUnsubscribe(target: { messageId: string; position: number }): Promise<EngagementOutcome | null> {
    return this.deps.engagement.record({ messageId: target.messageId, recipient: { position: target.position }, type: "message.unsubscribed", data: { method: "mailto" }, at: this.deps.clock.now(), human: true });
  }

  /**
   * Stores a reply threaded to `messageId` and emits `message.replied`, in one transaction. The
   * recipient is the one whose address is the reply's From. A reply from someone else (the
   * message forwarded, a colleague answering) is still the message's: stored with no recipient
   * and announced by a `message.replied` whose recipient is null (docs/inbound.md#replies).
   *
   * Once per message: the same reply again (the sending MTA's retry after a lost 250, or after
   * another recipient of its transaction failed) records nothing and answers the first reply. The
   * unique key decides, not a read first, since two smtp nodes may take the retry at once; the
   * duplicate's transaction rolls back whole, so no event is written and nothing counted.
   *
   * Throws ReplyTooLarge, having written nothing, when it has more than REPLY_MAX_ATTACHMENTS
   * files or a statement that would store it is over REPLY_STATEMENT_MAX_BYTES.
   */
  async recordReply(messageId: string, reply: ReceivedReply, threadedBy: "reply_address" | "in_reply_to"): Promise<ReplyOutcome> {
    const inboundId = newId("inbound", reply.receivedAt);
    const digest = replyDigest(reply);
    try {
      const outcome = await this.deps.engagement.record({
        messageId,
        // Threaded to the recipient it came from; a reply from anyone else is the message's still.
        recipient: reply.fromAddress === null ? null : { email: reply.fromAddress },
        type: "message.replied",
        data: {},
        at: reply.receivedAt,
        human: true,
        within: this.storeWithin(inboundId, reply, threadedBy, false, digest),
      });
      if (!outcome) return { stored: false };
      return { stored: true, inboundId, messageId: outcome.messageId, recipient: outcome.recipientEmail, eventId: outcome.eventId, repeated: false };
    } catch (error) {
      if (!(error instanceof UniqueViolation && error.constraint === UQ_INBOUND_REPLY) || digest === null) throw error;
      const first = await this.deps.inbound.findByDigest(messageId, digest);
      if (!first) throw error;
      return { stored: true, inboundId: first.id, messageId, recipient: first.recipient, eventId: null, repeated: true };
    }
  }

  /**
   * The engagement service's `within` hook that stores a reply in the event's transaction and
   * puts its summary in the event's data.
   */
  storeWithin(inboundId: string, reply: ReceivedReply, threadedBy: InboundMessage["threaded_by"], simulated: boolean, digest: string | null): (trx: Transaction, target: EngagementTarget) => Promise<Record<string, unknown>> {
    return async (trx, target) => {
      const row = toRow(inboundId, target, reply, threadedBy, simulated, digest);
      // Before any statement is sent: the transaction rolls back, having written nothing.
      assertStorable(row);
      await this.deps.inbound.insert(trx, row);
      return replyEventData(row);
    };
  }

  async listReplies(principal: Principal, messageId: string, page: PageRequest): Promise<Page<InboundMessage>> {
    const scope = scopeOf(principal);
    if (!(await this.deps.inbound.messageExists(scope, messageId))) throw new NotFoundError("message", messageId);
    return this.deps.inbound.listForMessage(scope, messageId, page);
  }

  async get(principal: Principal, id: string): Promise<InboundMessage> {
    const found = await this.deps.inbound.find(scopeOf(principal), id);
    if (!found) throw new NotFoundError("inbound message", id);
    return found;
  }

  async attachment(principal: Principal, id: string, index: number): Promise<StoredInboundAttachment> {
    const found = await this.deps.inbound.attachment(scopeOf(principal), id, index);
    if (!found) throw new NotFoundError("inbound attachment", `${id}/${index}`);
    if (found.content === null) throw new ContentRemovedError("inbound message", id);
    return { ...found, content: found.content };
  }

  private async ownMessage(workspaceIds: readonly string[], messageIdHeader: string): Promise<{ id: string; scope: Scope } | undefined> {
    const candidate = ownMessageId(messageIdHeader);
    return candidate === null ? undefined : (await this.deps.inbound.findThreadable(workspaceIds, [candidate]))[0];
  }
}

/**
 * What makes two deliveries one reply: its Message-ID, which RFC 5322 §3.6.4 makes unique to one
 * message and every retry keeps; without one (rare: MTAs add it), its bytes, which a retry sends
 * unchanged. Prefixed, so that no Message-ID can be taken for a message's bytes.
 */
function replyDigest(reply: ReceivedReply): string | null {
  const identity = reply.messageIdHeader ? `message-id:${reply.messageIdHeader}` : reply.rawDigest ? `raw:${reply.rawDigest}` : null;
  return identity === null ? null : createHash("sha256").update(identity).digest("hex");
}

/** Throws ReplyTooLarge when `row` has more than REPLY_MAX_ATTACHMENTS files, or a statement that stores it would be over REPLY_STATEMENT_MAX_BYTES. */
function assertStorable(row: NewInboundMessage): void {
  if (row.attachments.length > REPLY_MAX_ATTACHMENTS) throw new ReplyTooLarge({ kind: "attachments", count: row.attachments.length });
  const bytes = replyStatementBytes(row);
  if (bytes.message > REPLY_STATEMENT_MAX_BYTES) throw new ReplyTooLarge({ kind: "body", bytes: bytes.message });
  for (const [index, statement] of bytes.attachments.entries()) {
    if (statement <= REPLY_STATEMENT_MAX_BYTES) continue;
    const size = row.attachments[index]!.content.length;
    // Its hex takes two bytes a byte; the rest of its statement (file name, type) stays as it is.
    throw new ReplyTooLarge({ kind: "attachment", index, size, maxSize: Math.floor((REPLY_STATEMENT_MAX_BYTES - (statement - 2 * size)) / 2) });
  }
}

/** The message a Message-ID would be if it is one of Mailroom's own; null for anyone else's. */
function ownMessageId(messageIdHeader: string): { id: string; messageIdHeader: string } | null {
  const header = messageIdHeader.trim();
  const id = OWN_MESSAGE_ID.exec(header)?.[1]?.toLowerCase();
  return id === undefined ? null : { id, messageIdHeader: header };
}

const scopeOf = (principal: Principal): Scope => ({ workspaceId: principal.workspaceId, environment: principal.environment });

function toRow(id: string, target: { scope: Scope; messageId: string; recipientEmail: string | null }, reply: ReceivedReply, threadedBy: InboundMessage["threaded_by"], simulated: boolean, digest: string | null): NewInboundMessage {
  return {
    id,
    scope: target.scope,
    message_id: target.messageId,
    recipient: target.recipientEmail,
    from: reply.from,
    to: reply.to,
    subject: reply.subject,
    text: reply.text,
    quoted_text: reply.quotedText,
    html: reply.html,
    message_id_header: reply.messageIdHeader,
    in_reply_to: reply.inReplyTo,
    authentication: reply.authentication,
    threaded_by: threadedBy,
    simulated,
    received_at: reply.receivedAt,
    attachments: reply.attachments,
    reply_digest: digest,
  };
}
