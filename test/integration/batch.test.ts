import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { databases } from "../helpers/databases.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

/** Files given by URL, served on loopback (the test app allows private targets); it counts what it was asked. */
const files = { base: "", hits: [] as string[] };
let fileServer: Server;
beforeAll(async () => {
  fileServer = createServer((req, res) => {
    files.hits.push(req.url ?? "");
    if (req.url === "/big.bin") res.writeHead(200, { "content-type": "application/octet-stream" }).end(Buffer.alloc(9 * 1024 * 1024, 7));
    else if (req.url === "/forwarded.eml") res.writeHead(200, { "content-type": "message/rfc822" }).end("Subject: hi\n\nsaved with Unix line ends\n");
    else res.writeHead(200, { "content-type": "application/pdf" }).end("%PDF-1.7\n%%EOF\n");
  });
  await new Promise<void>((resolve) => fileServer.listen(0, "127.0.0.1", resolve));
  files.base = `http://127.0.0.1:${(fileServer.address() as AddressInfo).port}`;
});
afterAll(async () => {
  fileServer.closeAllConnections();
  await new Promise((resolve) => fileServer.close(resolve));
});

describe.each(databases)("createMessageBatch ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    files.hits.length = 0;
    t = await createTestApp(database);
  });
  afterEach(async () => t.close());

  const batch = (messages: unknown[], options: { key?: string; idempotencyKey?: string } = {}) =>
    t.call({ method: "POST", url: "/v1/messages/batch", payload: { messages }, ...(options.key ? { key: options.key } : {}), headers: options.idempotencyKey ? { "idempotency-key": options.idempotencyKey } : {} });
  const count = async (table: string) => Number(((await t.runtime.db.knex(table).count({ n: "*" }).first()) as { n: number | string }).n);
  type Item = { index: number; status: number; message: { id: string; idempotency_key: string | null } | null; error: { code: string; errors?: Array<{ pointer: string }> } | null };

  it("answers each message on its own: the valid ones are accepted, each invalid one gets its own problem with pointers inside it", async () => {
    const res = await batch([aMessage({ to: "ada@example.com" }), aMessage({ to: "not-an-address" }), { to: 7, subject: "x" }, aMessage({ to: "grace@example.com" })]);
    expect(res.statusCode).toBe(200);
    const items = res.json().data as Item[];
    expect(items.map((i) => [i.index, i.status])).toEqual([
      [0, 202],
      [1, 422],
      [2, 422],
      [3, 202],
    ]);
    expect(items[1]!.error).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/to" }] });
    expect(items[2]!.error!.errors!.map((e) => e.pointer)).toContain("/to");
    expect(await count("messages")).toBe(2);
    await t.drain();
    for (const item of [items[0]!, items[3]!]) expect((await t.call({ method: "GET", url: `/v1/messages/${item.message!.id}` })).json().status).toBe("delivered");
  });

  it("says what is wrong with a message in the same words createMessage uses for it", async () => {
    const wrong = [aMessage({ to: "x" }), aMessage({ to: ["ada@example.com", "x"] }), aMessage({ to: 42 }), aMessage({ attachments: [{ filename: "a.txt" }] })];
    const items = (await batch(wrong)).json().data as Item[];
    for (const [index, message] of wrong.entries()) {
      const single = await t.call({ method: "POST", url: "/v1/messages", payload: message });
      expect(single.statusCode).toBe(422);
      expect(items[index]!.error!.errors, JSON.stringify(message)).toEqual(single.json().errors);
    }
  });

  it("refuses a malformed batch as a whole, storing nothing", async () => {
    for (const payload of [{}, { messages: [] }, { messages: Array.from({ length: 101 }, () => aMessage()) }, { messages: [aMessage()], extra: true }, { messages: "no" }]) {
      const res = await t.call({ method: "POST", url: "/v1/messages/batch", payload });
      expect(res.statusCode, JSON.stringify(payload).slice(0, 80)).toBe(422);
    }
    expect(await count("messages")).toBe(0);
  });

  it("accepts 100 messages, and a sending_access key may send them", async () => {
    const key = (await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "sender", permission: "sending_access" } })).json().secret as string;
    const res = await batch(Array.from({ length: 100 }, (_, i) => aMessage({ to: `user${i}@example.com` })), { key });
    expect((res.json().data as Item[]).every((i) => i.status === 202)).toBe(true);
    expect(await count("messages")).toBe(100);
  });

  it("replays the whole answer under the same Idempotency-Key and sends nothing twice; each message records <key>#<index>", async () => {
    const messages = [aMessage({ to: "ada@example.com" }), aMessage({ to: "bad" }), aMessage({ to: "grace@example.com" })];
    const first = await batch(messages, { idempotencyKey: "nightly-42" });
    const again = await batch(messages, { idempotencyKey: "nightly-42" });
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.body).toBe(first.body);
    const items = first.json().data as Item[];
    expect(items.map((i) => i.message?.idempotency_key ?? null)).toEqual(["nightly-42#0", null, "nightly-42#2"]);
    expect(await count("messages")).toBe(2);
  });

  it("refuses an Idempotency-Key longer than 252 characters, which #<index> would take past 255, storing nothing", async () => {
    for (const key of ["k".repeat(253), `"${"k".repeat(253)}"`, "k".repeat(255)]) {
      const res = await batch([aMessage()], { idempotencyKey: key });
      expect(res.statusCode, key).toBe(422);
      expect(res.json().code).toBe("validation_failed");
      for (const error of res.json().errors) expect(error).toMatchObject({ location: "header", pointer: "/idempotency-key" });
    }
    for (const table of ["messages", "idempotency_keys"]) expect(await count(table), table).toBe(0);
    // 252 is the longest: its 100th message stores 255 characters.
    const longest = "k".repeat(252);
    const res = await batch(Array.from({ length: 100 }, () => aMessage()), { idempotencyKey: longest });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect((res.json().data as Item[])[99]!.message!.idempotency_key).toBe(`${longest}#99`);
    expect(await count("messages")).toBe(100);
  });

  it("answers a message whose stored values would not fit with its own 422, and accepts the others", async () => {
    const metadata = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`key${i}`, "😀".repeat(500)]));
    const res = await batch([aMessage({ to: "ada@example.com" }), aMessage({ metadata }), aMessage({ to: "grace@example.com" })], { idempotencyKey: "big-1" });
    expect(res.statusCode).toBe(200);
    const items = res.json().data as Item[];
    expect(items.map((i) => i.status)).toEqual([202, 422, 202]);
    expect(items[1]!.error).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/metadata" }] });
    expect(await count("messages")).toBe(2);
  });

  it("finds the messages a crashed first attempt stored instead of sending them again", async () => {
    const messages = [aMessage({ to: "ada@example.com" }), aMessage({ to: "grace@example.com" })];
    const first = (await batch(messages, { idempotencyKey: "crashy" })).json().data as Item[];
    // The stored answer is lost (the process died before it was kept): only the messages remain.
    await t.runtime.db.knex("idempotency_keys").delete();
    const retry = (await batch(messages, { idempotencyKey: "crashy" })).json().data as Item[];
    expect(retry.map((i) => i.message!.id)).toEqual(first.map((i) => i.message!.id));
    expect(await count("messages")).toBe(2);
  });

  it("keeps its messages' keys apart from a single message's: a message sent with the literal key <key>#0 is not the batch's first message, either way round", async () => {
    const single = (await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ to: "single@example.com" }), headers: { "idempotency-key": "orders#0" } })).json() as { id: string };
    const items = (await batch([aMessage({ to: "ada@example.com" })], { idempotencyKey: "orders" })).json().data as Item[];
    expect(items[0]!.message!.id).not.toBe(single.id);
    expect(items[0]!.message!.idempotency_key).toBe("orders#0");
    const later = (await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ to: "later@example.com" }), headers: { "idempotency-key": "invoices#1" } })).json() as { id: string };
    const first = ((await batch([aMessage(), aMessage()], { idempotencyKey: "invoices" })).json().data as Item[])[1]!.message!.id;
    expect(later.id).not.toBe(first);
    expect(await count("messages")).toBe(5);
    for (const id of [single.id, items[0]!.message!.id]) expect((await t.call({ method: "GET", url: `/v1/messages/${id}` })).json().to).toEqual([id === single.id ? "single@example.com" : "ada@example.com"]);
  });

  it("checks each live message's sender domain and the monthly quota, message by message, and counts live usage only", async () => {
    await t.verifiedDomain("acme.example");
    await t.call({ method: "PATCH", url: "/v1/workspace", payload: { monthly_quota: 2 } });
    const res = await batch([aMessage({ to: ["a@example.com", "b@example.com"] }), aMessage({ from: "x@unverified.example" }), aMessage(), aMessage()], { key: t.workspace.liveKey });
    const items = res.json().data as Item[];
    expect(items.map((i) => [i.status, i.error?.code ?? null])).toEqual([
      [202, null],
      [422, "sender_domain_not_verified"],
      [202, null],
      [429, "monthly_quota_exceeded"],
    ]);
    await batch([aMessage(), aMessage()]); // sandbox: never counted, never limited
    const usage = (await t.call({ method: "GET", url: "/v1/usage", key: t.workspace.liveKey })).json();
    expect(usage.totals).toEqual({ messages: 2, recipients: 3 });
    expect(usage.quota).toMatchObject({ monthly_messages: 2, used: 2, remaining: 0 });

    const single = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage(), key: t.workspace.liveKey });
    expect(single.statusCode).toBe(429);
    expect(single.json().code).toBe("monthly_quota_exceeded");
    expect(Number(single.headers["retry-after"])).toBeGreaterThan(0);
  });

  it("fetches no file of a message the quota refuses, counting the batch's messages before it; a message refused for its file takes no quota", async () => {
    await t.verifiedDomain("acme.example");
    await t.call({ method: "PATCH", url: "/v1/workspace", payload: { monthly_quota: 3 } });
    const invoice = { url: `${files.base}/invoice.pdf` };
    const res = await batch([aMessage({ attachments: [{ url: "http://127.0.0.1:1/gone.pdf" }] }), aMessage(), aMessage(), aMessage({ attachments: [invoice] }), aMessage({ attachments: [{ url: `${files.base}/second.pdf` }] }), aMessage()], { key: t.workspace.liveKey });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const items = res.json().data as Item[];
    expect(items.map((i) => [i.status, i.error?.code ?? null])).toEqual([
      [422, "validation_failed"],
      [202, null],
      [202, null],
      [202, null],
      [429, "monthly_quota_exceeded"],
      [429, "monthly_quota_exceeded"],
    ]);
    // The fourth message's file was fetched; the fifth's was not: the quota had refused it.
    expect(files.hits).toEqual(["/invoice.pdf"]);
    expect(await count("messages")).toBe(3);
  });

  it("answers a retried batch's messages with files by URL that were accepted with those messages, even at the quota (the first answer was lost)", async () => {
    await t.verifiedDomain("acme.example");
    await t.call({ method: "PATCH", url: "/v1/workspace", payload: { monthly_quota: 2 } });
    const messages = [aMessage({ attachments: [{ url: `${files.base}/invoice.pdf` }] }), aMessage({ attachments: [{ url: `${files.base}/receipt.pdf` }] })];
    const first = (await batch(messages, { key: t.workspace.liveKey, idempotencyKey: "with-files" })).json().data as Item[];
    expect(first.map((i) => i.status)).toEqual([202, 202]);
    // What a crash between storing the messages and storing the answer leaves: the messages alone.
    await t.runtime.db.knex("idempotency_keys").delete();
    const retry = (await batch(messages, { key: t.workspace.liveKey, idempotencyKey: "with-files" })).json().data as Item[];
    expect(retry.map((i) => [i.status, i.error?.code ?? null])).toEqual([
      [202, null],
      [202, null],
    ]);
    expect(retry.map((i) => i.message!.id)).toEqual(first.map((i) => i.message!.id));
    expect(await count("messages")).toBe(2);
  });

  it("answers a message too large to store (8 MiB of html and a 9 MiB file by URL) with its own 422, and accepts the others, on either database", async () => {
    const big = aMessage({ html: `<p>${"a".repeat(8 * 1024 * 1024)}</p>`, attachments: [{ url: `${files.base}/big.bin` }] });
    const res = await batch([big, aMessage({ to: "ada@example.com" }), aMessage({ to: "grace@example.com" })]);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const items = res.json().data as Item[];
    expect(items.map((i) => i.status)).toEqual([422, 202, 202]);
    expect(items[0]!.error).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/attachments", message: expect.stringMatching(/at most 12,582,912 bytes/) }] });
    expect(await count("messages")).toBe(2);
  });

  it("sends a fetched file whose answer says message/rfc822 but is not 7-bit clean as application/octet-stream", async () => {
    const items = (await batch([aMessage({ attachments: [{ url: `${files.base}/forwarded.eml` }] })])).json().data as Array<Item & { message: { attachments: Array<{ content_type: string }> } | null }>;
    expect(items[0]!.status).toBe(202);
    expect(items[0]!.message!.attachments).toEqual([expect.objectContaining({ filename: "forwarded.eml", content_type: "application/octet-stream" })]);
  });

  it("answers a message that fails to store for an unexpected reason with its own 500, keeping the others it stored", async () => {
    // A trigger stands in for any failure of the database that is not the message's fault.
    if (database.name === "sqlite") await t.runtime.db.knex.raw("CREATE TRIGGER boom BEFORE INSERT ON messages WHEN NEW.subject = 'boom' BEGIN SELECT RAISE(ABORT, 'boom'); END");
    else await t.runtime.db.knex.raw("CREATE TRIGGER boom BEFORE INSERT ON messages FOR EACH ROW BEGIN IF NEW.subject = 'boom' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'boom'; END IF; END");
    const res = await batch([aMessage({ to: "ada@example.com" }), aMessage({ subject: "boom" }), aMessage({ to: "grace@example.com" })], { idempotencyKey: "boom-1" });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const items = res.json().data as Item[];
    expect(items.map((i) => i.status)).toEqual([202, 500, 202]);
    expect(items[1]!.error).toMatchObject({ code: "internal_error", status: 500 });
    expect(JSON.stringify(items[1]!.error)).not.toContain("boom");
    expect(await count("messages")).toBe(2);
  });

  describe("validation: strict", () => {
    const strict = (messages: unknown[], options: { key?: string; idempotencyKey?: string } = {}) =>
      t.call({ method: "POST", url: "/v1/messages/batch", payload: { messages, validation: "strict" }, ...(options.key ? { key: options.key } : {}), headers: options.idempotencyKey ? { "idempotency-key": options.idempotencyKey } : {} });

    it("accepts every message when all pass, answered as a permissive batch is", async () => {
      const res = await strict([aMessage({ to: "ada@example.com" }), aMessage({ to: "grace@example.com" })]);
      expect(res.statusCode, res.body).toBe(200);
      expect((res.json().data as Item[]).map((i) => i.status)).toEqual([202, 202]);
      expect(await count("messages")).toBe(2);
    });

    it("refuses the whole batch with one 422 batch_rejected listing every problem under its message, and stores nothing", async () => {
      const res = await strict([aMessage(), aMessage({ to: "not-an-address" }), { to: 7, subject: "x" }, aMessage()]);
      expect(res.statusCode).toBe(422);
      const problem = res.json();
      expect(problem).toMatchObject({ code: "batch_rejected", status: 422 });
      expect(problem.detail).toContain("1, 2");
      const pointers = (problem.errors as Array<{ pointer: string }>).map((e) => e.pointer);
      expect(pointers).toContain("/messages/1/to");
      expect(pointers).toContain("/messages/2/to");
      expect(pointers.every((p) => p.startsWith("/messages/1/") || p.startsWith("/messages/2/"))).toBe(true);
      for (const table of ["messages", "message_recipients", "events", "jobs"]) expect(await count(table), table).toBe(0);
    });

    it("puts a live check's problem (an unverified sender domain) under its message too", async () => {
      await t.verifiedDomain("acme.example");
      const res = await strict([aMessage(), aMessage({ from: "x@unverified.example" })], { key: t.workspace.liveKey });
      expect(res.statusCode).toBe(422);
      expect(res.json().errors).toEqual([{ location: "body", pointer: "/messages/1/from", message: expect.stringContaining("unverified.example") }]);
      expect(await count("messages")).toBe(0);
    });

    it("answers 429 for the whole batch when the quota cannot hold all of it, and stores none of it", async () => {
      await t.verifiedDomain("acme.example");
      await t.call({ method: "PATCH", url: "/v1/workspace", payload: { monthly_quota: 2 } });
      const res = await strict([aMessage(), aMessage(), aMessage()], { key: t.workspace.liveKey });
      expect(res.statusCode).toBe(429);
      expect(res.json().code).toBe("monthly_quota_exceeded");
      expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
      expect(await count("messages")).toBe(0);
      expect((await strict([aMessage(), aMessage()], { key: t.workspace.liveKey })).statusCode).toBe(200);
    });

    it("answers 429 for the whole batch past the quota when a message has a file by URL, and fetches nothing", async () => {
      await t.verifiedDomain("acme.example");
      await t.call({ method: "PATCH", url: "/v1/workspace", payload: { monthly_quota: 1 } });
      expect((await t.call({ method: "POST", url: "/v1/messages", key: t.workspace.liveKey, payload: aMessage() })).statusCode).toBe(202);
      const res = await strict([aMessage({ attachments: [{ url: `${files.base}/invoice.pdf` }] })], { key: t.workspace.liveKey });
      expect(res.statusCode, res.body).toBe(429);
      expect(res.json().code).toBe("monthly_quota_exceeded");
      expect(files.hits).toEqual([]);
      expect(await count("messages")).toBe(1);
    });

    it("fetches no file of a batch that another message's problem refuses, and refuses the batch for a file that cannot be fetched", async () => {
      const res = await strict([aMessage({ to: "not-an-address" }), aMessage({ attachments: [{ url: `${files.base}/invoice.pdf` }] })]);
      expect(res.statusCode).toBe(422);
      expect(res.json().errors.map((e: { pointer: string }) => e.pointer)).toEqual(["/messages/0/to"]);
      expect(files.hits).toEqual([]);
      const unfetchable = await strict([aMessage({ attachments: [{ url: `${files.base}/invoice.pdf` }] }), aMessage({ attachments: [{ url: "http://127.0.0.1:1/gone.pdf" }] })]);
      expect(unfetchable.statusCode).toBe(422);
      expect(unfetchable.json()).toMatchObject({ code: "batch_rejected", errors: [{ pointer: "/messages/1/attachments/0/url" }] });
      expect(await count("messages")).toBe(0);
    });

    it("stores a valid batch whose messages together are far larger as SQL than as counted characters, and the requests written with it", async () => {
      // Each message is valid, but its quotes and backslashes are escaped in the statement that
      // stores it: the 50 in one INSERT were 19.9 MB, past MariaDB's max_allowed_packet, and the
      // batch (one unit: never split) failed with 503 every time, with whatever shared its commit.
      const name = "\\".repeat(200);
      const heavy = (i: number) =>
        aMessage({
          to: Array.from({ length: 50 }, (_, k) => `${name} <r${k}.${"a".repeat(50)}@example.com>`),
          reply_to: Array.from({ length: 50 }, (_, k) => `${name} <p${k}.${"a".repeat(50)}@example.com>`),
          subject: `hello ${i}`,
          headers: Object.fromEntries(Array.from({ length: 50 }, (_, k) => [`X-H${k}`, '"'.repeat(640)])),
          metadata: Object.fromEntries(Array.from({ length: 50 }, (_, k) => [`k${k}`, '"'.repeat(500)])),
        });
      const [res, neighbour] = await Promise.all([strict(Array.from({ length: 50 }, (_, i) => heavy(i))), t.call({ method: "POST", url: "/v1/messages", payload: aMessage() })]);
      expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
      expect((res.json().data as Item[]).every((i) => i.status === 202)).toBe(true);
      expect(neighbour.statusCode, neighbour.body).toBe(202);
      expect(await count("messages")).toBe(51);
      const [stored] = await t.runtime.db.knex("messages").where({ subject: "hello 7" }).select("headers");
      expect(JSON.parse(stored.headers)["X-H3"]).toBe('"'.repeat(640));
    });

    it("keeps no answer for a rejected batch under its Idempotency-Key, so the fixed batch can be sent with the same key", async () => {
      expect((await strict([aMessage({ to: "not-an-address" })], { idempotencyKey: "strict-1" })).statusCode).toBe(422);
      const fixed = await strict([aMessage()], { idempotencyKey: "strict-1" });
      expect(fixed.statusCode).toBe(200);
      expect(await count("messages")).toBe(1);
    });
  });

  it("keeps another workspace's messages out of reach", async () => {
    const items = (await batch([aMessage()])).json().data as Item[];
    const res = await t.call({ method: "GET", url: `/v1/messages/${items[0]!.message!.id}`, key: t.other.sandboxKey });
    expect(res.statusCode).toBe(404);
  });
});
