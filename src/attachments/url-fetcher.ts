import { parse as parseContentDisposition } from "content-disposition";
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { unsendableCredentials } from "../domain/url-credentials.js";
import { FetchCapacityError, type AttachmentSource, type FetchBudget, type FetchOutcome } from "../services/attachment-urls.js";
import { LookupFailedError, type TargetGuard } from "../webhooks/target-guard.js";

/** Why a URL gave no file, said so that the 422 can name the fix. */
class AttachmentFetchError extends Error {
  override name = "AttachmentFetchError";
}

export interface UrlFetcherOptions {
  timeoutMs: number;
  /** Redirects followed before giving up; each one's target is checked like the first URL. */
  maxRedirects?: number;
  userAgent?: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Fetches attachments given by URL (docs/api.md#attachments-by-url). The URL is the API
 * caller's choice, so every connection goes through the SSRF guard (private, loopback and
 * link-local addresses refused at connect time, redirects included), the whole fetch ends within
 * `timeoutMs` whatever the server does, every connection is closed as its answer is settled
 * (redirects included), and a body past what is left of the request's byte budget, or of the
 * process's, is cut off rather than read.
 */
export class UrlFetcher implements AttachmentSource {
  private readonly http: HttpAgent;
  private readonly https: HttpsAgent;

  constructor(
    private readonly guard: TargetGuard,
    private readonly options: UrlFetcherOptions,
  ) {
    const agentOptions = { keepAlive: false, lookup: guard.lookup as never };
    this.http = new HttpAgent(agentOptions);
    this.https = new HttpsAgent(agentOptions);
  }

  /**
   * The file at `url`, or why there is none; the answer's media type without parameters, and the
   * file name its Content-Disposition gives, else the last segment of the final URL's path.
   */
  async fetch(url: string, budget: FetchBudget): Promise<FetchOutcome> {
    try {
      return { ok: true, ...(await this.follow(url, budget)) };
    } catch (error) {
      if (error instanceof AttachmentFetchError) return { ok: false, reason: error.message };
      throw error;
    }
  }

  private async follow(url: string, budget: FetchBudget): Promise<{ content: Buffer; contentType: string | null; filename: string | null }> {
    const deadline = Date.now() + this.options.timeoutMs;
    // The contract's `format: uri` admits what the WHATWG parser, and so any request, refuses.
    let target = URL.parse(url);
    if (target === null) throw new AttachmentFetchError("is not a URL a request can be made to (the port, or an IPv4 address or IDN host name in it, is out of range)");
    for (let redirects = 0; ; redirects++) {
      const unsendable = unsendableCredentials(target);
      if (unsendable) throw new AttachmentFetchError(`${redirects === 0 ? "its" : "redirected to a URL whose"} user name or password ${unsendable}`);
      const answer = await this.get(target, budget, deadline);
      if (!("location" in answer)) return { content: answer.content, contentType: answer.contentType, filename: plainFilename(answer.dispositionFilename) ?? filenameOf(target) };
      if (redirects >= (this.options.maxRedirects ?? 3)) throw new AttachmentFetchError(`redirected more than ${this.options.maxRedirects ?? 3} times`);
      target = answer.location;
    }
  }

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }

  private get(target: URL, budget: FetchBudget, deadline: number): Promise<Answer> {
    if (target.protocol !== "http:" && target.protocol !== "https:") return Promise.reject(new AttachmentFetchError(`redirected to ${target.protocol} URL; only http and https are fetched`));
    const refused = this.guard.literalRefusal(target);
    if (refused) return Promise.reject(new AttachmentFetchError(`${refused.message}, which is not fetched`));
    if (budget.signal.aborted) return Promise.reject(ended());
    return new Promise((resolve, reject) => {
      const secure = target.protocol === "https:";
      let req: ClientRequest;
      try {
        req = (secure ? httpsRequest : httpRequest)(target, {
          method: "GET",
          agent: secure ? this.https : this.http,
          // The request's end aborts it (its files are no longer wanted, and their bytes were given back).
          signal: budget.signal,
          // The file as it is stored: a Content-Encoding is refused below rather than stored as the file.
          headers: { "user-agent": this.options.userAgent ?? "Mailroom attachment fetcher", accept: "*/*", "accept-encoding": "identity" },
        });
      } catch (error) {
        // http.request throws what it cannot send before anything starts; nothing to close.
        return reject(new AttachmentFetchError(`the request could not be made (${error instanceof Error ? error.message : String(error)})`));
      }
      let taken = 0; // the bytes of this answer taken from the budget
      let received = 0;
      let settled = false;
      const timer = setTimeout(() => fail(new AttachmentFetchError(`did not answer within ${this.options.timeoutMs} ms`)), Math.max(0, deadline - Date.now()));
      // Every way out comes through here, and closes the connection: a redirect's or an error
      // page's body may never end, and one left reading would hold its socket with no deadline.
      // (Keep-alive is off, so no connection is worth keeping.)
      const settle = (outcome: { answer: Answer } | { error: Error }) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        if ("answer" in outcome) return resolve(outcome.answer);
        budget.giveBack(taken);
        taken = 0;
        reject(outcome.error);
      };
      const fail = (error: Error) => settle({ error });
      /** Takes `bytes` from the budget, else fails saying which limit refused them. */
      const take = (bytes: number): boolean => {
        const refusal = budget.take(bytes);
        if (refusal === null) taken += bytes;
        else fail(refusal === "past_limit" ? tooLarge(budget) : refusal === "process_full" ? new FetchCapacityError(`the process holds ATTACHMENT_FETCH_MAX_BYTES_IN_HAND of fetched files`) : ended());
        return refusal === null;
      };
      req.on("error", (error: NodeJS.ErrnoException) => fail(describeNetworkError(error, target)));
      req.on("response", (res: IncomingMessage) => {
        res.on("error", (error: NodeJS.ErrnoException) => fail(describeNetworkError(error, target)));
        const status = res.statusCode ?? 0;
        if (REDIRECTS.has(status) && res.headers.location) {
          let location: URL;
          try {
            location = new URL(res.headers.location, target);
          } catch {
            return fail(new AttachmentFetchError(`redirected to an invalid URL (${res.headers.location.slice(0, 200)})`));
          }
          return settle({ answer: { location } });
        }
        if (status < 200 || status > 299) return fail(new AttachmentFetchError(`answered HTTP ${status}; a 2xx with the file is needed`));
        // Asked for identity, a server may still answer encoded (S3 serves an object stored with
        // Content-Encoding: gzip so, whatever is asked): stored as it came, the file would be
        // gzip under its own type. Refused rather than decoded: no inflating of what a stranger sends.
        const encoding = res.headers["content-encoding"]?.trim().toLowerCase();
        if (encoding && encoding !== "identity") {
          return fail(new AttachmentFetchError(`answered with Content-Encoding: ${encoding.slice(0, 50)}; only files sent as they are stored (identity) are fetched: serve it without a Content-Encoding, or give it inline as content`));
        }
        // A declared length is taken at once: a slow answer holds from the start what it will need.
        const declared = Number(res.headers["content-length"]);
        if (res.headers["content-length"] !== undefined && Number.isSafeInteger(declared) && declared > 0 && !take(declared)) return;
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => {
          if (settled) return;
          received += chunk.length;
          if (received > taken && !take(received - taken)) return;
          chunks.push(chunk);
        });
        res.on("end", () => {
          if (settled) return;
          if (taken > received) {
            budget.giveBack(taken - received);
            taken = received;
          }
          const type = res.headers["content-type"]?.split(";", 1)[0]?.trim().toLowerCase() || null;
          settle({ answer: { content: Buffer.concat(chunks, received), contentType: type, dispositionFilename: dispositionFilename(res.headers["content-disposition"]) } });
        });
      });
      req.end();
    });
  }
}

type Answer = { content: Buffer; contentType: string | null; dispositionFilename: string | null } | { location: URL };

function ended(): AttachmentFetchError {
  return new AttachmentFetchError("was stopped: its request ended");
}

function tooLarge(budget: FetchBudget): AttachmentFetchError {
  return new AttachmentFetchError(`takes what this request fetches past ${budget.limit} bytes (ATTACHMENT_FETCH_MAX_BYTES, for all of its attachments given by URL, a batch's messages together)`);
}

function describeNetworkError(error: NodeJS.ErrnoException, target: URL): AttachmentFetchError {
  if (error instanceof AttachmentFetchError) return error;
  if (error.code === "ETARGETNOTALLOWED") return new AttachmentFetchError(`${error.message}, which is not fetched`);
  // Before the codes: a resolver (DNS_SERVERS) that cannot be reached fails the lookup with
  // ECONNREFUSED, which is not the file's host refusing (LookupFailedError says why it is tagged).
  if (error instanceof LookupFailedError) return new AttachmentFetchError(`${target.hostname} could not be resolved (${error.code})`);
  if (error.code === "ECONNREFUSED") return new AttachmentFetchError(`${target.host} refused the connection`);
  if (error.code?.startsWith("ERR_TLS") || error.code?.includes("CERT")) return new AttachmentFetchError(`TLS with ${target.host} failed (${error.code})`);
  return new AttachmentFetchError(`could not be fetched (${error.code ?? error.message})`);
}

/**
 * The file name a Content-Disposition header gives (RFC 6266: `filename*` with its charset wins
 * over `filename`), or null when there is none or the header cannot be read: a server's odd
 * header is not the sender's mistake, and the URL still names the file.
 */
function dispositionFilename(header: string | undefined): string | null {
  if (header === undefined) return null;
  try {
    const name = parseContentDisposition(header).parameters.filename;
    return typeof name === "string" ? name : null;
  } catch {
    return null;
  }
}

/** The last segment of a URL's path, decoded, as a file name; null when there is none. */
function filenameOf(url: URL): string | null {
  const last = url.pathname.split("/").pop() ?? "";
  let decoded: string;
  try {
    decoded = decodeURIComponent(last);
  } catch {
    decoded = last;
  }
  return plainFilename(decoded);
}

/** A name without path separators or control line breaks, at most 255 characters; null when nothing is left. */
function plainFilename(name: string | null): string | null {
  if (name === null) return null;
  // The last segment only: a server naming `../../etc/passwd` names `passwd`.
  const plain = (name.split(/[/\\]/).pop() ?? "").replace(/[\r\n\0]/g, "").trim().slice(0, 255);
  return plain === "" ? null : plain;
}
