import type { FieldError } from "../domain/errors.js";
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

/**
 * The bytes one request may fetch for its attachments (ATTACHMENT_FETCH_MAX_BYTES): shared by
 * every URL of every message in it (the messages of a batch share one), and taken as the bytes
 * arrive, so the files a request fetches, however many at once, never hold more than it.
 */
export class FetchBudget {
  private taken = 0;

  constructor(readonly limit: number) {}

  /** Takes `bytes` when they fit; false, taking nothing, when they would pass the limit. */
  take(bytes: number): boolean {
    if (this.taken + bytes > this.limit) return false;
    this.taken += bytes;
    return true;
  }

  /** Returns what a fetch that came to nothing took. */
  giveBack(bytes: number): void {
    this.taken -= bytes;
  }

  get remaining(): number {
    return this.limit - this.taken;
  }
}

/** Where files given by URL come from (src/attachments/url-fetcher.ts). */
export interface AttachmentSource {
  /** Reads the file within `budget`, taking its bytes from it as they arrive (and giving them back if the fetch fails). */
  fetch(url: string, budget: FetchBudget): Promise<FetchOutcome>;
}

/**
 * Attachments given by `url` (docs/api.md#attachments-by-url), fetched while a send is checked
 * so that the 2xx means the files are stored with the message: a URL that fails later could
 * not be answered for. The URLs of one message are fetched together, within the request's byte
 * budget.
 */
export class AttachmentUrls {
  constructor(
    private readonly source: AttachmentSource,
    private readonly maxBytes: number,
  ) {}

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

  /** A fresh budget for one request (ATTACHMENT_FETCH_MAX_BYTES). */
  budget(): FetchBudget {
    return new FetchBudget(this.maxBytes);
  }

  /** The attachments with every URL's file in hand, within `budget`, and the problems of those that could not be fetched. */
  async resolve(attachments: readonly AttachmentInput[] | undefined, budget: FetchBudget): Promise<{ attachments: InlineAttachment[] | undefined; errors: FieldError[] }> {
    if (attachments === undefined) return { attachments: undefined, errors: [] };
    const errors: FieldError[] = [];
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
    return { attachments: resolved, errors };
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
