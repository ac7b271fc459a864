import type { Knex } from "knex";
import { toIso, toIsoOrNull, utcDay } from "../../domain/clock.js";
import type { Environment, Scope } from "../../domain/environments.js";
import { ENGAGEMENT_STAMPS, type EngagementStampName, type EngagementStamps } from "../../domain/engagement.js";
import type { EventType } from "../../domain/events.js";
import { aggregateStatus, isTerminal, TERMINAL_STATUSES, type MessageStatus } from "../../domain/message-status.js";
import type { BatchWriter } from "../group-commit.js";
import { inLockOrder } from "../lock-order.js";
import type { InboundRepository, NewInboundMessage } from "./inbound.js";
import type { NewSuppression, SuppressionsRepository } from "./suppressions.js";
import type { UsageRepository } from "./usage.js";
import type { WebhookDeliveriesRepository } from "./webhook-deliveries.js";
import { paginate, type Page, type PageRequest } from "../pagination.js";
import { insertChunked, parseJson, toNumber, toNumberOrNull, updateEach, valueBytes, type RowUpdate } from "../rows.js";
import type { components } from "../../../generated/v1.js";

type Message = components["schemas"]["Message"];
type MessageSummary = components["schemas"]["MessageSummary"];
/** The template and version a message was rendered from (null: sent with its own content). */
export type MessageTemplateRef = components["schemas"]["MessageTemplate"];
/** What a message tracks, decided once at acceptance. */
export type MessageTracking = components["schemas"]["MessageTracking"];
export type MessageEngagement = components["schemas"]["MessageEngagement"];
export type EngagementStamp = EngagementStampName;

export interface StoredAttachment {
  filename: string;
  content_type: string;
  content_id: string | null;
  content: string; // base64
  size: number;
}

export interface NewRecipient {
  type: "to" | "cc" | "bcc";
  email: string;
  name: string | null;
}

/** What a message says: its normalised addresses, content and labels. */
export interface MessageContent {
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  reply_to: string[];
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
  attachments: StoredAttachment[];
  tags: string[];
  metadata: Record<string, string>;
}

/** A validated message, ready to be stored with its recipients, tags, first event and job. */
export interface NewMessage extends MessageContent {
  scope: Scope;
  id: string;
  status: "queued" | "scheduled";
  template: MessageTemplateRef | null;
  tracking: MessageTracking;
  scheduled_at: number | null;
  expires_at: number | null;
  idempotency_key: string | null;
  /** Whether the key was made for a batch's message (`<key>#<index>`): a single message's literal key of the same text is another slot. */
  idempotency_batched: boolean;
  /**
   * Set on a live message of a workspace that had a monthly quota when it was checked: the
   * accepting transaction then checks the quota again, exactly (acceptWriter). Messages of one
   * unit are accepted or refused together (a strict batch's share one); null costs nothing.
   */
  quota_unit: string | null;
  /**
   * A message already holding the Idempotency-Key and created at or after this instant is an
   * earlier attempt of this very request (a crashed request's retry): it is returned instead.
   * An older holder's key has outlived its retention and is handed over to this message.
   */
  idempotency_window_start: number;
  message_id_header: string;
  recipients: NewRecipient[];
  created_at: number;
  first_event_id: string;
  run_at: number;
}

export interface AcceptResult {
  id: string;
  /** True when a message with the same Idempotency-Key already existed (it is returned instead). */
  existing: boolean;
  /** Set when the message was not stored: its unit would have taken the month past the workspace's quota. */
  quotaRefused?: QuotaRefusal;
}

/** Why the accepting transaction refused a message: the quota, the month's usage before it, and what its unit asked for. */
export interface QuotaRefusal {
  quota: number;
  used: number;
  requested: number;
}

export interface RecipientRecord extends EngagementStamps {
  id: number;
  position: number;
  type: "to" | "cc" | "bcc";
  email: string;
  name: string | null;
  status: MessageStatus;
  detail: string | null;
  attempts: number;
  updated_at: number;
}

/** A message as the delivery pipeline and the services see it. */
export interface MessageRecord extends MessageContent {
  id: string;
  scope: Scope;
  status: MessageStatus;
  template: MessageTemplateRef | null;
  tracking: MessageTracking;
  engagement: MessageEngagement;
  scheduled_at: number | null;
  expires_at: number | null;
  idempotency_key: string | null;
  message_id_header: string;
  mime: string | null;
  /** When the workspace's content retention removed the bodies, source and attachment bytes; null while kept. */
  content_removed_at: number | null;
  event_seq: number;
  created_at: number;
  updated_at: number;
  recipients: RecipientRecord[];
}

export interface NewEvent {
  id: string;
  type: EventType;
  recipient: string | null;
  from_status: MessageStatus | null;
  to_status: MessageStatus | null;
  data: Record<string, unknown>;
  created_at: number;
}

/** Everything one step of processing changes about one message, written atomically. */
export interface MessageChange {
  scope: Scope;
  messageId: string;
  status: MessageStatus;
  recipients: Array<{ id: number; status: MessageStatus; detail: string | null; attempts: number }>;
  events: NewEvent[];
  /** A new send time (rescheduleMessage); the job moves with `job: { action: "reschedule" }`. */
  scheduledAt?: number;
  /** Addresses to add to the environment's suppression list (hard bounces, complaints, unsubscribes), in the same transaction. */
  suppressions?: BounceSuppression[];
  /** First-time engagement stamps to set on recipients (kept when already set). */
  stamps?: Array<{ recipientId: number; stamp: EngagementStamp; at: number }>;
  /** Human engagement to add to the message's counters. */
  counters?: Partial<MessageEngagement>;
  /** Replies to store with their `message.replied` events (the sandbox simulator's). */
  replies?: NewInboundMessage[];
  /** What happens to the message's delivery job. */
  job: { action: "delete" } | { action: "reschedule"; runAt: number } | { action: "keep" };
  /**
   * The worker whose job lease this change was computed under. The change is dropped when the
   * job is no longer leased to it (the lease ran out and another worker took the job, or the
   * message was canceled meanwhile): the job's current holder records the outcome, once.
   */
  claimedBy?: string;
  /**
   * A worker's first rendering of the message, when small (LIMITS.inlineSourceMaxBytes): kept in
   * this change's own UPDATE of the message, by renderingWriter's rules (not over a source
   * already kept, nor over content the retention removed), and only while the lease is held.
   */
  rendering?: KeptRendering["rendering"];
  now: number;
}

/** A delivered message's first rendering, to keep (MessagesRepository.renderingWriter). */
export interface KeptRendering {
  scope: Scope;
  id: string;
  rendering: { mime: string; text: string | null };
  /** The most bytes (as the statement carries them) the source and text may take to be kept. */
  maxBytes: number;
}

export type KeptRenderingResult = "kept" | "text_only" | "too_large";

export type BounceSuppression = Pick<NewSuppression, "email" | "reason" | "message_id" | "detail">;

export interface MessageFilters {
  status?: MessageStatus | undefined;
  /** An addressKey: compared with each recipient's email_search. */
  recipient?: string | undefined;
  tag?: string | undefined;
  /** A template slug: messages rendered from any version of it. */
  template?: string | undefined;
  createdAfter?: number | undefined;
  createdBefore?: number | undefined;
}

interface MessageRow {
  id: string;
  workspace_id: string;
  environment: Environment;
  status: MessageStatus;
  from_mailbox: string;
  to_list: string;
  cc_list: string;
  bcc_list: string;
  reply_to_list: string;
  subject: string;
  html: string | null;
  text: string | null;
  headers: string;
  attachments: string;
  tags: string;
  metadata: string;
  template_id: string | null;
  template_slug: string | null;
  template_version: number | null;
  layout_id: string | null;
  layout_slug: string | null;
  layout_version: number | null;
  scheduled_at: number | null;
  expires_at: number | null;
  idempotency_key: string | null;
  message_id_header: string;
  mime: string | null;
  content_removed_at: number | null;
  event_seq: number;
  track_opens: boolean | number;
  track_clicks: boolean | number;
  track_replies: boolean | number;
  unsubscribe: boolean | number;
  opens: number;
  clicks: number;
  replies: number;
  created_at: number;
  updated_at: number;
}

type RecipientRow = Omit<RecipientRecord, "attempts" | "updated_at" | EngagementStamp> & { message_id: string; attempts: number | string; updated_at: number | string } & Record<EngagementStamp, number | string | null>;

const SUMMARY_COLUMNS = ["id", "workspace_id", "environment", "status", "from_mailbox", "to_list", "cc_list", "bcc_list", "subject", "template_id", "template_slug", "template_version", "layout_id", "layout_slug", "layout_version", "tags", "metadata", "opens", "clicks", "replies", "scheduled_at", "created_at", "updated_at"];

export class MessagesRepository {
  constructor(
    private readonly knex: Knex,
    /** Written in the same transactions: a hard bounce's suppression, a live message's usage, events' webhook deliveries, the simulator's replies. */
    private readonly suppressions: SuppressionsRepository,
    private readonly usage: UsageRepository,
    private readonly webhooks: WebhookDeliveriesRepository,
    private readonly inbound: InboundRepository,
  ) {}

  /**
   * Stores accepted messages: message rows, recipients, tags, first events and delivery jobs,
   * as multi-row statements for the whole batch (the outbox: all or nothing with the commit).
   * A message whose Idempotency-Key already has a message in its scope is not stored again, nor
   * one the workspace's monthly quota refuses (see quotaRefusals).
   */
  readonly acceptWriter: BatchWriter<NewMessage, AcceptResult> = {
    name: "message-accept",
    write: async (trx, items) => {
      const quotas = await this.lockQuotas(trx, items);
      const holders = await this.idempotencyHolders(trx, items);
      const stored = items.filter((m) => m.idempotency_key === null || holders.get(idempotencySlot(m)) === m.id);
      const refused = quotas.size === 0 ? NO_REFUSALS : await this.quotaRefusals(trx, quotas, stored);
      const fresh = refused.size === 0 ? stored : stored.filter((m) => !refused.has(m.id));
      const rows = fresh.map(toMessageRow);
      await insertChunked(trx, "messages", rows);
      await insertChunked(trx, "message_recipients", fresh.flatMap(toRecipientRows));
      await insertChunked(trx, "message_tags", fresh.flatMap((m) => m.tags.map((tag) => ({ message_id: m.id, workspace_id: m.scope.workspaceId, environment: m.scope.environment, tag }))));
      const firstEvents = fresh.map(toFirstEventRow);
      await insertChunked(trx, "events", firstEvents);
      await this.webhooks.fanOut(trx, firstEvents.map((row) => row.id));
      await insertChunked(trx, "jobs", fresh.map((m, i) => ({ kind: "deliver", message_id: m.id, workspace_id: m.scope.workspaceId, environment: m.scope.environment, run_at: m.run_at, attempts: 0, created_at: m.created_at, content_bytes: contentSize(rows[i]!) })));
      for (const count of liveUsage(fresh)) await this.usage.increment(trx, count.workspaceId, count.day, count.messages, count.recipients);
      return items.map((m) => {
        const holder = m.idempotency_key === null ? m.id : holders.get(idempotencySlot(m))!;
        // A refused holder was not stored: the messages that would have shared its key are refused with it.
        const quotaRefused = refused.get(holder);
        return quotaRefused ? { id: m.id, existing: false, quotaRefused } : { id: holder, existing: holder !== m.id };
      });
    },
  };

  /**
   * The monthly quota of each workspace with a message to count against it, read under a lock on
   * the workspace's row (UsageRepository.lockQuota), taken before anything is written and in one
   * order across transactions. None (no statement at all) when no message carries a quota_unit.
   */
  private async lockQuotas(trx: Knex.Transaction, items: readonly NewMessage[]): Promise<Map<string, number | null>> {
    const quotas = new Map<string, number | null>();
    for (const m of items) if (m.quota_unit !== null) quotas.set(m.scope.workspaceId, null);
    for (const [workspaceId] of inLockOrder(quotas)) quotas.set(workspaceId, await this.usage.lockQuota(trx, workspaceId));
    return quotas;
  }

  /**
   * Which of the messages to store the quota refuses, by id: counting in order of submission,
   * a unit whose messages would take the month's usage (read under the lock, plus the units this
   * transaction accepted before it) past the quota is refused whole; later, smaller units may
   * still fit. Messages found stored under their Idempotency-Key were counted when stored and
   * are not among `messages`.
   */
  private async quotaRefusals(trx: Knex.Transaction, quotas: ReadonlyMap<string, number | null>, messages: readonly NewMessage[]): Promise<Map<string, QuotaRefusal>> {
    const units = new Map<string, NewMessage[]>();
    for (const m of messages) {
      if (m.quota_unit === null || m.scope.environment !== "live" || quotas.get(m.scope.workspaceId) == null) continue;
      const key = `${m.scope.workspaceId}\u0000${m.quota_unit}`;
      units.set(key, [...(units.get(key) ?? []), m]);
    }
    const used = new Map<string, number>();
    const refused = new Map<string, QuotaRefusal>();
    for (const unit of units.values()) {
      const { scope, created_at } = unit[0]!;
      const quota = quotas.get(scope.workspaceId)!;
      const month = utcDay(created_at).slice(0, 7);
      const key = `${scope.workspaceId}\u0000${month}`;
      const before = used.get(key) ?? (await this.usage.monthTotal(scope.workspaceId, month, trx)).messages;
      if (before + unit.length <= quota) {
        used.set(key, before + unit.length);
        continue;
      }
      used.set(key, before);
      for (const m of unit) refused.set(m.id, { quota, used: before, requested: unit.length });
    }
    return refused;
  }

  /** Applies processing steps (status, recipients, events with their sequence numbers, job). */
  readonly changeWriter: BatchWriter<MessageChange, void> = {
    name: "message-change",
    write: async (trx, changes) => {
      const ids = [...new Set(changes.map((c) => c.messageId))];
      // Locking reads, messages before jobs (the order cancel takes them in too): on MySQL a plain
      // read could number events from a stale sequence, or miss that a lease changed hands.
      // With whether each message's source and text are kept (not the values: a source can be
      // megabytes) and whether its content was removed, for a rendering kept with the outcome.
      const seqRows = (await trx("messages")
        .whereIn("id", ids)
        .forUpdate()
        .select("id", "event_seq", "content_removed_at", trx.raw("CASE WHEN ?? IS NULL THEN 0 ELSE 1 END AS ??", ["mime", "mime_kept"]), trx.raw("CASE WHEN ?? IS NULL THEN 0 ELSE 1 END AS ??", ["text", "text_kept"]))) as Array<{
        id: string;
        event_seq: number;
        content_removed_at: number | string | null;
        mime_kept: number | string;
        text_kept: number | string;
      }>;
      const seq = new Map(seqRows.map((row) => [row.id, Number(row.event_seq)]));
      const content = new Map(seqRows.map((row) => [row.id, { removed: row.content_removed_at !== null, mime: Number(row.mime_kept) === 1, text: Number(row.text_kept) === 1 }]));
      const leased = [...new Set(changes.filter((c) => c.claimedBy !== undefined).map((c) => c.messageId))];
      const leaseHolders = new Map<string, string | null>();
      if (leased.length > 0) {
        const jobs = (await trx("jobs").where({ kind: "deliver" }).whereIn("message_id", leased).forUpdate().select("message_id", "locked_by")) as Array<{ message_id: string; locked_by: string | null }>;
        for (const job of jobs) leaseHolders.set(job.message_id, job.locked_by);
      }
      const holdsLease = (change: MessageChange) => change.claimedBy !== undefined && leaseHolders.get(change.messageId) === change.claimedBy;
      // A worker's change was computed from the recipients as it loaded them, before a hand-off
      // that can take minutes; whatever was recorded for the message's other recipients meanwhile
      // (a late DSN turning a delivered one bounced) was written under the message's lock, which
      // this transaction now holds, and must be kept. So a worker's message status is aggregated
      // here from the recipients as they are now, the change's on top; other writers compute theirs
      // under the lock already. It needs no transition check: the recipients a worker's change
      // leaves out were settled when it loaded them (it settles every one in flight), and the only
      // move out of a settled status is delivered -> bounced, so this differs from the change's
      // status only by bounced where that said delivered: legal from wherever delivered was.
      const recipientsNow = new Map<string, Map<number, MessageStatus>>();
      const addresses = new Map<number, string>();
      const workersMessages = [...new Set(changes.filter(holdsLease).map((c) => c.messageId))];
      if (workersMessages.length > 0) {
        const rows = (await trx("message_recipients").whereIn("message_id", workersMessages).select("id", "message_id", "email", "status")) as Array<{ id: number; message_id: string; email: string; status: MessageStatus }>;
        for (const row of rows) {
          const statuses = recipientsNow.get(row.message_id) ?? new Map<number, MessageStatus>();
          statuses.set(Number(row.id), row.status);
          recipientsNow.set(row.message_id, statuses);
          addresses.set(Number(row.id), row.email);
        }
      }
      const eventRows: Record<string, unknown>[] = [];
      const suppressions: NewSuppression[] = [];
      const finishedJobs: string[] = [];
      // Each message's and recipient's new values, written together after the loop: one
      // statement per table for the batch rather than one per row (docs/performance.md).
      const messageUpdates: RowUpdate[] = [];
      const recipientUpdates: RowUpdate[] = [];
      for (const lockedChange of changes) {
        if (lockedChange.claimedBy !== undefined && !holdsLease(lockedChange)) continue;
        const change = withoutOvertaken(lockedChange, recipientsNow.get(lockedChange.messageId), addresses);
        for (const s of change.suppressions ?? []) suppressions.push({ ...s, workspace_id: change.scope.workspaceId, environment: change.scope.environment, created_at: change.now });
        let next = seq.get(change.messageId) ?? 0;
        for (const event of change.events) eventRows.push(toEventRow(change.scope, change.messageId, event, ++next));
        seq.set(change.messageId, next);
        // Kept up to date through the batch, so a later change to the same message sees this one's recipients.
        const statuses = recipientsNow.get(change.messageId);
        for (const r of change.recipients) statuses?.set(Number(r.id), r.status);
        const status = change.claimedBy !== undefined && statuses ? aggregateStatus([...statuses.values()]) : change.status;
        const update: RowUpdate["set"] = { status, event_seq: next, updated_at: change.now };
        if (change.scheduledAt !== undefined) update.scheduled_at = change.scheduledAt;
        if (change.rendering && holdsLease(change)) Object.assign(update, keptWithOutcome(change.rendering, content.get(change.messageId)));
        messageUpdates.push({ id: change.messageId, match: { workspace_id: change.scope.workspaceId }, set: update });
        const counters = Object.entries(change.counters ?? {}).filter(([, by]) => by);
        if (counters.length > 0) {
          await trx("messages").where({ id: change.messageId, workspace_id: change.scope.workspaceId }).update(Object.fromEntries(counters.map(([counter, by]) => [counter, trx.raw("?? + ?", [counter, by])])));
        }
        for (const r of change.recipients) {
          recipientUpdates.push({ id: r.id, match: { message_id: change.messageId }, set: { status: r.status, detail: r.detail, attempts: r.attempts, updated_at: change.now } });
        }
        // First times only: a stamp already set keeps its instant.
        for (const s of change.stamps ?? []) await trx("message_recipients").where({ id: s.recipientId, message_id: change.messageId }).whereNull(s.stamp).update({ [s.stamp]: s.at });
        for (const reply of change.replies ?? []) await this.inbound.insert(trx, reply);
        if (change.job.action === "delete") finishedJobs.push(change.messageId);
        if (change.job.action === "reschedule") {
          await trx("jobs").where({ kind: "deliver", message_id: change.messageId }).update({ run_at: change.job.runAt, locked_by: null, locked_until: null });
        }
      }
      await updateEach(trx, "messages", messageUpdates);
      await updateEach(trx, "message_recipients", recipientUpdates);
      // Finished messages' jobs go in one statement for the batch (as many ids as the locking read above).
      if (finishedJobs.length > 0) await trx("jobs").where({ kind: "deliver" }).whereIn("message_id", finishedJobs).delete();
      await insertChunked(trx, "events", eventRows);
      await this.webhooks.fanOut(trx, eventRows.map((row) => row.id as string));
      if (suppressions.length > 0) await this.suppressions.insertMissing(trx, suppressions);
      return changes.map(() => undefined);
    },
  };

  /**
   * Keeps a message's first rendering once the attempt's outcomes are committed (docs/delivery.md):
   * its source as `mime`, and `text` when the pipeline derived it from the html. For a rendering
   * past LIMITS.inlineSourceMaxBytes only: a smaller one is kept in the outcome's own UPDATE
   * (MessageChange.rendering), as writing every message row twice cost MariaDB 10-25 % of the
   * delivery rate. Submitted through the group commit after the outcomes, so it rides in a
   * transaction with other writes instead of costing a commit of its own per message (a fifth of
   * the delivery rate on SQLite). Its own statement, never the outcomes': the source is not
   * bounded by the accept limit (it is the bodies encoded again, with the derived text besides),
   * and a statement past MySQL's max_allowed_packet loses its connection. So it is measured first
   * (renderingBytes): past `maxBytes` the source is not kept, the derived text alone when it
   * fits, and the statement stays within the packet.
   * Nothing is written to a message whose source is already kept (a retry's rendering does not
   * replace the first) or whose content the retention removed meanwhile.
   */
  readonly renderingWriter: BatchWriter<KeptRendering, KeptRenderingResult> = {
    name: "message-rendering",
    write: async (trx, renderings) => {
      const results: KeptRenderingResult[] = [];
      for (const rendering of renderings) results.push(await keepRendering(trx, rendering));
      return results;
    },
  };

  async find(scope: Scope, id: string): Promise<MessageRecord | undefined> {
    const [record] = await this.findMany(scope, [id]);
    return record;
  }

  /** Loads messages with their recipients, in the order of `ids`, skipping unknown ones. */
  async findMany(scope: Scope, ids: readonly string[]): Promise<MessageRecord[]> {
    if (ids.length === 0) return [];
    const rows = (await this.knex("messages").whereIn("id", ids).andWhere({ workspace_id: scope.workspaceId, environment: scope.environment })) as MessageRow[];
    const recipients = (await this.knex("message_recipients").whereIn("message_id", rows.map((r) => r.id)).orderBy(["message_id", "position"])) as RecipientRow[];
    const byMessage = new Map<string, RecipientRecord[]>();
    for (const r of recipients) {
      const list = byMessage.get(r.message_id) ?? [];
      list.push(toRecipientRecord(r));
      byMessage.set(r.message_id, list);
    }
    const byId = new Map(rows.map((row) => [row.id, toRecord(row, byMessage.get(row.id) ?? [])]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  async list(scope: Scope, filters: MessageFilters, page: PageRequest): Promise<Page<MessageSummary>> {
    const query = this.knex("messages as m")
      .select(SUMMARY_COLUMNS.map((c) => `m.${c}`))
      .where({ "m.workspace_id": scope.workspaceId, "m.environment": scope.environment });
    if (filters.status) query.andWhere("m.status", filters.status);
    if (filters.template) query.andWhere("m.template_slug", filters.template);
    if (filters.createdAfter !== undefined) query.andWhere("m.created_at", ">=", filters.createdAfter);
    if (filters.createdBefore !== undefined) query.andWhere("m.created_at", "<", filters.createdBefore);
    if (filters.recipient) {
      query.whereExists((q) =>
        q
          .select(this.knex.raw("1"))
          .from("message_recipients as r")
          .whereRaw("r.message_id = m.id")
          .andWhere({ "r.workspace_id": scope.workspaceId, "r.environment": scope.environment, "r.email_search": filters.recipient! }),
      );
    }
    if (filters.tag) {
      query.whereExists((q) =>
        q
          .select(this.knex.raw("1"))
          .from("message_tags as t")
          .whereRaw("t.message_id = m.id")
          .andWhere({ "t.workspace_id": scope.workspaceId, "t.environment": scope.environment, "t.tag": filters.tag! }),
      );
    }
    return paginate<MessageRow, MessageSummary>(query, "m.id", (row) => row.id, page, "desc", toSummary);
  }

  /**
   * Runs `work` in a transaction holding the message's row lock and its delivery job's (MySQL;
   * SQLite has one writer), with the job's lease: until when a worker holds it, or null.
   */
  async withLockedMessage<T>(
    scope: Scope,
    id: string,
    work: (trx: Knex.Transaction, record: MessageRecord | undefined, leasedUntil: number | null) => Promise<T>,
  ): Promise<T> {
    return this.lockMessage({ id, workspace_id: scope.workspaceId, environment: scope.environment }, work);
  }

  /**
   * The same, for a message named by a signed token (a tracking link, a VERP or reply address)
   * that carries no tenant: the signature is what scopes it.
   */
  async withLockedMessageById<T>(id: string, work: (trx: Knex.Transaction, record: MessageRecord | undefined) => Promise<T>): Promise<T> {
    return this.lockMessage({ id }, (trx, record) => work(trx, record));
  }

  private async lockMessage<T>(where: Record<string, string>, work: (trx: Knex.Transaction, record: MessageRecord | undefined, leasedUntil: number | null) => Promise<T>): Promise<T> {
    return this.knex.transaction(async (trx) => {
      const row = (await trx("messages").where(where).forUpdate().first()) as MessageRow | undefined;
      if (!row) return work(trx, undefined, null);
      const recipients = (await trx("message_recipients").where({ message_id: row.id }).orderBy("position")) as RecipientRow[];
      const job = (await trx("jobs").where({ kind: "deliver", message_id: row.id }).forUpdate().first("locked_by", "locked_until")) as { locked_by: string | null; locked_until: number | string | null } | undefined;
      const leasedUntil = job?.locked_by ? toNumberOrNull(job.locked_until) : null;
      return work(trx, toRecord(row, recipients.map(toRecipientRecord)), leasedUntil);
    });
  }

  /** How many events of `type` a recipient of a message has, inside a caller's transaction. */
  async countRecipientEvents(trx: Knex.Transaction, messageId: string, recipient: string, type: string): Promise<number> {
    const row = (await trx("events").where({ message_id: messageId, recipient, type }).count({ n: "*" }).first()) as { n: number | string } | undefined;
    return Number(row?.n ?? 0);
  }

  /** Applies one change inside a caller's transaction (see withLockedMessage). */
  async applyChange(trx: Knex.Transaction, change: MessageChange): Promise<void> {
    await this.changeWriter.write(trx, [change]);
  }

  /**
   * The messages stored under these Idempotency-Keys since `windowStart`, by key: those of single
   * requests, or (`batched`) of batches' messages (`<key>#<index>`).
   */
  async storedUnder(scope: Scope, { batched, keys, windowStart }: { batched: boolean; keys: readonly string[]; windowStart: number }): Promise<Map<string, string>> {
    if (keys.length === 0) return new Map();
    const rows = (await this.knex("messages")
      .where({ workspace_id: scope.workspaceId, environment: scope.environment, idempotency_batched: batched })
      .whereIn("idempotency_key", keys)
      .andWhere("created_at", ">=", windowStart)
      .select("idempotency_key", "id")) as Array<{ idempotency_key: string; id: string }>;
    return new Map(rows.map((row) => [row.idempotency_key, row.id]));
  }

  /**
   * Which message holds each Idempotency-Key of the batch: one already stored within the key's
   * window, else the batch's first message with that key (so two attempts in one batch cannot
   * both be inserted). A stored holder past the window gives its key up: the key was forgotten
   * when its retention ended, and the unique key allows one holder.
   */
  private async idempotencyHolders(trx: Knex.Transaction, items: readonly NewMessage[]): Promise<Map<string, string>> {
    const holders = new Map<string, string>();
    for (const m of items) {
      if (m.idempotency_key === null || holders.has(idempotencySlot(m))) continue;
      const slot = { workspace_id: m.scope.workspaceId, environment: m.scope.environment, idempotency_batched: m.idempotency_batched, idempotency_key: m.idempotency_key };
      const row = (await trx("messages").where(slot).first("id", "created_at")) as { id: string; created_at: number | string } | undefined;
      if (row && toNumber(row.created_at) >= m.idempotency_window_start) {
        holders.set(idempotencySlot(m), row.id);
        continue;
      }
      if (row) await trx("messages").where({ ...slot, id: row.id }).update({ idempotency_key: null });
      holders.set(idempotencySlot(m), m.id);
    }
    return holders;
  }

  /**
   * Removes the content of up to `batch.messages` of a workspace's settled messages created
   * before `before` that still hold it, oldest first: html, text, the MIME source and the
   * attachments' bytes (their names, types, sizes and content ids stay). Answers how many it
   * removed, and whether any may be left (`more`: then call again).
   *
   * Attachments are stored as base64 inside one JSON column, so removing their bytes means
   * loading them; loading a whole batch's at once (and parsing them) took a heap of twice the
   * batch's attachments, and 200 messages with a few MiB each crashed the worker on every round.
   * So the batch is chosen by the column's size alone (OCTET_LENGTH: MySQL's LENGTH; SQLite,
   * from 3.43, answers it without reading the value), and the messages with attachments are
   * loaded and rewritten in parts of at most `batch.attachmentBytes` (a larger message alone),
   * each in its own short transaction. Messages without attachments (most) take one statement.
   */
  async removeContent(workspaceId: string, before: number, now: number, batch: { messages: number; attachmentBytes: number }): Promise<{ removed: number; more: boolean }> {
    const rows = (await this.knex("messages")
      .select("id", this.knex.raw("OCTET_LENGTH(attachments) AS attachment_bytes"))
      .where({ workspace_id: workspaceId })
      .whereNull("content_removed_at")
      .where("created_at", "<", before)
      .whereIn("status", TERMINAL_STATUSES)
      .orderBy("created_at")
      .limit(batch.messages)) as Array<{ id: string; attachment_bytes: number | string }>;
    const emptied = { html: null, text: null, mime: null, content_removed_at: now };
    const plain = rows.filter((row) => toNumber(row.attachment_bytes) <= NO_ATTACHMENTS.length).map((row) => row.id);
    // Guarded by content_removed_at: what another worker removed first is not removed twice.
    let removed = plain.length === 0 ? 0 : await this.knex("messages").where({ workspace_id: workspaceId }).whereIn("id", plain).whereNull("content_removed_at").update(emptied);
    for (const part of partsOfAtMost(rows.filter((row) => toNumber(row.attachment_bytes) > NO_ATTACHMENTS.length), batch.attachmentBytes)) {
      removed += await this.knex.transaction(async (trx) => {
        // A locking read (MySQL): a worker that chose the same messages waits here, then finds
        // them done, instead of loading their bytes a second time.
        const loaded = (await trx("messages").where({ workspace_id: workspaceId }).whereIn("id", part).whereNull("content_removed_at").forUpdate().select("id", "attachments")) as Array<{ id: string; attachments: string }>;
        // Messages sent with the same files keep the same remainder: one update for each.
        const byRemainder = new Map<string, string[]>();
        for (const row of loaded) {
          const remainder = JSON.stringify(parseJson<StoredAttachment[]>(row.attachments).map((a) => ({ ...a, content: "" })));
          byRemainder.set(remainder, [...(byRemainder.get(remainder) ?? []), row.id]);
        }
        loaded.length = 0; // the bytes are not needed while the updates run
        let count = 0;
        for (const [attachments, ids] of byRemainder) count += await trx("messages").where({ workspace_id: workspaceId }).whereIn("id", ids).whereNull("content_removed_at").update({ ...emptied, attachments });
        return count;
      });
    }
    return { removed, more: rows.length === batch.messages };
  }

  static toWire(record: MessageRecord): Message {
    return {
      id: record.id,
      object: "message",
      environment: record.scope.environment,
      status: record.status,
      from: record.from,
      to: record.to,
      cc: record.cc,
      bcc: record.bcc,
      reply_to: record.reply_to,
      subject: record.subject,
      template: record.template,
      html: record.html,
      text: record.text,
      headers: record.headers,
      attachments: record.attachments.map(({ filename, content_type, size, content_id }) => ({ filename, content_type, size, content_id })),
      tags: record.tags,
      metadata: record.metadata,
      scheduled_at: toIsoOrNull(record.scheduled_at),
      expires_at: toIsoOrNull(record.expires_at),
      idempotency_key: record.idempotency_key,
      message_id_header: record.message_id_header,
      mime: record.mime,
      content_removed_at: toIsoOrNull(record.content_removed_at),
      tracking: record.tracking,
      engagement: record.engagement,
      recipients: record.recipients.map((r) => ({
        email: r.email,
        name: r.name,
        type: r.type,
        status: r.status,
        detail: r.detail,
        updated_at: toIso(r.updated_at),
        ...(Object.fromEntries(ENGAGEMENT_STAMPS.map((stamp) => [stamp, toIsoOrNull(r[stamp])])) as Record<EngagementStamp, string | null>),
      })),
      created_at: toIso(record.created_at),
      updated_at: toIso(record.updated_at),
    };
  }
}

/**
 * What a rendering's source and derived text take in the statement that keeps them (quoted,
 * escaped: valueBytes), each: the one measure of a rendering, for renderingWriter's budget and
 * for the worker's choice of keeping it with the outcome (MessageChange.rendering).
 */
export function renderingBytes(rendering: KeptRendering["rendering"]): { mime: number; text: number } {
  return { mime: valueBytes(rendering.mime), text: rendering.text === null ? 0 : valueBytes(rendering.text) };
}

/**
 * The columns a worker's rendering sets in its outcome's UPDATE (MessageChange.rendering), by
 * keepRendering's rules: nothing when the retention removed the content or any column it would
 * set is kept already (a later attempt's rendering never replaces the first). `kept` is what the
 * locking read found, updated here so that a later change to the message in the batch sees it.
 */
function keptWithOutcome(rendering: KeptRendering["rendering"], kept: { removed: boolean; mime: boolean; text: boolean } | undefined): { mime?: string; text?: string } {
  const set = renderingColumns(rendering);
  const columns = Object.keys(set) as Array<keyof typeof set>;
  if (kept === undefined || kept.removed || columns.some((column) => kept[column])) return {};
  for (const column of columns) kept[column] = true;
  return set;
}

/** The columns a rendering is kept in: its source, and its text when the pipeline derived it. */
function renderingColumns(rendering: KeptRendering["rendering"]): { mime: string; text?: string } {
  return rendering.text === null ? { mime: rendering.mime } : { mime: rendering.mime, text: rendering.text };
}

/** Writes what fits of one rendering (MessagesRepository.renderingWriter). */
async function keepRendering(trx: Knex.Transaction, { scope, id, rendering, maxBytes }: KeptRendering): Promise<KeptRenderingResult> {
  const { mime, text } = renderingBytes(rendering);
  let set: { mime?: string; text?: string };
  let kept: KeptRenderingResult;
  if (mime + text <= maxBytes) [set, kept] = [renderingColumns(rendering), "kept"];
  else if (rendering.text !== null && text <= maxBytes) [set, kept] = [{ text: rendering.text }, "text_only"];
  else return "too_large";
  const unset = Object.keys(set);
  await trx("messages")
    .where({ id, workspace_id: scope.workspaceId, environment: scope.environment })
    .whereNull("content_removed_at")
    .where((q) => {
      for (const column of unset) q.whereNull(column);
    })
    .update(set);
  return kept;
}

/** Live messages and recipients per workspace and UTC day; sandbox mail never counts. */
function liveUsage(messages: readonly NewMessage[]): Array<{ workspaceId: string; day: string; messages: number; recipients: number }> {
  const counts = new Map<string, { workspaceId: string; day: string; messages: number; recipients: number }>();
  for (const m of messages) {
    if (m.scope.environment !== "live") continue;
    const day = utcDay(m.created_at);
    const key = `${m.scope.workspaceId}\u0000${day}`;
    const count = counts.get(key) ?? { workspaceId: m.scope.workspaceId, day, messages: 0, recipients: 0 };
    count.messages += 1;
    count.recipients += m.recipients.length;
    counts.set(key, count);
  }
  // A fixed order, so concurrent transactions take the counter rows' locks in the same order.
  return inLockOrder(counts).map(([, count]) => count);
}

/**
 * A worker's change without the recipients another writer settled while its attempt was in
 * flight: it only attempts recipients it loaded in flight, so one settled now was settled
 * meanwhile (a DSN bouncing it during its own retry's hand-off). That status stands, as the
 * state machine has no way out of it; the attempt's outcome for the recipient, the events that
 * say so and the suppression it would add are dropped. Whether the attempt's outcome equals the
 * stored status does not matter: a retry refused with 5xx after a DSN bounced the recipient
 * would otherwise bounce it a second time, over the DSN's detail, and suppress it even when the
 * DSN said the bounce was soft.
 */
function withoutOvertaken(change: MessageChange, statusesNow: ReadonlyMap<number, MessageStatus> | undefined, addresses: ReadonlyMap<number, string>): MessageChange {
  if (statusesNow === undefined) return change;
  const overtaken = change.recipients.filter((r) => {
    const now = statusesNow.get(r.id);
    return now !== undefined && isTerminal(now);
  });
  if (overtaken.length === 0) return change;
  const ids = new Set(overtaken.map((r) => r.id));
  const emails = new Set(overtaken.map((r) => addresses.get(r.id)));
  return {
    ...change,
    recipients: change.recipients.filter((r) => !ids.has(r.id)),
    events: change.events.filter((e) => e.recipient === null || !emails.has(e.recipient)),
    suppressions: change.suppressions?.filter((s) => !emails.has(s.email)),
  };
}

const NO_REFUSALS: ReadonlyMap<string, QuotaRefusal> = new Map();

/** What a message without attachments stores in the column. */
const NO_ATTACHMENTS = JSON.stringify([]);

/** Rows' ids in order, in consecutive parts whose sizes add up to at most `limit` each (a larger row alone). */
function partsOfAtMost(rows: ReadonlyArray<{ id: string; attachment_bytes: number | string }>, limit: number): string[][] {
  const parts: string[][] = [];
  let part: string[] = [];
  let size = 0;
  for (const row of rows) {
    const bytes = toNumber(row.attachment_bytes);
    if (part.length > 0 && size + bytes > limit) {
      parts.push(part);
      part = [];
      size = 0;
    }
    part.push(row.id);
    size += bytes;
  }
  if (part.length > 0) parts.push(part);
  return parts;
}

const idempotencySlot = (m: NewMessage): string => `${m.scope.workspaceId}\u0000${m.scope.environment}\u0000${m.idempotency_batched ? "batch" : "single"}\u0000${m.idempotency_key ?? m.id}`;

/**
 * A stored message's content (subject, bodies, attachments as base64 JSON), in characters: what
 * loading it costs, roughly, and so what a delivery job weighs against a worker's byte budget.
 * Migration 008 measures queued messages the same way.
 */
function contentSize(row: { subject: string; html: string | null; text: string | null; attachments: string }): number {
  return row.subject.length + (row.html?.length ?? 0) + (row.text?.length ?? 0) + row.attachments.length;
}

function toMessageRow(m: NewMessage) {
  return {
    id: m.id,
    workspace_id: m.scope.workspaceId,
    environment: m.scope.environment,
    status: m.status,
    from_mailbox: m.from,
    to_list: JSON.stringify(m.to),
    cc_list: JSON.stringify(m.cc),
    bcc_list: JSON.stringify(m.bcc),
    reply_to_list: JSON.stringify(m.reply_to),
    subject: m.subject,
    html: m.html,
    text: m.text,
    headers: JSON.stringify(m.headers),
    attachments: JSON.stringify(m.attachments),
    tags: JSON.stringify(m.tags),
    metadata: JSON.stringify(m.metadata),
    template_id: m.template?.id ?? null,
    template_slug: m.template?.slug ?? null,
    template_version: m.template?.version ?? null,
    layout_id: m.template?.layout?.id ?? null,
    layout_slug: m.template?.layout?.slug ?? null,
    layout_version: m.template?.layout?.version ?? null,
    scheduled_at: m.scheduled_at,
    expires_at: m.expires_at,
    idempotency_key: m.idempotency_key,
    idempotency_batched: m.idempotency_batched,
    message_id_header: m.message_id_header,
    mime: null,
    event_seq: 1,
    track_opens: m.tracking.opens,
    track_clicks: m.tracking.clicks,
    track_replies: m.tracking.replies,
    unsubscribe: m.tracking.unsubscribe,
    created_at: m.created_at,
    updated_at: m.created_at,
  };
}

function toRecipientRows(m: NewMessage) {
  return m.recipients.map((r, position) => ({
    message_id: m.id,
    workspace_id: m.scope.workspaceId,
    environment: m.scope.environment,
    position,
    type: r.type,
    email: r.email,
    email_search: r.email.toLowerCase(),
    name: r.name,
    status: m.status,
    detail: null,
    attempts: 0,
    updated_at: m.created_at,
  }));
}

function toFirstEventRow(m: NewMessage) {
  const type: EventType = m.status === "scheduled" ? "message.scheduled" : "message.queued";
  return toEventRow(m.scope, m.id, { id: m.first_event_id, type, recipient: null, from_status: null, to_status: m.status, data: m.scheduled_at === null ? {} : { scheduled_at: toIso(m.scheduled_at) }, created_at: m.created_at }, 1);
}

function toEventRow(scope: Scope, messageId: string, event: NewEvent, sequence: number) {
  return {
    id: event.id,
    workspace_id: scope.workspaceId,
    environment: scope.environment,
    message_id: messageId,
    recipient: event.recipient,
    type: event.type,
    sequence,
    from_status: event.from_status,
    to_status: event.to_status,
    data: JSON.stringify(event.data),
    // Kept beside the data so that metrics count proxies and scanners apart in SQL (migration 014).
    automated: event.data.machine_open === true || event.data.machine_click === true,
    // Likewise hard and soft bounces (migration 018).
    bounce_type: event.type === "message.bounced" && (event.data.bounce_type === "hard" || event.data.bounce_type === "soft") ? event.data.bounce_type : null,
    created_at: event.created_at,
  };
}

function toRecord(row: MessageRow, recipients: RecipientRecord[]): MessageRecord {
  return {
    id: row.id,
    scope: { workspaceId: row.workspace_id, environment: row.environment },
    status: row.status,
    from: row.from_mailbox,
    to: parseJson(row.to_list),
    cc: parseJson(row.cc_list),
    bcc: parseJson(row.bcc_list),
    reply_to: parseJson(row.reply_to_list),
    subject: row.subject,
    html: row.html,
    text: row.text,
    headers: parseJson(row.headers),
    attachments: parseJson(row.attachments),
    tags: parseJson(row.tags),
    metadata: parseJson(row.metadata),
    template: templateOf(row),
    tracking: { opens: Boolean(row.track_opens), clicks: Boolean(row.track_clicks), replies: Boolean(row.track_replies), unsubscribe: Boolean(row.unsubscribe) },
    engagement: engagementOf(row),
    scheduled_at: toNumberOrNull(row.scheduled_at),
    expires_at: toNumberOrNull(row.expires_at),
    idempotency_key: row.idempotency_key,
    message_id_header: row.message_id_header,
    mime: row.mime,
    content_removed_at: toNumberOrNull(row.content_removed_at),
    event_seq: Number(row.event_seq),
    created_at: toNumber(row.created_at),
    updated_at: toNumber(row.updated_at),
    recipients,
  };
}

function toSummary(row: MessageRow): MessageSummary {
  return {
    id: row.id,
    object: "message",
    environment: row.environment,
    status: row.status,
    from: row.from_mailbox,
    to: parseJson(row.to_list),
    cc: parseJson(row.cc_list),
    bcc: parseJson(row.bcc_list),
    subject: row.subject,
    template: templateOf(row),
    tags: parseJson(row.tags),
    metadata: parseJson(row.metadata),
    engagement: engagementOf(row),
    scheduled_at: toIsoOrNull(toNumberOrNull(row.scheduled_at)),
    created_at: toIso(toNumber(row.created_at)),
    updated_at: toIso(toNumber(row.updated_at)),
  };
}

function templateOf(row: MessageRow): MessageTemplateRef | null {
  if (row.template_id === null || row.template_slug === null) return null;
  const layout = row.layout_id === null || row.layout_slug === null ? null : { id: row.layout_id, slug: row.layout_slug, version: Number(row.layout_version) };
  return { id: row.template_id, slug: row.template_slug, version: Number(row.template_version), layout };
}

function engagementOf(row: Pick<MessageRow, "opens" | "clicks" | "replies">): MessageEngagement {
  return { opens: Number(row.opens), clicks: Number(row.clicks), replies: Number(row.replies) };
}

function toRecipientRecord(r: RecipientRow): RecipientRecord {
  return {
    id: r.id,
    position: r.position,
    type: r.type,
    email: r.email,
    name: r.name,
    status: r.status,
    detail: r.detail,
    attempts: Number(r.attempts),
    updated_at: toNumber(r.updated_at),
    opened_at: toNumberOrNull(r.opened_at),
    clicked_at: toNumberOrNull(r.clicked_at),
    replied_at: toNumberOrNull(r.replied_at),
    complained_at: toNumberOrNull(r.complained_at),
    unsubscribed_at: toNumberOrNull(r.unsubscribed_at),
  };
}
