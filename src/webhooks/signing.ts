import { createHmac } from "node:crypto";

/**
 * Standard Webhooks, version 1 signatures (https://www.standardwebhooks.com): base64
 * HMAC-SHA256 of `${webhook-id}.${webhook-timestamp}.${body}`, keyed with the base64-decoded
 * part of the `whsec_…` secret. The public `standardwebhooks` package verifies what this signs.
 */
export const SECRET_PREFIX = "whsec_";

export function signature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64")}`;
}

/**
 * The headers of one attempt. With several secrets (a rotation's overlap) the signature header
 * lists one signature per secret, space-separated, newest first: a receiver that knows either
 * secret accepts the delivery.
 */
export function webhookHeaders(secrets: readonly string[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    "content-type": "application/json",
    "user-agent": "Mailroom-Webhooks/1",
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": secrets.map((secret) => signature(secret, id, timestampSeconds, body)).join(" "),
  };
}
