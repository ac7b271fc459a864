import { describe, expect, it } from "vitest";
import { ConflictError, UnprocessableEntityError, type Message } from "../src/index.js";
import { ANY_KEY, contractExample, fakeClient, fakeFetch, json, NOW, problem, theRequest } from "./helpers.js";

/** `mr.messages.reschedule` (`rescheduleMessage`) over a fake fetch; the answers are the contract's example. */
const MESSAGE_ID = "msg_01jd3k8m2q5v7w9x1y3z5a7b9c";
const scheduled = contractExample<Message>("ScheduledMessage");

describe("messages.reschedule", () => {
  it("POSTs the new scheduled_at to /v1/messages/{id}/reschedule with an Idempotency-Key and resolves to the message", async () => {
    const fake = fakeFetch([json(200, scheduled)]);
    const message = await fakeClient(fake).messages.reschedule(MESSAGE_ID, { scheduled_at: "2026-11-23T09:00:00Z" });
    expect(message).toEqual(scheduled);
    expect(theRequest(fake)).toEqual({
      method: "POST",
      target: `/v1/messages/${MESSAGE_ID}/reschedule`,
      body: { scheduled_at: "2026-11-23T09:00:00Z" },
      idempotencyKey: ANY_KEY,
    });
  });

  it("sends scheduled_at: null as null, which asks to send it now", async () => {
    const fake = fakeFetch([json(200, { ...scheduled, status: "queued", scheduled_at: null })]);
    await fakeClient(fake).messages.reschedule(MESSAGE_ID, { scheduled_at: null });
    // The key is required by the contract: a null dropped from the body would be a 422.
    expect(fake.requests[0]?.body).toBe('{"scheduled_at":null}');
  });

  it("sends the caller's own Idempotency-Key, and the same key and body on a retry", async () => {
    const fake = fakeFetch([problem(503, "service_unavailable", { headers: NOW }), json(200, scheduled)]);
    await fakeClient(fake).messages.reschedule(MESSAGE_ID, { scheduled_at: "2026-11-23T09:00:00Z" }, { idempotencyKey: "move-trial-reminder" });
    expect(fake.requests.map((request) => request.headers.get("idempotency-key"))).toEqual(["move-trial-reminder", "move-trial-reminder"]);
    expect(fake.requests[1]?.body).toBe(fake.requests[0]?.body);
  });

  it("throws ConflictError message_not_scheduled, without retrying, for a message no longer scheduled", async () => {
    const fake = fakeFetch([problem(409, "message_not_scheduled")]);
    const error = await fakeClient(fake).messages.reschedule(MESSAGE_ID, { scheduled_at: null }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ status: 409, code: "message_not_scheduled" });
    expect(fake.requests).toHaveLength(1);
  });

  it("throws UnprocessableEntityError with the /scheduled_at pointer for a time too far ahead", async () => {
    const errors = [{ location: "body", pointer: "/scheduled_at", message: "must be at most 30 days ahead" }];
    const fake = fakeFetch([problem(422, "validation_failed", { extra: { errors } })]);
    const error = await fakeClient(fake).messages.reschedule(MESSAGE_ID, { scheduled_at: "2027-06-01T09:00:00Z" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect((error as UnprocessableEntityError).errors.map((field) => field.pointer)).toEqual(["/scheduled_at"]);
  });
});
