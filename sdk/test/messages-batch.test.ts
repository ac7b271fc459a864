import { describe, expect, it } from "vitest";
import { BadRequestError, type MessageBatch } from "../src/index.js";
import { ANY_KEY, aMessage, contractExample, fakeClient, fakeFetch, json, NOW, problem, theRequest } from "./helpers.js";

/** `mr.messages.createBatch` (`createMessageBatch`) over a fake fetch. */
const batch = contractExample<MessageBatch>("MessageBatch");
const messages = [aMessage({ to: "ada@example.com" }), aMessage({ to: "grace@" })];

describe("messages.createBatch", () => {
  it("POSTs the messages to /v1/messages/batch with an Idempotency-Key", async () => {
    const fake = fakeFetch([json(200, batch)]);
    await fakeClient(fake).messages.createBatch({ messages });
    expect(theRequest(fake)).toEqual({ method: "POST", target: "/v1/messages/batch", body: { messages }, idempotencyKey: ANY_KEY });
  });

  it("resolves, without throwing, to one answer per message even when some were refused", async () => {
    const fake = fakeFetch([json(200, batch)]);
    const answer = await fakeClient(fake).messages.createBatch({ messages });
    expect(answer.data.map((item) => [item.index, item.status, item.message?.id ?? item.error?.code])).toEqual([
      [0, 202, "msg_01jd3k8m2q5v7w9x1y3z5a7b9c"],
      [1, 422, "validation_failed"],
    ]);
  });

  it("sends the same Idempotency-Key on a retry, so no message of the batch is sent twice", async () => {
    const fake = fakeFetch([problem(503, "service_unavailable", { headers: NOW }), json(200, batch)]);
    await fakeClient(fake).messages.createBatch({ messages }, { idempotencyKey: "receipts-2026-11-21" });
    expect(fake.requests.map((request) => request.headers.get("idempotency-key"))).toEqual(["receipts-2026-11-21", "receipts-2026-11-21"]);
    expect(fake.requests[1]?.body).toBe(fake.requests[0]?.body);
  });

  it("throws the typed error when the batch as a whole is refused", async () => {
    const fake = fakeFetch([problem(400, "invalid_json")]);
    await expect(fakeClient(fake).messages.createBatch({ messages })).rejects.toBeInstanceOf(BadRequestError);
  });
});
