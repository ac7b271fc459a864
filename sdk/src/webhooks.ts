// Standard Webhooks (https://www.standardwebhooks.com), version 1 signatures: HMAC-SHA256 over
// "<webhook-id>.<webhook-timestamp>.<raw body>" with the endpoint's `whsec_` secret. Web Crypto
// only, so receivers can verify in Node, in browsers and at the edge.
import { MailroomConfigurationError, MailroomError } from "./errors.js";

/** A delivery that must not be trusted: bad or missing signature, stale timestamp, bad secret. */
export class WebhookVerificationError extends MailroomError {
  override name = "WebhookVerificationError";
}

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** How far `webhook-timestamp` may be from now, in seconds (replay protection). Default 300. */
  toleranceSeconds?: number;
  /** "Now", in milliseconds since the epoch; for tests. */
  now?: number;
}

export interface SignOptions {
  /** The delivery's `webhook-id` (stable across retries of one delivery). */
  id: string;
  /** Seconds since the epoch. Default: now. */
  timestamp?: number;
}

const SECRET_PREFIX = "whsec_";
const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

/**
 * Checks a delivery's signature and returns its parsed payload (what `mr.webhooks.verify` and
 * `new Webhooks().verify` do).
 */
export async function verifyWebhook<Payload>(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string, options: VerifyOptions = {}): Promise<Payload> {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError("Missing webhook-id, webhook-timestamp or webhook-signature header.");
  }
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError("Invalid webhook-timestamp header.");
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000);
  if (Math.abs(nowSeconds - Number(timestamp)) > tolerance) {
    throw new WebhookVerificationError("The webhook-timestamp is too far from now: a replay, or a clock out of sync.");
  }
  const body = rawBodyText(rawBody, "verify");
  const expected = base64Decode(await hmac(secret, `${id}.${timestamp}.${body}`));
  const matches = signatures
    .split(" ")
    .map((entry) => entry.split(","))
    .some(([version, signature]) => version === "v1" && signature !== undefined && constantTimeEqual(safeBase64Decode(signature), expected));
  if (!matches) throw new WebhookVerificationError("No matching signature: check the endpoint's signing secret.");
  try {
    return JSON.parse(body) as Payload;
  } catch {
    throw new WebhookVerificationError("The signed body is not JSON.");
  }
}

/** The headers Mailroom would send with `payload` (what `mr.webhooks.sign` does). */
export async function signWebhook(
  payload: string | Uint8Array,
  secret: string,
  options: SignOptions,
): Promise<Record<"webhook-id" | "webhook-timestamp" | "webhook-signature", string>> {
  const body = rawBodyText(payload, "sign");
  if (typeof options.id !== "string" || options.id === "") throw new MailroomConfigurationError("Give the delivery's webhook-id as `id` (an event id, evt_…).");
  const timestamp = String(options.timestamp === undefined ? Math.floor(Date.now() / 1000) : checkedTimestamp(options.timestamp));
  const signature = await hmac(secret, `${options.id}.${timestamp}.${body}`);
  return { "webhook-id": options.id, "webhook-timestamp": timestamp, "webhook-signature": `v1,${signature}` };
}

/**
 * The body as the text that is signed. Anything but a string or bytes is a misuse that would
 * otherwise sign or compare "[object Object]" (a body a framework has already parsed, say), so it
 * is refused by name rather than as a signature that never matches.
 */
function rawBodyText(body: unknown, use: "verify" | "sign"): string {
  if (typeof body === "string") return body;
  if (body instanceof Uint8Array) return new TextDecoder().decode(body);
  const given = body === null ? "null" : typeof body === "object" ? "a parsed object" : `a ${typeof body}`;
  throw new MailroomConfigurationError(
    use === "verify"
      ? `Pass the raw body, exactly as received, as a string or bytes, not ${given}: a parsed and re-serialised body no longer matches its signature (in Express, express.raw({ type: "application/json" })).`
      : `Pass the payload as the string that will be sent (JSON.stringify(event)), or its bytes, not ${given}: the signature covers those exact bytes.`,
  );
}

/** Below this, a timestamp reads as seconds; above it (the year 5138), as the milliseconds Date.now() gives. */
const LARGEST_SECONDS = 100_000_000_000;

function checkedTimestamp(timestamp: number): number {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new MailroomConfigurationError(`Invalid timestamp ${String(timestamp)}: give whole seconds since the epoch.`);
  }
  if (timestamp >= LARGEST_SECONDS) {
    throw new MailroomConfigurationError(`Invalid timestamp ${timestamp}: give seconds since the epoch, not milliseconds (Math.floor(Date.now() / 1000)).`);
  }
  return timestamp;
}

async function hmac(secret: string, content: string): Promise<string> {
  const key = await globalThis.crypto.subtle.importKey("raw", secretBytes(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await globalThis.crypto.subtle.sign("HMAC", key, new TextEncoder().encode(content));
  return base64Encode(new Uint8Array(mac));
}

function secretBytes(secret: string): Uint8Array<ArrayBuffer> {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  try {
    const bytes = base64Decode(encoded);
    if (bytes.length > 0) return bytes;
  } catch {
    // reported below
  }
  throw new WebhookVerificationError("The signing secret is not a whsec_… secret (base64 after the prefix).");
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(" ") : value;
}

/** Compares in time independent of where the inputs differ, so timing reveals nothing. */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= (a[i] as number) ^ (b[i] as number);
  return difference === 0;
}

function base64Encode(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function base64Decode(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function safeBase64Decode(text: string): Uint8Array {
  try {
    return base64Decode(text);
  } catch {
    return new Uint8Array(0);
  }
}
