import { describe, expect, it } from "vitest";
import { UnprocessableEntityError, type MessagePreview } from "../src/index.js";
import { ANY_KEY, contractExample, fakeClient, fakeFetch, json, NOW, problem, theRequest } from "./helpers.js";

/** `mr.messages.preview` (`previewMessage`) over a fake fetch; the answer is the contract's example. */
const example = contractExample<MessagePreview>("MessagePreview");
const body = { to: ["ada@example.com", "grace@example.com"], template: { slug: "welcome", variables: { first_name: "Ada" } } };

describe("messages.preview", () => {
  it("POSTs what messages.create takes to /v1/messages/preview and resolves to the preview", async () => {
    const fake = fakeFetch([json(200, example)]);
    const preview = await fakeClient(fake).messages.preview(body);
    expect(preview).toEqual(example);
    expect(preview.recipients.find((r) => r.suppression !== null)?.suppression?.reason).toBe("hard_bounce");
    expect(theRequest(fake)).toEqual({ method: "POST", target: "/v1/messages/preview", body, idempotencyKey: ANY_KEY });
  });

  it("throws what a send would throw, without retrying", async () => {
    const fake = fakeFetch([problem(422, "sender_domain_not_verified", { headers: NOW })]);
    const error = await fakeClient(fake).messages.preview(body).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error).toMatchObject({ status: 422, code: "sender_domain_not_verified" });
    expect(fake.requests).toHaveLength(1);
  });
});
