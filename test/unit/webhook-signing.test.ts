import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { signature, webhookHeaders } from "../../src/webhooks/signing.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

describe("webhook signing (Standard Webhooks v1)", () => {
  it("matches the specification's published test vector", () => {
    // https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
    const body = '{"test": 2432232314}';
    expect(signature(SECRET, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body)).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it("produces headers the public standardwebhooks package verifies", () => {
    const body = JSON.stringify({ id: "evt_1", type: "message.delivered" });
    const now = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders([SECRET], "evt_1", now, body);
    expect(headers["content-type"]).toBe("application/json");
    expect(() => new Webhook(SECRET).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(SECRET).verify(`${body} `, headers)).toThrow();
  });

  it("lists one signature per secret during a rotation, each verifying alone", () => {
    const other = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
    const body = "{}";
    const headers = webhookHeaders([SECRET, other], "evt_2", Math.floor(Date.now() / 1000), body);
    expect(headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    for (const secret of [SECRET, other]) expect(() => new Webhook(secret).verify(body, headers)).not.toThrow();
    expect(() => new Webhook("whsec_" + Buffer.alloc(32, 1).toString("base64")).verify(body, headers)).toThrow();
  });
});
