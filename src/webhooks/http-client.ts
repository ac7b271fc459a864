import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { performance } from "node:perf_hooks";
import { LookupFailedError, type TargetGuard } from "./target-guard.js";

/** What came of one POST: an answer (`status`) or none (`error`). */
export interface PostResult {
  status: number | null;
  /** The first RESPONSE_BODY_LIMIT bytes of the answer's body, as text; null when empty or none. */
  body: string | null;
  retryAfter: string | null;
  error: "timeout" | "connection_refused" | "connection_reset" | "dns" | "tls" | "target_not_allowed" | "network" | null;
  durationMs: number;
}

export const RESPONSE_BODY_LIMIT = 2048;
/** Past this much unread body the socket is dropped rather than drained for reuse. */
const DRAIN_LIMIT = 64 * 1024;
/**
 * How long a keep-alive connection may sit idle before it is closed. Under the 5 s that many
 * servers (Node's among them) keep an idle connection for, so a request rarely goes out on one the
 * receiver is closing; and bounded, since a receiver that never closes its idle connections would
 * otherwise hold up to WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT sockets per endpoint for good, and
 * endpoints are anyone's to create: enough of them would use up the worker's file descriptors.
 */
export const IDLE_CONNECTION_MS = 4_000;

/**
 * POSTs webhook deliveries over keep-alive connections. Redirects are never followed (node:http
 * does not follow them: a 3xx is the answer), every attempt ends within `timeoutMs` whatever the
 * receiver does (slow headers, a trickling body), every connection goes through the target
 * guard's lookup, and none is kept open idle for longer than IDLE_CONNECTION_MS.
 */
export class WebhookHttpClient {
  private readonly http: HttpAgent;
  private readonly https: HttpsAgent;

  constructor(
    private readonly guard: TargetGuard,
    private readonly timeoutMs: number,
    { idleMs = IDLE_CONNECTION_MS }: { idleMs?: number } = {},
  ) {
    // `timeout` closes a pooled socket left idle that long (a server's `Keep-Alive: timeout=` hint
    // shortens it); a request in flight is bounded by `timeoutMs` alone.
    const options = { keepAlive: true, keepAliveMsecs: 10_000, timeout: idleMs, scheduling: "lifo" as const, lookup: guard.lookup as never };
    this.http = new HttpAgent(options);
    this.https = new HttpsAgent(options);
  }

  async post(url: string, headers: Record<string, string>, body: string): Promise<PostResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return { status: null, body: null, retryAfter: null, error: "network", durationMs: 0 };
    }
    const refused = this.guard.literalRefusal(target);
    if (refused) return { status: null, body: null, retryAfter: null, error: "target_not_allowed", durationMs: elapsed() };
    const secure = target.protocol === "https:";
    const payload = Buffer.from(body);
    return new Promise<PostResult>((resolve) => {
      let settled = false;
      const finish = (result: Omit<PostResult, "durationMs">) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ ...result, durationMs: elapsed() });
      };
      let req: ClientRequest;
      try {
        req = (secure ? httpsRequest : httpRequest)(target, {
          method: "POST",
          agent: secure ? this.https : this.http,
          headers: { ...headers, "content-length": String(payload.length) },
        });
      } catch {
        // What http.request cannot send (credentials that are not UTF-8, in a URL stored before
        // they were refused) throws before anything starts: a failed attempt, retried and
        // recorded like any other, not a rejection that would leave the delivery pending.
        return resolve({ status: null, body: null, retryAfter: null, error: "network", durationMs: elapsed() });
      }
      const timer = setTimeout(() => {
        req.destroy();
        finish({ status: null, body: null, retryAfter: null, error: "timeout" });
      }, this.timeoutMs);
      // Once the status has arrived, the answer is that status (see `done`): a connection reset
      // while the body still trickles in does not turn a 200 the receiver sent into no answer,
      // and another attempt of something it has already taken.
      let answered: (() => void) | null = null;
      req.on("error", (error) => (answered ? answered() : finish({ status: null, body: null, retryAfter: null, error: classify(error) })));
      req.on("response", (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        let seen = 0;
        res.on("data", (chunk: Buffer) => {
          seen += chunk.length;
          if (kept < RESPONSE_BODY_LIMIT) {
            const part = chunk.subarray(0, RESPONSE_BODY_LIMIT - kept);
            chunks.push(part);
            kept += part.length;
          }
          if (seen > DRAIN_LIMIT) res.destroy();
        });
        const done = () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const retryAfter = res.headers["retry-after"];
          finish({ status: res.statusCode ?? null, body: text.length > 0 ? text : null, retryAfter: typeof retryAfter === "string" ? retryAfter : null, error: null });
        };
        answered = done;
        res.on("end", done);
        // A body cut short after the status arrived is still an answer.
        res.on("close", done);
        res.on("error", () => undefined);
      });
      req.end(payload);
    });
  }

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}

function classify(error: NodeJS.ErrnoException): NonNullable<PostResult["error"]> {
  const code = error.code ?? "";
  if (code === "ETARGETNOTALLOWED") return "target_not_allowed";
  // By where it failed, not by its code: a resolver that cannot be reached fails the lookup with
  // ECONNREFUSED, as a receiver refusing the connection does. Every lookup is the guard's.
  if (error instanceof LookupFailedError) return "dns";
  if (code === "ECONNREFUSED") return "connection_refused";
  if (code === "ECONNRESET" || code === "EPIPE") return "connection_reset";
  if (code.startsWith("ERR_TLS") || code.startsWith("ERR_SSL") || /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)) return "tls";
  return "network";
}
