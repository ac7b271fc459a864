import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { Mailroom, MailroomError, WebhookVerificationError } from "../src/index.js";

// The receiving side needs no API key; any client's `webhooks` verifies.
const { webhooks } = new Mailroom("svc_test_webhooks");

const newSecret = () => `whsec_${randomBytes(24).toString("base64")}`;
const payload = JSON.stringify({ id: "evt_01jd3k8m2q5v7w9x1y3z5a7b9c", type: "message.delivered", message_id: "msg_01jd3k8m2q5v7w9x1y3z5a7b9c" });
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Headers as the public Standard Webhooks library signs them: the reference we must agree with. */
function signedByStandardWebhooks(secret: string, body = payload, at = new Date()) {
  return {
    "webhook-id": "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W",
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign("msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", at, body),
  };
}

describe("webhooks.verify", () => {
  it("accepts a delivery signed by the standardwebhooks library and returns its parsed payload", async () => {
    const secret = newSecret();
    await expect(webhooks.verify(payload, signedByStandardWebhooks(secret), secret)).resolves.toEqual(JSON.parse(payload));
  });

  it("refuses a body changed after signing", async () => {
    const secret = newSecret();
    const tampered = payload.replace("delivered", "bounced");
    await expect(webhooks.verify(tampered, signedByStandardWebhooks(secret), secret)).rejects.toThrow(WebhookVerificationError);
  });

  it("refuses a delivery signed with another secret", async () => {
    await expect(webhooks.verify(payload, signedByStandardWebhooks(newSecret()), newSecret())).rejects.toThrow(/No matching signature/);
  });

  it.each(["webhook-id", "webhook-timestamp", "webhook-signature"])("refuses a delivery without %s", async (missing) => {
    const secret = newSecret();
    const headers: Record<string, string> = signedByStandardWebhooks(secret);
    delete headers[missing];
    await expect(webhooks.verify(payload, headers, secret)).rejects.toThrow(/Missing/);
  });

  it("refuses a webhook-timestamp that is not a number", async () => {
    const secret = newSecret();
    const headers = { ...signedByStandardWebhooks(secret), "webhook-timestamp": "yesterday" };
    await expect(webhooks.verify(payload, headers, secret)).rejects.toThrow(/Invalid webhook-timestamp/);
  });

  it("makes every failure a MailroomError", async () => {
    await expect(webhooks.verify(payload, {}, newSecret())).rejects.toBeInstanceOf(MailroomError);
  });
});

describe("replay protection", () => {
  const secret = newSecret();
  const signedAt = new Date("2026-11-21T10:00:00Z");
  const headers = signedByStandardWebhooks(secret, payload, signedAt);
  const verifyAt = (offsetSeconds: number, toleranceSeconds?: number) =>
    webhooks.verify(payload, headers, secret, { now: signedAt.getTime() + offsetSeconds * 1000, ...(toleranceSeconds === undefined ? {} : { toleranceSeconds }) });

  it("accepts a delivery up to 5 minutes old", async () => {
    await expect(verifyAt(300)).resolves.toBeDefined();
  });

  it("refuses a delivery more than 5 minutes old: a replay", async () => {
    await expect(verifyAt(301)).rejects.toThrow(/too far from now/);
  });

  it("refuses a delivery timestamped more than 5 minutes ahead: a clock out of sync", async () => {
    await expect(verifyAt(-301)).rejects.toThrow(/too far from now/);
  });

  it("applies a tolerance of the receiver's choosing", async () => {
    await expect(verifyAt(61, 60)).rejects.toThrow(WebhookVerificationError);
    await expect(verifyAt(59, 60)).resolves.toBeDefined();
  });

  it("checks against the real clock by default", async () => {
    const old = signedByStandardWebhooks(secret, payload, new Date(Date.now() - 10 * 60 * 1000));
    await expect(webhooks.verify(payload, old, secret)).rejects.toThrow(/too far from now/);
  });
});

describe("the signature header", () => {
  it("may carry several signatures, as during a secret rotation; one valid one is enough", async () => {
    const secret = newSecret();
    const headers = signedByStandardWebhooks(secret);
    const stale = signedByStandardWebhooks(newSecret())["webhook-signature"];
    headers["webhook-signature"] = `${stale} ${headers["webhook-signature"]}`;
    await expect(webhooks.verify(payload, headers, secret)).resolves.toEqual(JSON.parse(payload));
  });

  it("counts only v1 signatures", async () => {
    const secret = newSecret();
    const headers = signedByStandardWebhooks(secret);
    headers["webhook-signature"] = headers["webhook-signature"].replace(/^v1,/, "v2,");
    await expect(webhooks.verify(payload, headers, secret)).rejects.toThrow(/No matching signature/);
  });

  it("ignores entries that are not base64", async () => {
    const secret = newSecret();
    const headers = signedByStandardWebhooks(secret);
    headers["webhook-signature"] = `v1,%%% v1 ${headers["webhook-signature"]}`;
    await expect(webhooks.verify(payload, headers, secret)).resolves.toBeDefined();
  });
});

describe("the headers argument", () => {
  it("may be a Node IncomingHttpHeaders-style record, in any case", async () => {
    const secret = newSecret();
    const signed = signedByStandardWebhooks(secret);
    const headers = { "Webhook-Id": signed["webhook-id"], "WEBHOOK-TIMESTAMP": signed["webhook-timestamp"], "webhook-Signature": signed["webhook-signature"], host: "example.com" };
    await expect(webhooks.verify(payload, headers, secret)).resolves.toBeDefined();
  });

  it("may hold a header's repeated values as an array, as Node gives them", async () => {
    const secret = newSecret();
    const signed = signedByStandardWebhooks(secret);
    const headers = { ...signed, "webhook-signature": ["v1,c3RhbGU=", signed["webhook-signature"]] };
    await expect(webhooks.verify(payload, headers, secret)).resolves.toBeDefined();
  });

  it("may be a fetch Headers object", async () => {
    const secret = newSecret();
    await expect(webhooks.verify(payload, new Headers(signedByStandardWebhooks(secret)), secret)).resolves.toBeDefined();
  });
});

describe("the body argument", () => {
  it("may be the raw bytes", async () => {
    const secret = newSecret();
    await expect(webhooks.verify(new TextEncoder().encode(payload), signedByStandardWebhooks(secret), secret)).resolves.toEqual(JSON.parse(payload));
  });

  it("must be the bytes as received: re-serialised JSON no longer matches", async () => {
    const secret = newSecret();
    const reserialised = JSON.stringify(JSON.parse(payload), null, 2);
    await expect(webhooks.verify(reserialised, signedByStandardWebhooks(secret), secret)).rejects.toThrow(WebhookVerificationError);
  });

  it("is refused when it is signed but not JSON", async () => {
    const secret = newSecret();
    await expect(webhooks.verify("not json", signedByStandardWebhooks(secret, "not json"), secret)).rejects.toThrow(/not JSON/);
  });
});

describe("the secret", () => {
  it("is refused with a WebhookVerificationError when it is not whsec_ + base64", async () => {
    const secret = newSecret();
    await expect(webhooks.verify(payload, signedByStandardWebhooks(secret), "whsec_not base64!")).rejects.toThrow(/whsec_/);
    await expect(webhooks.sign(payload, "hunter2!", { id: "msg_1" })).rejects.toThrow(WebhookVerificationError);
  });

  it("may be given without its whsec_ prefix, as standardwebhooks allows", async () => {
    const secret = newSecret();
    await expect(webhooks.verify(payload, signedByStandardWebhooks(secret), secret.slice("whsec_".length))).resolves.toBeDefined();
  });
});

describe("webhooks.sign", () => {
  it("produces headers that the standardwebhooks library verifies", async () => {
    const secret = newSecret();
    const headers = await webhooks.sign(payload, secret, { id: "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W" });
    expect(new Webhook(secret).verify(payload, headers)).toEqual(JSON.parse(payload));
  });

  it("timestamps with now unless told otherwise", async () => {
    const before = nowSeconds();
    const headers = await webhooks.sign(payload, newSecret(), { id: "msg_1" });
    expect(Number(headers["webhook-timestamp"])).toBeGreaterThanOrEqual(before);
    expect(Number(headers["webhook-timestamp"])).toBeLessThanOrEqual(nowSeconds());
  });

  it("signs exactly what standardwebhooks signs for the same id, time and body", async () => {
    const secret = newSecret();
    const at = new Date("2026-11-21T10:00:00Z");
    const ours = await webhooks.sign(payload, secret, { id: "msg_1", timestamp: at.getTime() / 1000 });
    expect(ours).toEqual({ "webhook-id": "msg_1", "webhook-timestamp": String(at.getTime() / 1000), "webhook-signature": new Webhook(secret).sign("msg_1", at, payload) });
  });

  it("round-trips through verify", async () => {
    const secret = newSecret();
    const headers = await webhooks.sign(payload, secret, { id: "msg_1" });
    await expect(webhooks.verify(payload, headers, secret)).resolves.toEqual(JSON.parse(payload));
  });
});
