import { describe, expect, it } from "vitest";
import { NotFoundError, type InboundMessage } from "../src/index.js";
import { acceptedMessage, contractExample, fakeClient, fakeFetch, json, problem, theRequest, twoPages } from "./helpers.js";

/**
 * A message's replies (`mr.messages.listReplies`), and the inbound messages themselves
 * (`mr.inbound`, tag `Inbound`) with their attachments' bytes, over a fake fetch. The answers
 * are the contract's examples; `prism.test.ts` checks the requests against the contract.
 */
const MESSAGE_ID = "msg_01jd3k8m2q5v7w9x1y3z5a7b9c";
const INBOUND_ID = "inb_01jd3k8m2q5v7w9x1y3z5a7b9c";
const reply = contractExample<InboundMessage>("Reply");

/** An attachment as the API answers it: its bytes, its media type and file name in headers. */
const bytes = (content: Uint8Array<ArrayBuffer>, type = "image/png") =>
  new Response(content, { status: 200, headers: { "content-type": type, "content-disposition": 'attachment; filename="screenshot.png"', "content-length": String(content.byteLength) } });

describe("messages.listReplies", () => {
  it("GETs /v1/messages/{message_id}/replies with the query and resolves to a page of replies", async () => {
    const fake = fakeFetch([json(200, { data: [reply], has_more: false, next_cursor: null })]);
    const page = await fakeClient(fake).messages.listReplies(MESSAGE_ID, { limit: 10 });
    expect(page.data).toEqual([reply]);
    expect(page.data[0]?.authentication).toEqual({ spf: "pass", dkim: "pass", dmarc: "pass" });
    expect(theRequest(fake)).toEqual({ method: "GET", target: `/v1/messages/${MESSAGE_ID}/replies?limit=10`, body: undefined, idempotencyKey: null });
  });

  it("walks every reply with for await, oldest first as the API pages them", async () => {
    const fake = twoPages(reply, { ...reply, id: "inb_2" });
    const ids: string[] = [];
    for await (const each of fakeClient(fake).messages.listReplies(MESSAGE_ID)) ids.push(each.id);
    expect(ids).toEqual([INBOUND_ID, "inb_2"]);
  });

  it("throws NotFoundError for a message the environment does not have", async () => {
    const fake = fakeFetch([problem(404, "not_found")]);
    await expect(fakeClient(fake).messages.listReplies(MESSAGE_ID)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("inbound.get", () => {
  it("GETs /v1/inbound/{inbound_id} and resolves to the reply with its quoted history apart", async () => {
    const fake = fakeFetch([json(200, reply)]);
    const inbound = await fakeClient(fake).inbound.get(INBOUND_ID);
    expect(inbound).toEqual(reply);
    expect(inbound.text).toBe("Thanks, that worked!");
    expect(inbound.quoted_text).toContain("> Hello Ada");
    expect(theRequest(fake)).toEqual({ method: "GET", target: `/v1/inbound/${INBOUND_ID}`, body: undefined, idempotencyKey: null });
  });

  it("escapes the id in the path", async () => {
    const fake = fakeFetch([json(200, reply)]);
    await fakeClient(fake).inbound.get("inb/../x");
    expect(theRequest(fake).target).toBe("/v1/inbound/inb%2F..%2Fx");
  });
});

describe("inbound.getAttachment", () => {
  it("GETs /v1/inbound/{inbound_id}/attachments/{index} and resolves to the bytes exactly, not text", async () => {
    // Bytes that are not UTF-8: decoding them as text would change them.
    const content = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0xfe]);
    const fake = fakeFetch([bytes(content)]);
    const downloaded = await fakeClient(fake).inbound.getAttachment(INBOUND_ID, 0);
    expect(downloaded).toBeInstanceOf(Uint8Array);
    expect([...downloaded]).toEqual([...content]);
    expect(theRequest(fake)).toEqual({ method: "GET", target: `/v1/inbound/${INBOUND_ID}/attachments/0`, body: undefined, idempotencyKey: null });
  });

  it("resolves an empty attachment to no bytes", async () => {
    const fake = fakeFetch([bytes(new Uint8Array(0), "text/plain")]);
    const downloaded = await fakeClient(fake).inbound.getAttachment(INBOUND_ID, 1);
    expect(downloaded).toEqual(new Uint8Array(0));
  });

  it("throws NotFoundError, with the problem's code, for an index the reply does not have", async () => {
    const fake = fakeFetch([problem(404, "not_found")]);
    const error = await fakeClient(fake).inbound.getAttachment(INBOUND_ID, 7).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("messages.create with tracking", () => {
  it("sends track_opens, track_clicks, track_replies and unsubscribe as given", async () => {
    const fake = fakeFetch([acceptedMessage()]);
    await fakeClient(fake).messages.create({ to: "ada@example.com", subject: "Hi", html: "<p>Hi</p>", track_opens: true, track_clicks: false, track_replies: true, unsubscribe: true });
    expect(theRequest(fake).body).toEqual({ to: "ada@example.com", subject: "Hi", html: "<p>Hi</p>", track_opens: true, track_clicks: false, track_replies: true, unsubscribe: true });
  });
});
