import { AsyncLocalStorage } from "node:async_hooks";
import { UnavailableError, type FieldError } from "../domain/errors.js";
import { MIME_TYPE } from "./message-input.js";
import type { components } from "../../generated/v1.js";

type AttachmentInput = components["schemas"]["AttachmentInput"];

/** An attachment with its bytes in hand, as prepareMessage checks it. */
export interface InlineAttachment {
  filename: string;
  content: string;
  content_type?: string;
  content_id?: string;
}

/** What fetching one URL gave: the file, or why there is none (said for the caller to act on). */
export type FetchOutcome = { ok: true; content: Buffer; contentType: string | null; filename: string | null } | { ok: false; reason: string };

/** Why `FetchBudget.take` took nothing. */
export type Refusal = "past_limit" | "process_full" | "ended";

/**
 * Thrown out of a fetch when the process holds ATTACHMENT_FETCH_MAX_BYTES_IN_HAND already. Not a
 * DomainError on purpose: it is the server's state, not the message's fault, so it must not
 * become one message's answer inside a batch; it ends the whole request, and
 * `AttachmentUrls.forRequest` answers that 503.
 */
export class FetchCapacityError extends Error {
  override name = "FetchCapacityError";
}

/**
 * The fetched attachment bytes the whole process holds (ATTACHMENT_FETCH_MAX_BYTES_IN_HAND). Each
 * request's own limit bounds one request; this bounds all of them together, which a per-request
 * limit cannot: 200 slow requests of 10 MiB each would otherwise hold 2 GiB beside a 1 GiB heap.
 * A request that would pass it is refused (503), not queued: holders give bytes back only when
 * their requests end, which can take a fetch timeout per message of a batch.
 */
export class FetchedBytes {
  private held = 0;

  constructor(readonly limit: number) {}

  get inHand(): number {
    return this.held;
  }

  tryTake(bytes: number): boolean {
    if (this.held + bytes > this.limit) return false;
    this.held += bytes;
    return true;
  }

  giveBack(bytes: number): void {
    this.held -= bytes;
  }
}

/**
 * The bytes one request may fetch for its attachments (ATTACHMENT_FETCH_MAX_BYTES): shared by
 * every URL of every message in it (the messages of a batch share one), and taken as the bytes
 * arrive (or, when an answer declares its length, as soon as it does), so the files a request
 * fetches, however many at once, never hold more than it. Taken from the process's
 * `FetchedBytes` too, when the request runs under `AttachmentUrls.forRequest`: `end` gives
 * those back and aborts the fetches still running (`signal`).
 */
export class FetchBudget {
  private taken = 0;
  private readonly ending = new AbortController();

  constructor(
    readonly limit: number,
    private readonly process: FetchedBytes | null = null,
  ) {}

  /** Takes `bytes`, from the request's limit and the process's, or says why it took nothing. */
  take(bytes: number): Refusal | null {
    if (this.ending.signal.aborted) return "ended";
    if (this.taken + bytes > this.limit) return "past_limit";
    if (this.process !== null && !this.process.tryTake(bytes)) return "process_full";
    this.taken += bytes;
    return null;
  }

  /** Returns what a fetch that came to nothing took, or the files of a message that was refused. */
  giveBack(bytes: number): void {
    // After `end`, everything was given back already.
    if (this.ending.signal.aborted) return;
    this.taken -= bytes;
    this.process?.giveBack(bytes);
  }

  /** The request is over: what it holds goes back to the process, and its fetches still running stop. */
  end(): void {
    if (this.ending.signal.aborted) return;
    this.process?.giveBack(this.taken);
    this.taken = 0;
    this.ending.abort();
  }

  /** Aborted when the request ends. */
  get signal(): AbortSignal {
    return this.ending.signal;
  }

  get remaining(): number {
    return this.limit - this.taken;
  }
}

/** Where files given by URL come from (src/attachments/url-fetcher.ts). */
export interface AttachmentSource {
  /**
   * Reads the file within `budget`, taking its bytes from it as they arrive (and giving them back
   * if the fetch fails); stops when `budget.signal` aborts. Rejects with FetchCapacityError when
   * the process holds too much to take them.
   */
  fetch(url: string, budget: FetchBudget): Promise<FetchOutcome>;
}

/** One `forRequest` call: open until it settles, and the budgets made within it, ended then. */
interface RequestScope {
  open: boolean;
  budgets: FetchBudget[];
}

/** Seconds a client is asked to wait when the process holds all the fetched bytes it may. */
const FULL_RETRY_AFTER_SECONDS = 5;

/**
 * Attachments given by `url` (docs/api.md#attachments-by-url), fetched while a send is checked
 * so that the 2xx means the files are stored with the message: a URL that fails later could
 * not be answered for. The URLs of one message are fetched together, within the request's byte
 * budget, and all requests' within the process's (`forRequest`).
 */
export class AttachmentUrls {
  private readonly fetched: FetchedBytes;
  /** The request running and the budgets it made: `forRequest` ends them when it ends. */
  private readonly request = new AsyncLocalStorage<RequestScope>();

  constructor(
    private readonly source: AttachmentSource,
    private readonly maxBytes: number,
    maxBytesInHand: number,
  ) {
    this.fetched = new FetchedBytes(maxBytesInHand);
  }

  /** The fetched bytes the process holds now, of all requests. */
  get bytesInHand(): number {
    return this.fetched.inHand;
  }

  /**
   * Runs one request (a send, a batch, a preview), whichever door it came through: the services
   * that fetch (MessagesService.create and createBatch, MessagePreviewService.preview) run
   * themselves in it. The files its messages fetch count against
   * ATTACHMENT_FETCH_MAX_BYTES_IN_HAND until it settles, however it ends, because they are held
   * that long (a batch holds its accepted messages' files until all are stored); then they are
   * given back and any fetch still running is stopped. When the process holds too much to
   * fetch, the request is answered 503 as a whole, a batch too (nothing of it was stored yet).
   *
   * Called within a request still running, `work` is part of it: its files are held, and its
   * fetches stopped, until that request ends, not before (a caller may hold them longer than
   * `work` runs), and that request answers the 503.
   */
  async forRequest<T>(work: () => Promise<T>): Promise<T> {
    if (this.request.getStore()?.open) return work();
    const scope: RequestScope = { open: true, budgets: [] };
    try {
      return await this.request.run(scope, work);
    } catch (error) {
      if (!(error instanceof FetchCapacityError)) throw error;
      throw new UnavailableError(
        `This server holds as many fetched attachment bytes as it may (ATTACHMENT_FETCH_MAX_BYTES_IN_HAND, ${this.fetched.limit} bytes) for other requests; nothing was stored. Retry shortly.`,
        FULL_RETRY_AFTER_SECONDS,
      );
    } finally {
      scope.open = false;
      for (const budget of scope.budgets) budget.end();
    }
  }

  /**
   * The attachments as they can be checked before anything is fetched: a file given by URL is an
   * empty stand-in. A request refused for any other reason is refused before a URL is fetched
   * (a key that may not send, say, cannot make the server fetch either).
   */
  static unfetched(attachments: readonly AttachmentInput[] | undefined): InlineAttachment[] | undefined {
    return attachments?.map((a) => (a.url === undefined ? given(a) : placeholder(a)));
  }

  static anyUrl(attachments: readonly AttachmentInput[] | undefined): boolean {
    return attachments?.some((a) => a.url !== undefined) ?? false;
  }

  /**
   * A fresh budget for one request (ATTACHMENT_FETCH_MAX_BYTES). Within `forRequest` it takes from
   * the process's bytes too; outside one (or after it ended: async work it started may outlive
   * it) nothing would give those back, so it does not.
   */
  budget(): FetchBudget {
    const scope = this.request.getStore();
    const open = scope?.open === true;
    const budget = new FetchBudget(this.maxBytes, open ? this.fetched : null);
    if (open) scope.budgets.push(budget);
    return budget;
  }

  /**
   * The attachments with every URL's file in hand, within `budget`, and the problems of those that
   * could not be fetched. `fetchedBytes`: what the files in hand take from `budget` (0 when there
   * are problems: then they were given back), for a caller that refuses the message after all
   * to give back (`budget.giveBack`).
   */
  async resolve(attachments: readonly AttachmentInput[] | undefined, budget: FetchBudget): Promise<{ attachments: InlineAttachment[] | undefined; errors: FieldError[]; fetchedBytes: number }> {
    if (attachments === undefined) return { attachments: undefined, errors: [], fetchedBytes: 0 };
    const errors: FieldError[] = [];
    // A full process (FetchCapacityError) rejects at once; the other fetches stop when the request ends.
    const fetched = await Promise.all(attachments.map((a) => (a.url === undefined ? null : this.source.fetch(a.url, budget))));
    const resolved = attachments.map((a, i): InlineAttachment => {
      const outcome = fetched[i];
      if (a.url === undefined || !outcome) return given(a);
      const pointer = `/attachments/${i}/url`;
      if (!outcome.ok) {
        errors.push({ location: "body", pointer, message: `could not be fetched: ${outcome.reason}` });
        return placeholder(a);
      }
      if (outcome.content.length === 0) {
        errors.push({ location: "body", pointer, message: "answered an empty file" });
        return placeholder(a);
      }
      const file = inline(a, a.filename ?? outcome.filename ?? "attachment", outcome.content.toString("base64"));
      // A server's odd Content-Type is not the caller's mistake: the file name's guess stands instead.
      if (a.content_type === undefined && outcome.contentType !== null && MIME_TYPE.test(outcome.contentType)) file.content_type = outcome.contentType;
      return file;
    });
    const fetchedBytes = fetched.reduce((sum, outcome) => sum + (outcome?.ok ? outcome.content.length : 0), 0);
    // A refused message stores nothing: the files it did get no longer count against the request
    // (the next message of a batch may use those bytes).
    if (errors.length > 0) {
      budget.giveBack(fetchedBytes);
      return { attachments: resolved, errors, fetchedBytes: 0 };
    }
    return { attachments: resolved, errors, fetchedBytes };
  }
}

/** A file given inline. */
function given(a: AttachmentInput): InlineAttachment {
  return inline(a, a.filename ?? "", a.content ?? "");
}

/** Stands in for a file that is not fetched (yet, or at all), so the rest of the message is still checked. */
function placeholder(a: AttachmentInput): InlineAttachment {
  return inline(a, a.filename ?? "attachment", "");
}

function inline(a: AttachmentInput, filename: string, content: string): InlineAttachment {
  return { filename, content, ...(a.content_type === undefined ? {} : { content_type: a.content_type }), ...(a.content_id === undefined ? {} : { content_id: a.content_id }) };
}
