import { randomBytes } from "node:crypto";
import { retryAfterMs, type Webhooks } from "mailroom";
import { VERSION } from "./version.js";

/** The longest a receiver's `Retry-After` is waited for; past it the retry comes sooner, as the SDK's cap. */
const MAX_RETRY_AFTER_MS = 60_000;

/** What became of one forwarded event. */
export interface ForwardResult {
  /** The receiver's last HTTP status, or null when it never answered. */
  status: number | null;
  ok: boolean;
  attempts: number;
  /** From the first attempt to the last answer, waits between retries included. */
  duration_ms: number;
  /** Why the last attempt got no answer (connection refused, timeout). */
  error?: string;
}

export interface ForwarderOptions {
  /** The local receiver, e.g. http://localhost:4242/webhooks. */
  url: string;
  /** The `whsec_` secret deliveries are signed with. */
  secret: string;
  /** Signs as Mailroom does (Standard Webhooks); the SDK's own implementation. */
  signer: Pick<Webhooks, "sign">;
  /** Retries after a failed attempt. */
  retries: number;
  /** The wait before the first retry; it doubles for each further one, unless the receiver's Retry-After asks for longer. */
  backoffMs: number;
  /** How long one attempt may take to be answered. */
  timeoutMs: number;
}

/** The fewest bytes a Standard Webhooks secret holds (the specification asks for 24 to 64). */
const MIN_SECRET_BYTES = 24;
/** Base64 as the Standard Webhooks libraries decode it: the standard alphabet, padded, nothing else. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A fresh signing secret in the Standard Webhooks form: `whsec_` + base64 of 24 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(MIN_SECRET_BYTES).toString("base64")}`;
}

/**
 * Whether `secret` is one a receiver can verify with: `whsec_` and the base64 of at least 24
 * bytes (Mailroom's endpoints have 32). The SDK's sign() takes more (any text atob() decodes, "abc"
 * too), so a typo would sign every delivery with a secret no receiver holds.
 */
export function isWebhookSecret(secret: string): boolean {
  const encoded = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : undefined;
  return encoded !== undefined && BASE64.test(encoded) && Buffer.from(encoded, "base64").length >= MIN_SECRET_BYTES;
}

/**
 * Delivers payloads to a local receiver the way Mailroom delivers webhooks: a JSON POST signed per
 * Standard Webhooks, the same `webhook-id` on every attempt (so the receiver can drop duplicates)
 * and a fresh timestamp and signature on each, only a 2xx counting as delivered, redirects not
 * followed, and a receiver's Retry-After honoured.
 */
export class Forwarder {
  constructor(private readonly options: ForwarderOptions) {}

  /** Forwards one payload, retrying with backoff; resolves whatever happened, unless aborted. */
  async forward(webhookId: string, body: string, signal: AbortSignal): Promise<ForwardResult> {
    const started = performance.now();
    let attempts = 0;
    for (;;) {
      attempts++;
      const { retryAfterMs: asked, ...last } = await this.attempt(webhookId, body, signal);
      const ok = last.status !== null && last.status >= 200 && last.status < 300;
      if (ok || attempts > this.options.retries) {
        return { ...last, ok, attempts, duration_ms: Math.round(performance.now() - started) };
      }
      const backoff = this.options.backoffMs * 2 ** (attempts - 1);
      await wait(Math.max(backoff, Math.min(asked ?? 0, MAX_RETRY_AFTER_MS)), signal);
    }
  }

  private async attempt(webhookId: string, body: string, signal: AbortSignal): Promise<{ status: number | null; error?: string; retryAfterMs?: number }> {
    const headers = await this.options.signer.sign(body, this.options.secret, { id: webhookId });
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    try {
      const response = await fetch(this.options.url, {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": `mailroom-cli/${VERSION} (listen)`, ...headers },
        body,
        redirect: "manual",
        signal: AbortSignal.any([signal, timeout]),
      });
      await drain(response);
      return { status: response.status, retryAfterMs: retryAfterMs(response.headers, Date.now()) };
    } catch (error) {
      if (signal.aborted) throw error;
      return { status: null, error: timeout.aborted ? `no answer within ${this.options.timeoutMs / 1000} s` : describeFetchError(error) };
    }
  }
}

/**
 * Reads the body to its end, chunk by chunk and keeping none, so that the connection can be
 * reused for the next event whatever the receiver sends back. A body that never ends is cut by
 * the attempt's timeout, whose signal the read shares.
 */
async function drain(response: Response): Promise<void> {
  try {
    await response.body?.pipeTo(new WritableStream());
  } catch {
    // A body cut short says nothing more about the answer than its status did.
  }
}

/** undici's "fetch failed" says nothing; its cause (ECONNREFUSED, …) says what happened. */
function describeFetchError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
