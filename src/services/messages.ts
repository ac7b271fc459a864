import { toIso, toIsoOrNull, type Clock } from "../domain/clock.js";
import { addressKey, domainOf } from "../domain/addresses.js";
import { NO_ENGAGEMENT_STAMPS } from "../domain/engagement.js";
import { BatchRejectedError, ConflictError, DomainError, NotFoundError, QuotaExceededError, RecipientNotAllowedError, SenderDomainNotVerifiedError, SenderNotAllowedError, ValidationError, type FieldError } from "../domain/errors.js";
import type { Principal } from "../domain/environments.js";
import { newId } from "../domain/ids.js";
import { outsideRestrictions } from "../domain/key-restrictions.js";
import { aggregateStatus, CANCELABLE, moveAggregate, transition } from "../domain/message-status.js";
import type { GroupCommit } from "../db/group-commit.js";
import type { Page, PageRequest } from "../db/pagination.js";
import type { EventFilters, EventsRepository } from "../db/repositories/events.js";
import { MessagesRepository, type AcceptResult, type MessageFilters, type MessageRecord, type MessageTemplateRef, type MessageTracking, type NewMessage } from "../db/repositories/messages.js";
import type { WorkspacesRepository } from "../db/repositories/workspaces.js";
import { scopeOf } from "./api-keys.js";
import { checkedAttachments, messageIdHeader, prepareMessage, resolveTracking, scheduledTime, storedMessageProblems, type DomainTrackingDefaults, type MessageInput, type PreparedContent } from "./message-input.js";
import { AttachmentUrls, type FetchBudget } from "./attachment-urls.js";
import type { RenderedForMessage } from "./templates.js";
import { UsageService } from "./usage.js";
import type { components } from "../../generated/v1.js";

type Message = components["schemas"]["Message"];
type MessageSummary = components["schemas"]["MessageSummary"];
type Event = components["schemas"]["Event"];
type CreateMessageRequest = components["schemas"]["CreateMessageRequest"];
type RescheduleMessageRequest = components["schemas"]["RescheduleMessageRequest"];
type MessageTemplateInput = components["schemas"]["MessageTemplateInput"];

/** What the accept path needs to know about a workspace's sending domains and quota. */
export interface SendingPolicy {
  /** Whether the workspace has `domain` and it is verified (live mail may only use those). */
  domainStatus(workspaceId: string, domain: string): Promise<"verified" | "unverified" | "unknown">;
  /**
   * Throws (429 monthly_quota_exceeded) when `messages` more live messages would pass the quota;
   * answers whether the workspace has one (its messages are then checked again as they are stored).
   */
  assertWithinQuota(workspaceId: string, messages: number, now: number): Promise<boolean>;
  /** The tracking defaults of the workspace's sending domain of that name; null when it has none. */
  domainTracking(workspaceId: string, domain: string): Promise<DomainTrackingDefaults | null>;
}

/** What a request's messages may take from their workspace. */
interface WorkspaceDefaults {
  defaultFrom: string | null;
  tracking: MessageTracking;
}

/** The fields a template gives a message. */
const RENDERED = new Set(["/subject", "/html", "/text"]);

const TRACKING_OPTIONS = ["track_opens", "track_clicks", "track_replies", "unsubscribe"] as const;
const NO_TRACKING: MessageTracking = { opens: false, clicks: false, replies: false, unsubscribe: false };

/** Renders a message's `template` (TemplatesService): problems point into the message request. */
export interface MessageTemplates {
  renderForMessage(workspaceId: string, input: MessageTemplateInput): Promise<RenderedForMessage>;
}

export interface MessagesServiceSettings {
  /** How long an Idempotency-Key is remembered (IdempotencySettings.retentionHours). */
  idempotencyRetentionHours: number;
  /** The longest a message is retried after it is due (DELIVERY_LIFETIME_SECONDS). */
  deliveryLifetimeMs: number;
}

/** One message of a batch: its request, or the error its shape already failed with. */
export type BatchInput = CreateMessageRequest | DomainError;

/** One message of a batch once checked: ready to store, or the error it was refused with. */
interface PreparedItem {
  index: number;
  message: NewMessage | null;
  error: DomainError | null;
}

/** A message checked in full but for its files given by URL (MessagesService.unfetched). */
interface Unfetched {
  input: CreateMessageRequest;
  message: NewMessage;
  content: PreparedContent;
}

/**
 * The Idempotency-Key a message is stored under: the request's own, or for a batch's message
 * `<key>#<index>`, kept apart from a single message sent with that literal key.
 */
interface MessageIdempotency {
  key: string;
  batched: boolean;
}

export interface BatchOutcome {
  index: number;
  message: Message | null;
  /**
   * Why the message was refused: a DomainError, or in a permissive batch any other error its
   * storing failed with (answered as that item's 5xx, so that the messages stored beside it are
   * still answered as stored).
   */
  error: unknown;
}

export class MessagesService {
  constructor(
    private readonly messages: MessagesRepository,
    private readonly events: EventsRepository,
    private readonly workspaces: WorkspacesRepository,
    private readonly policy: SendingPolicy,
    private readonly groupCommit: GroupCommit,
    private readonly clock: Clock,
    /** Called after a message is durably accepted (wakes an in-process worker). */
    private readonly onAccepted: () => void,
    private readonly settings: MessagesServiceSettings,
    private readonly templates: MessageTemplates,
    private readonly attachmentUrls: AttachmentUrls,
  ) {}

  /**
   * Validates, then stores the message, its recipients, its first event and its delivery job in
   * one transaction (group-committed). Resolves only once that is durable: the 202 promise.
   * `resumed`: the request took its Idempotency-Key over from an earlier attempt that never
   * answered (it crashed, or outran the key's lock); what that attempt stored is answered first.
   * One request of AttachmentUrls.forRequest, whichever door calls it.
   */
  async create(principal: Principal, input: CreateMessageRequest, idempotencyKey: string | null, { resumed = false } = {}): Promise<Message> {
    return this.attachmentUrls.forRequest(async () => {
      if (resumed && idempotencyKey !== null) {
        const earlier = await this.acceptedUnder(principal, idempotencyKey);
        if (earlier !== null) return this.get(principal, earlier);
      }
      return this.accept(principal, await this.checked(principal, input, idempotencyKey));
    });
  }

  /**
   * The id of the message a createMessage under this Idempotency-Key already stored within the
   * key's window, else null. Asked before a resent message is checked again (by the SMTP door,
   * and by `create` for a resumed request): checked anew, it could be refused (its scheduled_at
   * or expires_at passed meanwhile, its domain unverified, an attachment URL expired) though its
   * first copy was stored and is being sent, and the client would give up on mail that goes out.
   */
  async acceptedUnder(principal: Principal, idempotencyKey: string): Promise<string | null> {
    return (await this.storedEarlier(principal, { batched: false, keys: [idempotencyKey] })).get(idempotencyKey) ?? null;
  }

  private storedEarlier(principal: Principal, slots: { batched: boolean; keys: readonly string[] }): Promise<Map<string, string>> {
    return this.messages.storedUnder(scopeOf(principal), { ...slots, windowStart: this.idempotencyWindowStart(this.clock.now()) });
  }

  /**
   * Runs every check `create` runs and answers the message as `create` would store it, storing
   * nothing and counting nothing: the dry run behind previewMessage. Its files are held by the
   * caller's request: MessagePreviewService.preview runs it within AttachmentUrls.forRequest.
   */
  async check(principal: Principal, input: CreateMessageRequest): Promise<MessageRecord> {
    return acceptedRecord(await this.checked(principal, input, null));
  }

  private async checked(principal: Principal, input: CreateMessageRequest, idempotencyKey: string | null): Promise<NewMessage> {
    const now = this.clock.now();
    const item = await this.unfetched(principal, input, idempotencyKey === null ? null : { key: idempotencyKey, batched: false }, now, await this.workspaceDefaults(principal, [input]));
    // The quota before the files: a message it refuses fetches nothing (docs/api.md#attachments-by-url).
    if (principal.environment === "live") await this.countAgainstQuota(principal, [item.message], [], now, this.acceptedEarlier(principal, { batched: false, keys: keysOf([item.message]) }));
    return this.fetched(item, this.attachmentUrls.budget());
  }

  /**
   * Up to 100 messages, each validated and accepted on its own (one refused message does not
   * stop the others; with `strict`, it stops them all), all durable before the answer. Under an Idempotency-Key each message
   * carries `<key>#<index>`, so a retried batch whose first attempt crashed after storing some
   * of its messages finds them instead of sending them again. One request of
   * AttachmentUrls.forRequest, whichever door calls it: its accepted messages' files are held
   * until all are stored.
   */
  async createBatch(principal: Principal, inputs: readonly BatchInput[], idempotencyKey: string | null, options: { strict?: boolean; resumed?: boolean } = {}): Promise<BatchOutcome[]> {
    return this.attachmentUrls.forRequest(() => this.batch(principal, inputs, idempotencyKey, options));
  }

  private async batch(principal: Principal, inputs: readonly BatchInput[], idempotencyKey: string | null, { strict = false, resumed = false }: { strict?: boolean; resumed?: boolean }): Promise<BatchOutcome[]> {
    const now = this.clock.now();
    const slotOf = (index: number) => `${idempotencyKey}#${index}`;
    // A resumed request (see create) answers what its earlier attempt stored as it was stored,
    // before anything is checked again, and runs only the rest.
    const stored = resumed && idempotencyKey !== null ? await this.storedEarlier(principal, { batched: true, keys: inputs.map((_, index) => slotOf(index)) }) : new Map<string, string>();
    const earlier = [...inputs.keys()].flatMap((index) => {
      const id = stored.get(slotOf(index));
      return id === undefined ? [] : [this.get(principal, id).then((message): BatchOutcome => ({ index, message, error: null }))];
    });
    const rest = [...inputs.entries()].filter(([index]) => !stored.has(slotOf(index)));
    const defaults = await this.workspaceDefaults(principal, rest.flatMap(([, input]) => (input instanceof DomainError ? [] : [input])));
    // One budget for the whole batch: 100 messages each fetching the limit would hold 100 times it.
    const fetchBudget = this.attachmentUrls.budget();
    const idempotencyOf = (index: number): MessageIdempotency | null => (idempotencyKey === null ? null : { key: slotOf(index), batched: true });
    let prepared: PreparedItem[];
    if (strict) {
      // Every message is checked, and the quota asked for all of them, before any file is fetched:
      // a batch that one message's problem refuses fetches nothing (docs/api.md#attachments-by-url).
      const unfetched = await this.eachRefusable(rest, (index, input) => this.unfetched(principal, input, idempotencyOf(index), now, defaults));
      await this.assertWholeBatch(principal, unfetched.map(({ index, item, error }) => ({ index, message: item?.message ?? null, error })), now);
      prepared = (await this.eachRefusable(unfetched.map(({ index, item }) => [index, item!] as const), (_, item) => this.fetched(item, fetchBudget))).map(({ index, item, error }) => ({ index, message: item, error }));
      await this.assertWholeBatch(principal, prepared, now, { quota: false });
    } else {
      // Message by message, in order: checked, counted against the quota on top of the batch's
      // messages before it, then its files fetched. So a message the quota refuses fetches
      // nothing, the quota stops exactly at the limit (the batch's own commits cannot be counted
      // twice), and a message refused for its files takes none of it from the messages after it.
      const counted: NewMessage[] = [];
      // Every slot the batch may count, read at most once: its messages are built one by one.
      const acceptedEarlier = this.acceptedEarlier(principal, { batched: true, keys: idempotencyKey === null ? [] : rest.map(([index]) => slotOf(index)) });
      const step = async (index: number, input: CreateMessageRequest): Promise<NewMessage> => {
        const item = await this.unfetched(principal, input, idempotencyOf(index), now, defaults);
        const fresh = principal.environment === "live" ? await this.countAgainstQuota(principal, [item.message], counted, now, acceptedEarlier) : [];
        const message = await this.fetched(item, fetchBudget);
        counted.push(...fresh);
        return message;
      };
      prepared = (await this.eachRefusable(rest, step)).map(({ index, item, error }) => ({ index, message: item, error }));
    }
    // The accepted messages share group commits; every one is durable before the answer. A strict
    // batch's share one, where the quota takes all of them or none.
    const together = strict ? this.acceptTogether(principal, prepared.flatMap(({ message }) => (message === null ? [] : [message]))) : null;
    const outcomes = await Promise.all([
      ...earlier,
      ...prepared.map(async ({ index, message, error }, i): Promise<BatchOutcome> => {
        if (message === null) return { index, message, error };
        try {
          return { index, message: await (together?.[i] ?? this.accept(principal, message)), error: null };
        } catch (refusal) {
          // A strict batch (whose messages are all prepared: i matches) is refused whole. In a
          // permissive one, the quota, checked again as the messages are stored, answers a message
          // on its own, and so does any other failure to store it: its siblings may be stored
          // already (in other group commits), and a 5xx for the request would hide that they are.
          if (strict) throw refusal;
          return { index, message: null, error: refusal };
        }
      }),
    ]);
    return outcomes.sort((a, b) => a.index - b.index);
  }

  /** `step` run on each item in order; a DomainError is that item's refusal, anything else fails the request. */
  private async eachRefusable<I, R>(items: ReadonlyArray<readonly [number, I | DomainError]>, step: (index: number, item: I) => Promise<R>): Promise<Array<{ index: number; item: R | null; error: DomainError | null }>> {
    const results: Array<{ index: number; item: R | null; error: DomainError | null }> = [];
    for (const [index, item] of items) {
      try {
        if (item instanceof DomainError) throw item;
        results.push({ index, item: await step(index, item), error: null });
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        results.push({ index, item: null, error });
      }
    }
    return results;
  }

  /**
   * A strict batch is all or nothing: one refused message refuses it, and the quota must hold all
   * of it (one 429). The quota is asked here, for the whole batch at once, not message by
   * message, so that no message's own check turns a 429 into a refused message.
   */
  private async assertWholeBatch(principal: Principal, prepared: ReadonlyArray<PreparedItem>, now: number, { quota = true } = {}): Promise<void> {
    const refused = prepared.flatMap(({ index, error }) => (error === null ? [] : [{ index, error }]));
    if (refused.length > 0) throw new BatchRejectedError(refused);
    const messages = prepared.flatMap(({ message }) => (message === null ? [] : [message]));
    if (quota && principal.environment === "live") await this.countAgainstQuota(principal, messages, [], now, this.acceptedEarlier(principal, { batched: true, keys: keysOf(messages) }), { together: true });
  }

  /**
   * Counts `messages` against the monthly quota on top of the request's messages `counted`
   * already, leaving out those whose Idempotency-Key shows they were accepted before: the retry
   * of a request whose answer was lost, which `accept` answers with the stored message, counted
   * when it was stored. Those are looked up only once the quota refuses (until then `counted` may
   * include some, erring towards a refusal that is then recounted exactly), so keyed requests
   * within the quota cost no extra read. Answers the messages it counted.
   *
   * This is the early check, outside the accepting transaction: requests racing at the limit can
   * all pass it. So the messages of a workspace that has a quota are marked (`quota_unit`, shared
   * by a strict batch's: `together`) for the accepting transaction to count again, exactly, under
   * a lock; those of a workspace without one cost it nothing.
   */
  private async countAgainstQuota(principal: Principal, messages: readonly NewMessage[], counted: readonly NewMessage[], now: number, acceptedEarlier: () => Promise<ReadonlySet<string>>, { together = false } = {}): Promise<NewMessage[]> {
    let fresh = [...messages];
    let limited: boolean;
    try {
      limited = await this.policy.assertWithinQuota(principal.workspaceId, counted.length + messages.length, now);
    } catch (error) {
      if (!(error instanceof QuotaExceededError)) throw error;
      const earlier = await acceptedEarlier();
      const isNew = (m: NewMessage) => m.idempotency_key === null || !earlier.has(m.idempotency_key);
      const newCounted = counted.filter(isNew).length;
      fresh = messages.filter(isNew);
      if (newCounted === counted.length && fresh.length === messages.length) throw error;
      if (fresh.length > 0) await this.policy.assertWithinQuota(principal.workspaceId, newCounted + fresh.length, now);
      limited = true;
    }
    if (limited) for (const m of messages) m.quota_unit = together ? messages[0]!.id : m.id;
    return fresh;
  }

  /**
   * The Idempotency-Keys among `slots` (of single requests, or batches' `<key>#<index>`) that
   * already hold a stored message, read at most once, when first asked.
   */
  private acceptedEarlier(principal: Principal, slots: { batched: boolean; keys: readonly string[] }): () => Promise<ReadonlySet<string>> {
    let held: Promise<ReadonlySet<string>> | null = null;
    return () => (held ??= this.storedEarlier(principal, slots).then((stored) => new Set(stored.keys())));
  }

  /** The workspace's default sender and tracking defaults, read once per request and only when some message needs them. */
  private async workspaceDefaults(principal: Principal, inputs: readonly CreateMessageRequest[]): Promise<WorkspaceDefaults> {
    const needed = inputs.some((input) => input.from === undefined || TRACKING_OPTIONS.some((option) => input[option] === undefined));
    const workspace = needed ? await this.workspaces.find(principal.workspaceId) : undefined;
    return { defaultFrom: workspace?.default_from ?? null, tracking: workspace?.tracking ?? NO_TRACKING };
  }

  /**
   * A valid message ready to store but for its files given by URL (they stand in empty), or a
   * DomainError saying every reason it is not. Its callers ask the monthly quota next, and fetch
   * the files (`fetched`) only once it holds the message, so a message refused on any of these
   * grounds makes the server fetch nothing.
   */
  private async unfetched(principal: Principal, input: CreateMessageRequest, idempotency: MessageIdempotency | null, now: number, defaults: WorkspaceDefaults): Promise<Unfetched> {
    const { content, template } = await this.checkedContent(principal, { ...input, attachments: AttachmentUrls.unfetched(input.attachments) }, defaults.defaultFrom, now);
    assertKeyMaySend(principal, content);
    if (principal.environment === "live") {
      const domain = domainOf(content.fromAddress).toLowerCase();
      const status = await this.policy.domainStatus(principal.workspaceId, domain);
      if (status !== "verified") throw new SenderDomainNotVerifiedError(domain, status === "unverified");
    }
    return { input, content, message: await this.newMessage(principal, input, content, template, idempotency, now, defaults) };
  }

  /** The message with its files given by URL fetched and checked (the rest was checked unfetched). */
  private async fetched({ input, content, message }: Unfetched, fetchBudget: FetchBudget): Promise<NewMessage> {
    const { attachments } = await this.withFetchedAttachments(input, content, fetchBudget);
    message.attachments = attachments;
    return this.stampedNow(message, content);
  }

  /**
   * The message stamped with the time its files are in rather than the time its request began:
   * fetching them can take ATTACHMENT_FETCH_TIMEOUT_MS each, a batch's one after another, and a
   * message whose id and created_at lag its commit by that much sorts before messages stored
   * ahead of it, and is missed by a follower of the event log that looks back a few seconds
   * from the newest event it saw (`mailroom events tail`). Its quota unit is only a label, kept.
   */
  private stampedNow(message: NewMessage, content: PreparedContent): NewMessage {
    const now = this.clock.now();
    if (now === message.created_at) return message;
    // The expiry was checked against the request's time; the message is due now.
    if (message.expires_at !== null && message.scheduled_at === null && message.expires_at <= now) {
      throw ValidationError.field("/expires_at", "must be after the message is due (scheduled_at, or now): its attachments were fetched after that time");
    }
    const id = newId("message", now);
    return { ...message, id, message_id_header: messageIdHeader(id, content.fromAddress), created_at: now, first_event_id: newId("event", now), run_at: message.scheduled_at ?? now };
  }

  private async newMessage(principal: Principal, input: CreateMessageRequest, content: PreparedContent, template: MessageTemplateRef | null, idempotency: MessageIdempotency | null, now: number, defaults: WorkspaceDefaults): Promise<NewMessage> {
    const id = newId("message", now);
    return {
      scope: scopeOf(principal),
      id,
      status: content.scheduledAt === null ? "queued" : "scheduled",
      from: content.from,
      to: content.to,
      cc: content.cc,
      bcc: content.bcc,
      reply_to: content.reply_to,
      subject: content.subject,
      html: content.html,
      text: content.text,
      template,
      tracking: resolveTracking(input, await this.domainTracking(principal, input, content.fromAddress), defaults.tracking),
      headers: content.headers,
      attachments: content.attachments,
      tags: content.tags,
      metadata: content.metadata,
      scheduled_at: content.scheduledAt,
      expires_at: content.expiresAt,
      idempotency_key: idempotency?.key ?? null,
      idempotency_batched: idempotency?.batched ?? false,
      quota_unit: null, // set by countAgainstQuota when the workspace has a quota
      idempotency_window_start: this.idempotencyWindowStart(now),
      message_id_header: messageIdHeader(id, content.fromAddress),
      recipients: content.recipients,
      created_at: now,
      first_event_id: newId("event", now),
      run_at: content.scheduledAt ?? now,
    };
  }

  /** The sending domain's tracking defaults, when the message leaves opens or clicks to them (null: no such domain). */
  private async domainTracking(principal: Principal, input: CreateMessageRequest, fromAddress: string): Promise<DomainTrackingDefaults | null> {
    if (input.track_opens !== undefined && input.track_clicks !== undefined) return null;
    return this.policy.domainTracking(principal.workspaceId, domainOf(fromAddress).toLowerCase());
  }

  /**
   * The content with the files given by URL fetched and checked. Only a message that passed
   * every other check gets here, so a refused request makes the server fetch nothing.
   */
  private async withFetchedAttachments(input: CreateMessageRequest, unfetched: PreparedContent, budget: FetchBudget): Promise<PreparedContent> {
    if (!AttachmentUrls.anyUrl(input.attachments)) return unfetched;
    const fetched = await this.attachmentUrls.resolve(input.attachments, budget);
    if (fetched.errors.length > 0) throw new ValidationError(fetched.errors);
    // A message refused from here on stores none of its files: their bytes go back to the batch's budget.
    const refuse = (problems: FieldError[]): never => {
      budget.giveBack(fetched.fetchedBytes);
      throw new ValidationError(problems);
    };
    const { attachments, errors } = checkedAttachments(fetched.attachments);
    if (errors.length > 0) refuse(errors);
    const tooLarge = storedMessageProblems({ ...unfetched, attachments });
    if (tooLarge.length > 0) refuse(input.template === undefined ? tooLarge : tooLarge.map((e) => (RENDERED.has(e.pointer) ? { ...e, pointer: "/template" } : e)));
    return { ...unfetched, attachments };
  }

  /**
   * With `template`, the template is resolved, its variables checked and it is rendered (on the
   * render pool) before anything is stored, and the template's problems and the rest of the
   * message's are reported together.
   */
  private async checkedContent(principal: Principal, input: MessageInput, defaultFrom: string | null, now: number): Promise<{ content: PreparedContent; template: MessageTemplateRef | null }> {
    const rules = { deliveryLifetimeMs: this.settings.deliveryLifetimeMs };
    if (input.template === undefined) return { content: prepareMessage(input, defaultFrom, now, rules), template: null };
    const { template: templateInput, ...rest } = input;
    const errors: FieldError[] = [];
    const given = (["subject", "html", "text"] as const).filter((field) => rest[field] !== undefined);
    if (given.length > 0) errors.push({ location: "body", pointer: "/template", message: `cannot be combined with ${given.join(", ")}: the template gives the content` });
    let rendered: RenderedForMessage | null = null;
    try {
      rendered = await this.templates.renderForMessage(principal.workspaceId, templateInput);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      errors.push(...(error.extra.errors ?? []));
    }
    let content: PreparedContent | null = null;
    try {
      // Until the template renders, placeholders stand in for its content so the rest is still checked.
      content = prepareMessage({ ...rest, subject: rendered?.subject ?? "", html: rendered?.html ?? "", text: rendered?.text ?? undefined }, defaultFrom, now, rules);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      // The rendered subject and bodies (too long to fold, too large to store) are the template's.
      errors.push(...(error.extra.errors ?? []).map((e) => (RENDERED.has(e.pointer) ? { ...e, pointer: "/template" } : e)));
    }
    if (errors.length > 0 || content === null || rendered === null) throw new ValidationError(errors);
    return { content, template: rendered.template };
  }

  private async accept(principal: Principal, message: NewMessage): Promise<Message> {
    return this.accepted(principal, message, await this.groupCommit.submit(this.messages.acceptWriter, message));
  }

  /** A strict batch's messages, in one transaction (GroupCommit.submitTogether): the quota takes them all or none. */
  private acceptTogether(principal: Principal, messages: readonly NewMessage[]): Array<Promise<Message>> {
    return this.groupCommit.submitTogether(this.messages.acceptWriter, messages).map(async (result, i) => this.accepted(principal, messages[i]!, await result));
  }

  /** The message as stored, or the 429 of a message the accepting transaction's quota check refused. */
  private async accepted(principal: Principal, message: NewMessage, result: AcceptResult): Promise<Message> {
    if (result.quotaRefused) throw UsageService.quotaExceeded(result.quotaRefused, this.clock.now());
    this.onAccepted();
    if (result.existing) return this.get(principal, result.id);
    return MessagesRepository.toWire(acceptedRecord(message));
  }

  async get(principal: Principal, id: string): Promise<Message> {
    return MessagesRepository.toWire(await this.find(principal, id));
  }

  async list(principal: Principal, filters: MessageFilters, page: PageRequest): Promise<Page<MessageSummary>> {
    return this.messages.list(scopeOf(principal), { ...filters, recipient: recipientKey(filters.recipient) }, page);
  }

  async listEvents(principal: Principal, id: string, page: PageRequest): Promise<Page<Event>> {
    await this.find(principal, id);
    return this.events.listForMessage(scopeOf(principal), id, page);
  }

  async listAllEvents(principal: Principal, filters: EventFilters, page: PageRequest): Promise<Page<Event>> {
    return this.events.list(scopeOf(principal), { ...filters, recipient: recipientKey(filters.recipient) }, page);
  }

  /**
   * Cancels what has not been handed off: scheduled, queued or deferred recipients. A worker
   * holding the message's job lease is handing it off (the stored status still says queued), so
   * that is refused too. The row locks (and on SQLite the single writer) order this against a
   * worker's claim, and a worker's outcome only applies while it holds the lease, so a message
   * is either canceled or sent, never both.
   */
  async cancel(principal: Principal, id: string): Promise<Message> {
    const scope = scopeOf(principal);
    await this.messages.withLockedMessage(scope, id, async (trx, record, leasedUntil) => {
      if (!record) throw new NotFoundError("message", id);
      if (record.status === "canceled") return;
      if (!CANCELABLE.includes(record.status)) {
        throw new ConflictError("message_not_cancelable", "Message cannot be canceled", `Message ${id} is ${record.status}; only scheduled, queued or deferred messages can be canceled.`);
      }
      const now = this.clock.now();
      if (leasedUntil !== null && leasedUntil >= now) {
        throw new ConflictError("message_not_cancelable", "Message cannot be canceled", `Message ${id} is being handed off for delivery right now; it can no longer be canceled.`);
      }
      const recipients = record.recipients.map((r) => (CANCELABLE.includes(r.status) ? { ...r, status: transition(r.status, "canceled") } : r));
      const status = moveAggregate(record.status, aggregateStatus(recipients.map((r) => r.status)));
      const canceled = recipients.filter((r, i) => r.status !== record.recipients[i]!.status);
      await this.messages.applyChange(trx, {
        scope,
        messageId: id,
        status,
        recipients: canceled.map((r) => ({ id: r.id, status: r.status, detail: "canceled by request", attempts: r.attempts })),
        events: [{ id: newId("event", now), type: "message.canceled", recipient: null, from_status: record.status, to_status: status, data: { recipients: canceled.map((r) => r.email) }, created_at: now }],
        job: { action: "delete" },
        now,
      });
    });
    return this.get(principal, id);
  }

  /**
   * Moves a scheduled message to another time, or to now (null, or a time not after now): the
   * message keeps its id and content, its job its new due time, and a `message.scheduled` event
   * records the change (the time it already has changes nothing). Only while it is `scheduled`
   * and no worker is handing it off.
   */
  async reschedule(principal: Principal, id: string, input: RescheduleMessageRequest): Promise<Message> {
    const scope = scopeOf(principal);
    const now = this.clock.now();
    await this.messages.withLockedMessage(scope, id, async (trx, record, leasedUntil) => {
      if (!record) throw new NotFoundError("message", id);
      if (record.status !== "scheduled") {
        throw new ConflictError("message_not_scheduled", "Message not scheduled", `Message ${id} is ${record.status}; only a scheduled message can be rescheduled.`);
      }
      if (leasedUntil !== null && leasedUntil >= now) {
        throw new ConflictError("message_not_scheduled", "Message not scheduled", `Message ${id} is being handed off for delivery right now; it can no longer be rescheduled.`);
      }
      // The time is judged only for a message that can still move: a retried "send now" whose
      // first attempt went through hears that the message was sent (409), not that a time passed.
      const schedule = input.scheduled_at === null ? { at: null } : scheduledTime(input.scheduled_at, now);
      if ("problem" in schedule) throw ValidationError.field("/scheduled_at", schedule.problem);
      const at = schedule.at ?? now;
      // Its own time again is no change: no event for webhooks to fan out, updated_at kept.
      if (record.scheduled_at === at) return;
      if (record.expires_at !== null && at >= record.expires_at) {
        throw ValidationError.field("/scheduled_at", `must be before the message's expires_at (${toIso(record.expires_at)})`);
      }
      await this.messages.applyChange(trx, {
        scope,
        messageId: id,
        status: "scheduled",
        recipients: [],
        events: [{ id: newId("event", now), type: "message.scheduled", recipient: null, from_status: "scheduled", to_status: "scheduled", data: { scheduled_at: toIso(at), previous_scheduled_at: toIsoOrNull(record.scheduled_at) }, created_at: now }],
        scheduledAt: at,
        job: { action: "reschedule", runAt: at },
        now,
      });
    });
    return this.get(principal, id);
  }

  /** Within the retention a stored message with a request's Idempotency-Key is that request's earlier attempt. */
  private idempotencyWindowStart(now: number): number {
    return now - this.settings.idempotencyRetentionHours * 3600 * 1000;
  }

  private async find(principal: Principal, id: string): Promise<MessageRecord> {
    const record = await this.messages.find(scopeOf(principal), id);
    if (!record) throw new NotFoundError("message", id);
    return record;
  }
}

/** Throws 403 when the message's sender or recipients are outside the calling key's restrictions. */
function assertKeyMaySend({ credential }: Principal, content: PreparedContent): void {
  const restrictions = credential.kind === "api_key" ? credential.restrictions : undefined;
  if (!restrictions) return;
  const outside = outsideRestrictions(restrictions, content.fromAddress, content.addressed);
  if (outside.sender !== null) throw new SenderNotAllowedError(outside.sender, restrictions.sender_domains ?? []);
  if (outside.recipients.length > 0) throw new RecipientNotAllowedError(outside.recipients, restrictions.recipient_domains ?? []);
}

/** The stored message as it now reads, built from what was written (no read-back). */
function acceptedRecord(m: NewMessage): MessageRecord {
  return {
    ...m,
    mime: null,
    content_removed_at: null,
    event_seq: 1,
    updated_at: m.created_at,
    engagement: { opens: 0, clicks: 0, replies: 0 },
    recipients: m.recipients.map((r, position) => ({ id: 0, position, type: r.type, email: r.email, name: r.name, status: m.status, detail: null, attempts: 0, updated_at: m.created_at, ...NO_ENGAGEMENT_STAMPS })),
  };
}

/** The Idempotency-Keys the messages carry. */
const keysOf = (messages: readonly NewMessage[]): string[] => messages.flatMap((m) => (m.idempotency_key === null ? [] : [m.idempotency_key]));

/** A recipient filter as the search index holds addresses: domains in ASCII, so an IDN written in Unicode finds them too. */
function recipientKey(recipient: string | undefined): string | undefined {
  return recipient === undefined ? undefined : addressKey(recipient);
}
