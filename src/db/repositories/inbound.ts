import type { Knex } from "knex";
import { toIso } from "../../domain/clock.js";
import { cut } from "../../domain/cut.js";
import type { Environment, Scope } from "../../domain/environments.js";
import { UniqueViolation } from "../../domain/errors.js";
import { isUniqueViolation } from "../driver-errors.js";
import { paginate, type Page, type PageRequest } from "../pagination.js";
import { parseJson, rowBytes, toNumber } from "../rows.js";
import type { components } from "../../../generated/v1.js";

type InboundMessage = components["schemas"]["InboundMessage"];
type AuthenticationResult = components["schemas"]["InboundAuthenticationResult"];

export interface NewInboundAttachment {
  filename: string | null;
  content_type: string;
  content_id: string | null;
  content: Buffer;
}

/** A received reply as stored; the message it answers and its scope come from the engagement target. */
export interface NewInboundMessage {
  id: string;
  scope: Scope;
  message_id: string;
  recipient: string | null;
  from: string;
  to: string[];
  subject: string;
  text: string | null;
  quoted_text: string | null;
  html: string | null;
  message_id_header: string | null;
  in_reply_to: string | null;
  authentication: { spf: AuthenticationResult; dkim: AuthenticationResult; dmarc: AuthenticationResult };
  threaded_by: InboundMessage["threaded_by"];
  simulated: boolean;
  received_at: number;
  attachments: NewInboundAttachment[];
  /**
   * What makes a received reply the same reply when it comes again (services/inbound.ts
   * replyDigest): at most one row per (message_id, reply_digest). Null for none (the simulator's).
   */
  reply_digest?: string | null;
}

export const UQ_INBOUND_REPLY = "uq_inbound_messages__reply";

/**
 * What a `message.replied` event says of its reply: enough to act on without a second call
 * (the full reply, attachments' content included, is `getInboundMessage`).
 *
 * The event's data is a TEXT column (64 KiB on MySQL) and the webhook payload, while a reply may
 * be megabytes (an Outlook reply's HTML with its quoted history). A reply that does not fit whole
 * keeps, in this order, as much as fits: its text (cut at the end), its attachments' metadata
 * (the leading ones), its HTML (whole or null: cut markup is no HTML), its quoted text (cut at
 * the end); and says `content_truncated: true`.
 */
export function replyEventData(reply: NewInboundMessage): Record<string, unknown> {
  const whole = replyEvent(reply, reply.text, reply.quoted_text, reply.html, attachmentsMeta(reply.attachments), false);
  if (jsonBytes(whole) <= REPLY_EVENT_DATA_BYTES) return whole;
  // Each field is measured against what the empty event leaves: null (4 bytes) or [] (2 bytes) where it goes.
  let room = REPLY_EVENT_DATA_BYTES - jsonBytes(replyEvent(reply, null, null, null, [], true));
  const text = reply.text === null ? null : jsonPrefix(reply.text, room + 4);
  room -= text === null ? 0 : jsonBytes(text) - 4;
  const attachments = leadingThatFit(attachmentsMeta(reply.attachments), room + 2);
  room -= jsonBytes(attachments) - 2;
  const html = reply.html !== null && jsonBytes(reply.html) <= room + 4 ? reply.html : null;
  room -= html === null ? 0 : jsonBytes(html) - 4;
  const quoted = reply.quoted_text === null ? null : jsonPrefix(reply.quoted_text, room + 4);
  return replyEvent(reply, text, quoted, html, attachments, true);
}

function replyEvent(reply: NewInboundMessage, text: string | null, quoted: string | null, html: string | null, attachments: unknown[], truncated: boolean): Record<string, unknown> {
  return {
    inbound_id: reply.id,
    from: storedFrom(reply.from),
    subject: storedSubject(reply.subject),
    text,
    quoted_text: quoted,
    html,
    attachments,
    authentication: reply.authentication,
    threaded_by: reply.threaded_by,
    ...(reply.simulated ? { simulated: true } : {}),
    ...(truncated ? { content_truncated: true } : {}),
  };
}

function attachmentsMeta(attachments: readonly NewInboundAttachment[]): Array<Record<string, unknown>> {
  return attachments.map((a, index) => {
    const stored = storedAttachmentFields(a);
    return { index, filename: stored.filename, content_type: stored.content_type, size: a.content.length, content_id: stored.content_id };
  });
}

export interface StoredInboundAttachment {
  filename: string | null;
  content_type: string;
  content: Buffer;
}

/** A message an inbound mail may be threaded to. */
export interface ThreadableMessage {
  id: string;
  scope: Scope;
}

interface InboundRow {
  id: string;
  environment: Environment;
  message_id: string;
  recipient: string | null;
  from_mailbox: string;
  to_list: string;
  subject: string;
  text: string | null;
  quoted_text: string | null;
  html: string | null;
  message_id_header: string | null;
  in_reply_to: string | null;
  authentication: string;
  threaded_by: InboundMessage["threaded_by"];
  simulated: boolean | number;
  received_at: number | string;
  content_removed_at: number | string | null;
}

interface AttachmentMetaRow {
  inbound_id: string;
  position: number;
  filename: string | null;
  content_type: string;
  content_id: string | null;
  size: number;
}

/*
 * What a sender writes is unbounded (within INBOUND_MAX_MESSAGE_BYTES); the columns are not. On
 * MySQL a value too long for its column fails the insert (strict mode), and the reply, answered
 * 451, would be retried and lost. The bodies are LONGTEXT and attachments LONGBLOB; the rest is
 * kept to what its column holds.
 */
// Header fields: RFC 5322's line limit (the Message-ID columns are VARCHAR(998); From and Subject TEXT).
const HEADER_FIELD_MAX = 998;
// MySQL's TEXT: 65,535 bytes (`to_list` is a JSON array in one).
const TEXT_COLUMN_BYTES = 65_535;
// RFC 6838 §4.2: a type name and a subtype name of at most 127 characters each (the column is VARCHAR(255)).
const CONTENT_TYPE_MAX = 255;
// What file systems take as a name.
const FILENAME_MAX = 255;
// A `message.replied` event's data at most, leaving room in `events.data` (TEXT) for the rest of an
// event that carries it (a simulated delivery's SMTP fields).
const REPLY_EVENT_DATA_BYTES = 60_000;

const storedFrom = (from: string): string => cut(from, HEADER_FIELD_MAX);
const storedSubject = (subject: string): string => cut(subject, HEADER_FIELD_MAX);

function storedAttachmentFields(a: NewInboundAttachment): { filename: string | null; content_type: string; content_id: string | null } {
  return {
    filename: a.filename === null ? null : cut(a.filename, FILENAME_MAX),
    // A longer type is no media type: the bytes are served as what they then are, unknown.
    content_type: a.content_type.length <= CONTENT_TYPE_MAX ? a.content_type : "application/octet-stream",
    content_id: a.content_id === null ? null : cut(a.content_id, HEADER_FIELD_MAX),
  };
}

/** The size of `value` as JSON in UTF-8, as it is stored and sent. */
const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

/** The longest start of `value` found whose JSON takes at most `maxBytes` (a character takes 1 to 6). */
function jsonPrefix(value: string, maxBytes: number): string {
  if (jsonBytes(value) <= maxBytes) return value;
  // Every character takes at least a byte, so no longer start than maxBytes fits.
  let fits = 0;
  let tooLong = Math.min(value.length, maxBytes) + 1;
  while (tooLong - fits > 1) {
    const middle = (fits + tooLong) >>> 1;
    if (jsonBytes(cut(value, middle)) <= maxBytes) fits = middle;
    else tooLong = middle;
  }
  return cut(value, fits);
}

/** The leading items whose JSON array takes at most `maxBytes`. */
function leadingThatFit<T>(items: readonly T[], maxBytes: number): T[] {
  let bytes = 2; // []
  let count = 0;
  for (const item of items) {
    bytes += jsonBytes(item) + (count === 0 ? 0 : 1);
    if (bytes > maxBytes) break;
    count++;
  }
  return items.slice(0, count);
}

function messageRow(inbound: NewInboundMessage): Record<string, unknown> {
  return {
    id: inbound.id,
    workspace_id: inbound.scope.workspaceId,
    environment: inbound.scope.environment,
    message_id: inbound.message_id,
    recipient: inbound.recipient,
    from_mailbox: storedFrom(inbound.from),
    to_list: JSON.stringify(leadingThatFit(inbound.to, TEXT_COLUMN_BYTES)),
    subject: storedSubject(inbound.subject),
    text: inbound.text,
    quoted_text: inbound.quoted_text,
    html: inbound.html,
    message_id_header: inbound.message_id_header === null ? null : cut(inbound.message_id_header, HEADER_FIELD_MAX),
    in_reply_to: inbound.in_reply_to === null ? null : cut(inbound.in_reply_to, HEADER_FIELD_MAX),
    authentication: JSON.stringify(inbound.authentication),
    threaded_by: inbound.threaded_by,
    simulated: inbound.simulated,
    received_at: inbound.received_at,
    reply_digest: inbound.reply_digest ?? null,
  };
}

function attachmentRow(inboundId: string, position: number, a: NewInboundAttachment): Record<string, unknown> {
  return { inbound_id: inboundId, position, ...storedAttachmentFields(a), size: a.content.length, content: a.content };
}

// What a single-row INSERT says besides its row's values: the table, the column list.
const INSERT_TEXT_BYTES = 1024;

/**
 * The size of each statement that stores a reply (InboundRepository.insert), as mysql2 writes it
 * (rowBytes: strings escaped, an attachment's bytes as hex, twice their size): its row, and each
 * attachment's. What the caller holds against MySQL's max_allowed_packet before it sends any:
 * past it the server drops the connection mid-transaction, which surfaces as anything but that.
 */
export function replyStatementBytes(inbound: NewInboundMessage): { message: number; attachments: number[] } {
  return {
    message: INSERT_TEXT_BYTES + rowBytes(messageRow(inbound)),
    attachments: inbound.attachments.map((a, position) => INSERT_TEXT_BYTES + rowBytes(attachmentRow(inbound.id, position, a))),
  };
}

/**
 * Inbound replies and their attachments, scoped by (workspace, environment) like messages; and
 * the lookups the SMTP server needs before it knows a tenant (which workspaces a return-path
 * domain belongs to, which message a Message-ID names).
 */
export class InboundRepository {
  constructor(private readonly knex: Knex) {}

  /** The workspaces with a sending domain whose return-path domain is `domain` (lower-case). */
  async returnPathWorkspaces(domain: string): Promise<string[]> {
    const rows = (await this.knex("domains").where({ return_path_domain: domain }).select("workspace_id")) as Array<{ workspace_id: string }>;
    return [...new Set(rows.map((row) => row.workspace_id))];
  }

  /**
   * The messages of `workspaceIds` among `candidates`: each is a message `id` and the Message-ID
   * field it must have exactly. One query for them all (by primary key); the caller bounds how many.
   */
  async findThreadable(workspaceIds: readonly string[], candidates: ReadonlyArray<{ id: string; messageIdHeader: string }>): Promise<ThreadableMessage[]> {
    if (workspaceIds.length === 0 || candidates.length === 0) return [];
    const rows = (await this.knex("messages")
      .whereIn("workspace_id", [...workspaceIds])
      .where((q) => {
        for (const c of candidates) void q.orWhere({ id: c.id, message_id_header: c.messageIdHeader });
      })
      .select("id", "workspace_id", "environment")) as Array<{ id: string; workspace_id: string; environment: Environment }>;
    return rows.map((row) => ({ id: row.id, scope: { workspaceId: row.workspace_id, environment: row.environment } }));
  }

  async messageExists(scope: Scope, messageId: string): Promise<boolean> {
    return (await this.knex("messages").where({ id: messageId, workspace_id: scope.workspaceId, environment: scope.environment }).first("id")) !== undefined;
  }

  /**
   * Stores a reply inside the caller's transaction (the one that writes its event). Throws
   * UniqueViolation(UQ_INBOUND_REPLY) when the message already has the reply with this digest.
   */
  async insert(trx: Knex.Transaction, inbound: NewInboundMessage): Promise<void> {
    try {
      await this.insertRow(trx, inbound);
    } catch (error) {
      // The id is fresh; (reply_digest, message_id) is the table's only other unique key.
      if (isUniqueViolation(error)) throw new UniqueViolation(UQ_INBOUND_REPLY);
      throw error;
    }
    // One row at a time: an attachment may be megabytes, and MySQL's max_allowed_packet bounds a statement.
    for (const [position, a] of inbound.attachments.entries()) await trx("inbound_attachments").insert(attachmentRow(inbound.id, position, a));
  }

  /** The reply of `messageId` stored with this digest: the first of a reply that came again. */
  async findByDigest(messageId: string, replyDigest: string): Promise<{ id: string; recipient: string | null } | undefined> {
    // No tenant scope: the message id was taken from a signed address or threaded within the receiving workspaces.
    return (await this.knex("inbound_messages").where({ message_id: messageId, reply_digest: replyDigest }).first("id", "recipient")) as { id: string; recipient: string | null } | undefined;
  }

  private async insertRow(trx: Knex.Transaction, inbound: NewInboundMessage): Promise<void> {
    await trx("inbound_messages").insert(messageRow(inbound));
  }

  async find(scope: Scope, id: string): Promise<InboundMessage | undefined> {
    const row = (await this.base(scope).andWhere({ id }).first()) as InboundRow | undefined;
    if (!row) return undefined;
    return toWire(row, await this.attachmentsOf([row.id]));
  }

  /** A message's replies, oldest first. */
  async listForMessage(scope: Scope, messageId: string, page: PageRequest): Promise<Page<InboundMessage>> {
    const result = await paginate<InboundRow, InboundRow>(this.base(scope).andWhere({ message_id: messageId }), "id", (row) => row.id, page, "asc", (row) => row);
    const attachments = await this.attachmentsOf(result.data.map((row) => row.id));
    return { ...result, data: result.data.map((row) => toWire(row, attachments)) };
  }

  /** The attachment with its bytes; `content` is null once the content retention removed them. */
  async attachment(scope: Scope, inboundId: string, position: number): Promise<(Omit<StoredInboundAttachment, "content"> & { content: Buffer | null }) | undefined> {
    const row = (await this.knex("inbound_attachments as a")
      .join("inbound_messages as i", "i.id", "a.inbound_id")
      .where({ "i.id": inboundId, "i.workspace_id": scope.workspaceId, "i.environment": scope.environment, "a.position": position })
      .first("a.filename", "a.content_type", "a.content", "i.content_removed_at")) as
      | { filename: string | null; content_type: string; content: Buffer | Uint8Array; content_removed_at: unknown }
      | undefined;
    return row && { filename: row.filename, content_type: row.content_type, content: row.content_removed_at === null ? Buffer.from(row.content) : null };
  }

  /**
   * Removes the content of up to `limit` of a workspace's replies received before `before` that
   * still hold it: text, quoted text, HTML and attachments' bytes, and the same fields of their
   * `message.replied` events (which carry the reply, so that a webhook consumer needs no second
   * call). Returns how many it removed; fewer than `limit` means none is left. Chosen outside the
   * short write, which is guarded by `content_removed_at`, as MessagesRepository.removeContent.
   */
  async removeContent(workspaceId: string, before: number, now: number, limit: number): Promise<number> {
    const rows = (await this.knex("inbound_messages")
      .select("id", "environment", "message_id", "received_at")
      .where({ workspace_id: workspaceId })
      .whereNull("content_removed_at")
      .where("received_at", "<", before)
      .orderBy("received_at")
      .limit(limit)) as Array<{ id: string; environment: Environment; message_id: string; received_at: number | string }>;
    if (rows.length === 0) return 0;
    const ids = rows.map((row) => row.id);
    await this.knex.transaction(async (trx) => {
      await trx("inbound_messages").where({ workspace_id: workspaceId }).whereIn("id", ids).whereNull("content_removed_at").update({ text: null, quoted_text: null, html: null, content_removed_at: now });
      await trx("inbound_attachments").whereIn("inbound_id", ids).update({ content: Buffer.alloc(0) });
      // A reply's event is written in the reply's transaction, at its received_at, naming it in data.inbound_id.
      const events = (await trx("events")
        .where({ workspace_id: workspaceId, type: "message.replied" })
        .whereIn("message_id", [...new Set(rows.map((row) => row.message_id))])
        .whereIn("created_at", [...new Set(rows.map((row) => toNumber(row.received_at)))])
        .select("id", "data")) as Array<{ id: string; data: string }>;
      const removed = new Set(ids);
      for (const event of events) {
        const data = parseJson<Record<string, unknown>>(event.data);
        if (typeof data.inbound_id !== "string" || !removed.has(data.inbound_id)) continue;
        await trx("events").where({ id: event.id }).update({ data: JSON.stringify({ ...data, text: null, quoted_text: null, html: null, content_removed: true }) });
      }
    });
    return rows.length;
  }

  private base(scope: Scope): Knex.QueryBuilder {
    return this.knex("inbound_messages").where({ workspace_id: scope.workspaceId, environment: scope.environment });
  }

  private async attachmentsOf(ids: readonly string[]): Promise<Map<string, AttachmentMetaRow[]>> {
    const byInbound = new Map<string, AttachmentMetaRow[]>();
    if (ids.length === 0) return byInbound;
    const rows = (await this.knex("inbound_attachments").whereIn("inbound_id", [...ids]).orderBy(["inbound_id", "position"]).select("inbound_id", "position", "filename", "content_type", "content_id", "size")) as AttachmentMetaRow[];
    for (const row of rows) byInbound.set(row.inbound_id, [...(byInbound.get(row.inbound_id) ?? []), row]);
    return byInbound;
  }
}

function toWire(row: InboundRow, attachments: Map<string, AttachmentMetaRow[]>): InboundMessage {
  return {
    id: row.id,
    object: "inbound_message",
    environment: row.environment,
    message_id: row.message_id,
    recipient: row.recipient,
    from: row.from_mailbox,
    to: parseJson<string[]>(row.to_list),
    subject: row.subject,
    text: row.text,
    quoted_text: row.quoted_text,
    html: row.html,
    message_id_header: row.message_id_header,
    in_reply_to: row.in_reply_to,
    attachments: (attachments.get(row.id) ?? []).map((a) => ({ index: Number(a.position), filename: a.filename, content_type: a.content_type, size: Number(a.size), content_id: a.content_id })),
    authentication: parseJson(row.authentication),
    threaded_by: row.threaded_by,
    simulated: Boolean(row.simulated),
    received_at: toIso(toNumber(row.received_at)),
    content_removed_at: row.content_removed_at === null ? null : toIso(toNumber(row.content_removed_at)),
  };
}
