import type { LightMyRequestResponse } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { databases } from "../helpers/databases.js";
import { headersOf } from "../helpers/live-delivery.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

const HOUR = 3600 * 1000;
const DAY = 24 * HOUR;

describe.each(databases)("messages ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(database);
  });
  afterEach(async () => t.close());

  const send = (body: unknown, options: { key?: string; headers?: Record<string, string> } = {}) =>
    t.call({ method: "POST", url: "/v1/messages", payload: body as Record<string, unknown>, ...options });

  const sendOk = async (body: unknown = aMessage(), options: { key?: string } = {}) => {
    const res = await send(body, options);
    expect(res.statusCode, res.body).toBe(202);
    return res.json();
  };

  const get = async (id: string) => {
    const res = await t.call({ method: "GET", url: `/v1/messages/${id}` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  const list = async (query = "") => {
    const res = await t.call({ method: "GET", url: `/v1/messages${query}` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { data: Array<{ id: string; status: string }>; has_more: boolean; next_cursor: string | null };
  };

  const cancel = (id: string) => t.call({ method: "POST", url: `/v1/messages/${id}/cancel` });

  const events = async (id: string) => {
    const res = await t.call({ method: "GET", url: `/v1/messages/${id}/events?limit=100` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as Array<{ type: string; from_status: string | null; to_status: string | null; recipient: string | null; data: Record<string, unknown> }>;
  };

  const count = async (table: string) => Number(((await t.runtime.db.knex(table).count({ n: "*" }).first()) as { n: number | string }).n);

  /** A refused request leaves no trace: no message, recipient, event or job (DESIGN.md §11). */
  const expectNothingStored = async () => {
    expect((await list()).data).toEqual([]);
    expect(await count("messages")).toBe(0);
    expect(await count("message_recipients")).toBe(0);
    expect(await count("events")).toBe(0);
    expect(await count("jobs")).toBe(0);
  };

  const expectValidationFailure = (res: LightMyRequestResponse, pointers: string[]) => {
    expect(res.statusCode, res.body).toBe(422);
    expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
    const problem = res.json<{ request_id: string; errors: Array<{ pointer: string; message: string; location: string }> }>();
    expect(problem).toMatchObject({ status: 422, code: "validation_failed", type: "https://mailroom.dev/problems/validation_failed" });
    expect(problem.request_id).toBe(res.headers["request-id"]);
    expect(problem.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual([...pointers].sort());
    for (const error of problem.errors) expect(error.message).toEqual(expect.any(String));
  };

  describe("createMessage", () => {
    it("accepts a message with from, to, subject and html and queues it", async () => {
      const res = await send(aMessage());
      expect(res.statusCode).toBe(202);
      expect(res.json()).toMatchObject({
        object: "message",
        environment: "sandbox",
        status: "queued",
        from: "Acme <hello@acme.example>",
        to: ["ada@example.com"],
        cc: [],
        bcc: [],
        reply_to: [],
        subject: "Welcome",
        html: "<p>Hello Ada</p>",
        text: null,
        headers: {},
        attachments: [],
        tags: [],
        metadata: {},
        scheduled_at: null,
        idempotency_key: null,
        mime: null,
        recipients: [{ email: "ada@example.com", name: null, type: "to", status: "queued", detail: null }],
      });
      expect(res.json().id).toMatch(/^msg_[0-9a-z]{26}$/);
      expect(res.json().message_id_header).toBe(`<${res.json().id}@acme.example>`);
      expect(await count("jobs")).toBe(1);
    });

    it("answers with a Location whose message reads exactly like the 202 body", async () => {
      const res = await send(aMessage({ cc: "grace@example.com", tags: ["welcome"], metadata: { user: "42" } }));
      expect(res.statusCode).toBe(202);
      const body = res.json();
      expect(res.headers.location).toBe(`/v1/messages/${body.id}`);
      const fetched = await t.call({ method: "GET", url: res.headers.location as string });
      expect(fetched.statusCode).toBe(200);
      expect(fetched.json()).toEqual(body);
    });

    it("stores every field it is given: cc, bcc, reply_to, headers, attachments, tags and metadata", async () => {
      const body = await sendOk({
        from: "Acme <hello@acme.example>",
        to: ["ada@example.com", "Grace Hopper <grace@example.com>"],
        cc: "ops@acme.example",
        bcc: ["audit@acme.example"],
        reply_to: "support@acme.example",
        subject: "Your receipt",
        html: "<p>Thanks for your order.</p>",
        text: "Thanks for your order.",
        headers: { "X-Entity-Ref-ID": "order-1234" },
        attachments: [
          { filename: "receipt.txt", content: "VGhhbmsgeW91IQ==", content_type: "text/plain" },
          { filename: "logo.png", content: "iVBORw0KGgo=", content_id: "logo" },
        ],
        tags: ["receipt", "order:1234"],
        metadata: { order_id: "1234", customer: "ada" },
      });
      expect(body).toMatchObject({
        from: "Acme <hello@acme.example>",
        to: ["ada@example.com", "Grace Hopper <grace@example.com>"],
        cc: ["ops@acme.example"],
        bcc: ["audit@acme.example"],
        reply_to: ["support@acme.example"],
        subject: "Your receipt",
        html: "<p>Thanks for your order.</p>",
        text: "Thanks for your order.",
        headers: { "X-Entity-Ref-ID": "order-1234" },
        attachments: [
          { filename: "receipt.txt", content_type: "text/plain", size: 10, content_id: null },
          { filename: "logo.png", content_type: "image/png", size: 8, content_id: "logo" },
        ],
        tags: ["receipt", "order:1234"],
        metadata: { order_id: "1234", customer: "ada" },
        recipients: [
          { email: "ada@example.com", name: null, type: "to" },
          { email: "grace@example.com", name: "Grace Hopper", type: "to" },
          { email: "ops@acme.example", name: null, type: "cc" },
          { email: "audit@acme.example", name: null, type: "bcc" },
        ],
      });
      expect(await get(body.id)).toEqual(body);

      await t.drain();
      const mime = (await get(body.id)).mime as string;
      expect(mime).toContain("Reply-To: support@acme.example");
      expect(mime).toContain("To: ada@example.com, Grace Hopper <grace@example.com>");
      expect(mime).toMatch(/Content-Disposition: attachment; filename=receipt\.txt/);
      expect(mime).toContain("VGhhbmsgeW91IQ==");
      expect(mime).toContain("Content-ID: <logo>");
    });

    it("accepts a text-only message", async () => {
      const body = await sendOk(aMessage({ html: undefined, text: "Hello Ada" }));
      expect(body).toMatchObject({ html: null, text: "Hello Ada" });
      await t.drain();
      const message = await get(body.id);
      expect(message.mime).toContain("Content-Type: text/plain");
      expect(message.mime).not.toContain("text/html");
    });

    it("refuses a message without subject or content", async () => {
      expectValidationFailure(await send({ from: "hello@acme.example", to: "ada@example.com" }), ["/subject", "/html"]);
      await expectNothingStored();
    });

    it("sends from the workspace's default sender when from is left out", async () => {
      const patched = await t.call({ method: "PATCH", url: "/v1/workspace", payload: { default_from: "Acme Billing <billing@ACME.example>" } });
      expect(patched.statusCode, patched.body).toBe(200);
      const { from: _from, ...withoutFrom } = aMessage();
      const body = await sendOk(withoutFrom);
      expect(body.from).toBe("Acme Billing <billing@acme.example>");
      expect(body.message_id_header).toBe(`<${body.id}@acme.example>`);
    });

    it("refuses a message without from when the workspace has no default sender", async () => {
      const { from: _from, ...withoutFrom } = aMessage();
      expectValidationFailure(await send(withoutFrom), ["/from"]);
      await expectNothingStored();
    });

    it("normalises addresses: the domain is lower-cased, the local part and display name are kept", async () => {
      const body = await sendOk(aMessage({ from: "Acme <Hello@ACME.Example>", to: "Ada <ADA@Example.COM>", cc: ["  grace@EXAMPLE.com "] }));
      expect(body.from).toBe("Acme <Hello@acme.example>");
      expect(body.to).toEqual(["Ada <ADA@example.com>"]);
      expect(body.cc).toEqual(["grace@example.com"]);
      expect(body.recipients).toMatchObject([
        { email: "ADA@example.com", name: "Ada", type: "to" },
        { email: "grace@example.com", name: null, type: "cc" },
      ]);
    });

    it("encodes an internationalised domain as ASCII (IDNA)", async () => {
      const body = await sendOk(aMessage({ to: "José <jose@Bücher.example>" }));
      expect(body.to).toEqual(["José <jose@xn--bcher-kva.example>"]);
      expect(body.recipients[0].email).toBe("jose@xn--bcher-kva.example");
    });

    it("delivers once to an address named in to, cc and bcc", async () => {
      const body = await sendOk(aMessage({ to: ["ada@example.com", "Ada@Example.com"], cc: "ADA@example.com", bcc: ["ada@EXAMPLE.COM", "grace@example.com"] }));
      expect(body.recipients).toMatchObject([
        { email: "ada@example.com", type: "to" },
        { email: "grace@example.com", type: "bcc" },
      ]);
      expect(body.recipients).toHaveLength(2);
      await t.drain();
      expect((await events(body.id)).filter((e) => e.type === "message.delivered").map((e) => e.recipient)).toEqual(["ada@example.com", "grace@example.com"]);
    });

    it("refuses more than 50 recipients, in one list or across to, cc and bcc", async () => {
      const addresses = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}@example.com`);
      expectValidationFailure(await send(aMessage({ to: addresses(51, "to") })), ["/to"]);
      expectValidationFailure(await send(aMessage({ to: addresses(30, "to"), cc: addresses(15, "cc"), bcc: addresses(6, "bcc") })), ["/to"]);
      await expectNothingStored();
      // Exactly 50 is fine.
      await sendOk(aMessage({ to: addresses(30, "to"), cc: addresses(15, "cc"), bcc: addresses(5, "bcc") }));
    });

    it("refuses an invalid address, pointing at it within its list", async () => {
      expectValidationFailure(await send(aMessage({ to: ["ada@example.com", "bob@"] })), ["/to/1"]);
      expectValidationFailure(await send(aMessage({ cc: "not an address" })), ["/cc"]);
      await expectNothingStored();
    });

    it("refuses an address with URL characters in its domain rather than send to part of it", async () => {
      expectValidationFailure(await send(aMessage({ to: ["ada@example.com", "u@evil.example\\acme.example"] })), ["/to/1"]);
      expectValidationFailure(await send(aMessage({ to: "ada@example.com?x=1" })), ["/to"]);
      expectValidationFailure(await send(aMessage({ from: "me@sender.example/whatever" })), ["/from"]);
      await expectNothingStored();
    });

    it("refuses a metadata key or header name that is not allowed with one error, pointing at that name", async () => {
      const long = "k".repeat(41);
      const metadata = await send(aMessage({ metadata: { [long]: "v" } }));
      expectValidationFailure(metadata, [`/metadata/${long}`]);
      expect(metadata.json().errors[0].message).toBe("the name must NOT have more than 40 characters");
      expectValidationFailure(await send(aMessage({ headers: { "X Bad": "v" } })), ["/headers/X Bad"]);
      await expectNothingStored();
    });

    it("refuses a subject containing CR or LF (header injection)", async () => {
      expectValidationFailure(await send(aMessage({ subject: "Hello\r\nBcc: victim@example.com" })), ["/subject"]);
      expectValidationFailure(await send(aMessage({ subject: "Hello\nthere" })), ["/subject"]);
      await expectNothingStored();
    });

    it("refuses a header value containing CR or LF", async () => {
      expectValidationFailure(await send(aMessage({ headers: { "X-Campaign": "spring\r\nBcc: victim@example.com" } })), ["/headers/X-Campaign"]);
      await expectNothingStored();
    });

    it("refuses headers that Mailroom sets itself, such as From, whatever their case", async () => {
      expectValidationFailure(await send(aMessage({ headers: { From: "ceo@bank.example" } })), ["/headers/From"]);
      expectValidationFailure(await send(aMessage({ headers: { "message-id": "<x@y.example>", "X-Ok": "fine" } })), ["/headers/message-id"]);
      await expectNothingStored();
    });

    it("refuses metadata whose JSON is larger than its column holds (65,535 bytes), though each value is within 500 characters", async () => {
      // 500 emoji are 500 characters to the contract but 2,000 bytes of UTF-8: 50 keys make ~100 KB.
      const metadata = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`key${i}`, "😀".repeat(500)]));
      const res = await send(aMessage({ metadata }));
      expectValidationFailure(res, ["/metadata"]);
      expect(res.json().errors[0].message).toMatch(/at most 65,535 bytes.* \(this is 100,\d{3}\)/);
      await expectNothingStored();
      // Just under the limit is stored whole.
      const fits = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`key${i}`, "😀".repeat(500)]));
      expect((await get((await sendOk(aMessage({ metadata: fits }))).id)).metadata).toEqual(fits);
    });

    it("refuses headers whose JSON is larger than their column holds, though each is within the contract", async () => {
      // A `"` is one character of the value and two bytes of JSON (\"). (997: a run of 998 could not be folded.)
      const headers = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`X-Quote-${i}`, '"'.repeat(997)]));
      const res = await send(aMessage({ headers }));
      expectValidationFailure(res, ["/headers"]);
      expect(res.json().errors[0].message).toMatch(/at most 65,535 bytes/);
      await expectNothingStored();
    });

    it("stores whole the largest address lists the contract admits: 50 addresses of 254 characters, each with 200 backslashes for a name", async () => {
      // The most JSON a list can take: a backslash is two characters once the name is quoted, and
      // each of those two in JSON (control characters and lone surrogates, which JSON spells in
      // six bytes, are refused first). About 53 KB: the 65,535-byte column holds it on either database.
      const domain = `${"d".repeat(63)}.${"e".repeat(63)}.${"f".repeat(53)}.example`;
      const list = Array.from({ length: 50 }, (_, i) => `${"\\".repeat(200)} <${`user${i}`.padEnd(64, "x")}@${domain}>`);
      expect(list[0]!.length).toBe(200 + 2 + 254 + 1);
      const sent = await sendOk(aMessage({ to: list, reply_to: list }));
      const stored = (await t.call({ method: "GET", url: `/v1/messages/${sent.id}` })).json();
      expect(Buffer.byteLength(JSON.stringify(stored.to))).toBeGreaterThan(50_000);
      expect(stored.to).toEqual(sent.to);
      expect(stored.to).toHaveLength(50);
      expect(stored.reply_to).toEqual(sent.reply_to);
    });

    it("refuses a sender longer than its column holds once its display name is quoted for the header", async () => {
      // 200 backslashes are escaped to 400 and quoted: with a 254-character address, 659 characters.
      const address = `${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(53)}.example`;
      expect(address).toHaveLength(254);
      const res = await send(aMessage({ from: `${"\\".repeat(200)} <${address}>` }));
      expectValidationFailure(res, ["/from"]);
      expect(res.json().errors[0].message).toMatch(/at most 512 characters.* \(this is 659\)/);
      await expectNothingStored();
    });

    it("refuses an attachment whose content is not base64", async () => {
      expectValidationFailure(await send(aMessage({ attachments: [{ filename: "a.txt", content: "not base64!" }] })), ["/attachments/0/content"]);
      expectValidationFailure(await send(aMessage({ attachments: [{ filename: "ok.txt", content: "b2s=" }, { filename: "b.txt", content: "abc" }] })), ["/attachments/1/content"]);
      await expectNothingStored();
    });

    it("refuses an attachment whose content is only whitespace, which would be an empty file", async () => {
      const res = await send(aMessage({ attachments: [{ filename: "a.txt", content: "  \n\t " }] }));
      expectValidationFailure(res, ["/attachments/0/content"]);
      expect(res.json().errors[0].message).toContain("at least one byte");
      await expectNothingStored();
    });

    it("refuses two attachments with one content_id (in any case), which an html's cid: could not tell apart", async () => {
      const logo = (content_id: string) => ({ filename: "logo.png", content: "iVBORw0KGgo=", content_id });
      const res = await send(aMessage({ attachments: [logo("logo"), { filename: "a.txt", content: "b2s=" }, logo("Logo")] }));
      expectValidationFailure(res, ["/attachments/2/content_id"]);
      expect(res.json().errors[0].message).toBe("repeats the content_id of /attachments/0 (content ids are compared without case): give each inline part its own");
      await expectNothingStored();
      expect((await send(aMessage({ attachments: [logo("logo"), logo("logo-2x")] }))).statusCode).toBe(202);
    });

    it("refuses a message whose stored content would pass 12 MiB as the database statement carries it (apostrophes count twice), on either database, storing nothing", async () => {
      // 8.5 MiB of apostrophes fit the 10 MB body, but MySQL's client escapes each ('\''): a
      // 17 MiB statement, past MariaDB's default max_allowed_packet (16 MiB).
      const res = await send(aMessage({ html: "'".repeat(8.5 * 1024 * 1024) }));
      expectValidationFailure(res, ["/html"]);
      expect(res.json().errors[0].message).toMatch(/at most 12,582,912 bytes.*\(this is 17,8\d\d,\d{3}\)/);
      await expectNothingStored();
      // Just under the limit is stored, on MariaDB too.
      const fits = await sendOk(aMessage({ html: "'".repeat(6 * 1024 * 1024 - 4096) }));
      expect((await get(fits.id)).html).toHaveLength(6 * 1024 * 1024 - 4096);
    });

    it("refuses a header value or subject of 998 characters without a space, which folding would put on a 999-character line; sends 997, and 998 with a space, in lines of at most 998", async () => {
      const unbroken = "v".repeat(998);
      expectValidationFailure(await send(aMessage({ subject: "S".repeat(998), headers: { "X-Long": unbroken } })), ["/subject", "/headers/X-Long"]);
      await expectNothingStored();
      const body = await sendOk(aMessage({ subject: "S".repeat(997), headers: { "X-Long": "v".repeat(997), "X-Spaced": `a ${"v".repeat(996)}` } }));
      await t.drain();
      const mime = (await get(body.id)).mime as string;
      expect(mime).toContain("v".repeat(997));
      expect(Math.max(...mime.split("\r\n").map((line) => line.length))).toBeLessThanOrEqual(998);
    });

    it("refuses the same header twice in different case (header names are case-insensitive)", async () => {
      const res = await send(aMessage({ headers: { "X-Foo": "1", "x-foo": "2" } }));
      expectValidationFailure(res, ["/headers/x-foo"]);
      expect(res.json().errors[0].message).toMatch(/X-Foo/);
      await expectNothingStored();
    });

    it("sends a message/* or multipart/* attachment that is not 7-bit clean as application/octet-stream (base64), and keeps a clean message/rfc822", async () => {
      const raw = Buffer.concat([Buffer.from("Subject: hi\n\nbare LF body\n"), Buffer.from([0, 1, 2, 0xff]), Buffer.from("y".repeat(2000))]).toString("base64");
      const clean = Buffer.from("Subject: hi\r\nFrom: a@example.com\r\n\r\nHello\r\n").toString("base64");
      const body = await sendOk(aMessage({
        attachments: [
          { filename: "original.eml", content: raw },
          { filename: "given.bin", content: raw, content_type: "message/rfc822" },
          { filename: "parts.bin", content: clean, content_type: "multipart/mixed" },
          { filename: "clean.eml", content: clean },
        ],
      }));
      expect(body.attachments.map((a: { content_type: string }) => a.content_type)).toEqual(["application/octet-stream", "application/octet-stream", "application/octet-stream", "message/rfc822"]);
      await t.drain();
      const message = await get(body.id);
      expect(message.status).toBe("delivered");
      const mime = message.mime as string;
      expect(mime).not.toContain("\u0000");
      expect(/[^\r]\n/.test(mime)).toBe(false);
      expect(Math.max(...mime.split("\r\n").map((line: string) => line.length))).toBeLessThanOrEqual(998);
      expect(mime).toContain("Content-Type: message/rfc822; name=clean.eml");
    });

    it("refuses a body field the contract does not know", async () => {
      const res = await send(aMessage({ sender: "x@example.com" }));
      expectValidationFailure(res, ["/sender"]);
      expect(res.json().errors[0]).toMatchObject({ location: "body", message: "is not a known field" });
      await expectNothingStored();
    });

    it("does not coerce a wrong type: a subject of 0 is refused, not turned into \"0\"", async () => {
      expectValidationFailure(await send(aMessage({ subject: 0 })), ["/subject"]);
      expectValidationFailure(await send(aMessage({ to: 42 })), ["/to"]);
      expectValidationFailure(await send(aMessage({ metadata: { count: 1 } })), ["/metadata/count"]);
      await expectNothingStored();
    });

    it("refuses a scheduled_at in the past", async () => {
      const past = new Date(t.clock.now() - HOUR).toISOString();
      expectValidationFailure(await send(aMessage({ scheduled_at: past })), ["/scheduled_at"]);
      await expectNothingStored();
    });

    it("refuses a scheduled_at more than 30 days ahead", async () => {
      const tooFar = new Date(t.clock.now() + 30 * DAY + HOUR).toISOString();
      expectValidationFailure(await send(aMessage({ scheduled_at: tooFar })), ["/scheduled_at"]);
      expectValidationFailure(await send(aMessage({ scheduled_at: "next tuesday" })), ["/scheduled_at"]);
      await expectNothingStored();
    });

    it("refuses an expires_at that is not after the message is due, or beyond the delivery lifetime", async () => {
      const scheduled = t.clock.now() + 2 * HOUR;
      expectValidationFailure(await send(aMessage({ expires_at: new Date(t.clock.now() - HOUR).toISOString() })), ["/expires_at"]);
      expectValidationFailure(await send(aMessage({ scheduled_at: new Date(scheduled).toISOString(), expires_at: new Date(scheduled - HOUR).toISOString() })), ["/expires_at"]);
      expectValidationFailure(await send(aMessage({ expires_at: new Date(t.clock.now() + 6 * DAY).toISOString() })), ["/expires_at"]);
      expectValidationFailure(await send(aMessage({ expires_at: "tomorrow" })), ["/expires_at"]);
      await expectNothingStored();
      const ok = await send(aMessage({ expires_at: new Date(t.clock.now() + HOUR).toISOString() }));
      expect(ok.json().expires_at).toBe(new Date(t.clock.now() + HOUR).toISOString());
    });

    it("takes a List-Unsubscribe of mailto/https URIs only, and adds the RFC 8058 one-click field for https", async () => {
      // Not ASCII: an RFC 2047 encoded word is no URI, and a mail client could not follow it.
      for (const value of ["https://acme.example/u/1", "<javascript:alert(1)>", "<http://acme.example/u/1>", "<mailto:u@acme.example>, <https://a.example/u>, <https://b.example/u>", "<https://acme.example/désabonner>"]) {
        expectValidationFailure(await send(aMessage({ headers: { "List-Unsubscribe": value } })), ["/headers/List-Unsubscribe"]);
      }
      expectValidationFailure(await send(aMessage({ headers: { "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" } })), ["/headers/List-Unsubscribe-Post"]);
      await expectNothingStored();
      const id = (await sendOk(aMessage({ headers: { "List-Unsubscribe": "<mailto:unsubscribe@acme.example>, <https://acme.example/u/1>" } }))).id;
      await t.drain();
      const mime = (await t.call({ method: "GET", url: `/v1/messages/${id}` })).json().mime as string;
      const headers = headersOf(mime);
      expect(headers).toContainEqual(["List-Unsubscribe", "<mailto:unsubscribe@acme.example>, <https://acme.example/u/1>"]);
      expect(headers).toContainEqual(["List-Unsubscribe-Post", "List-Unsubscribe=One-Click"]);
    });

    it("refuses a header whose value is empty or only spaces, which would be stored as sent and never be", async () => {
      const res = await send(aMessage({ headers: { "X-Campaign": "", "X-Batch": "  \t" } }));
      expectValidationFailure(res, ["/headers/X-Campaign", "/headers/X-Batch"]);
      expect(res.json().errors[0].message).toContain("must not be empty");
      await expectNothingStored();
    });

    it("refuses a message id header or a content_id with a character outside printable ASCII (as msg-id allows), one that looks like CR or LF included", async () => {
      // U+010D and U+010A end in the bytes of CR and LF: written as Latin-1 they would start a header.
      const lookalike = "\u010d\u010a";
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ headers: { "In-Reply-To": `<a@b.example>${lookalike}Subject: Injected` } }, "/headers/In-Reply-To"],
        [{ headers: { references: `<a@b.example> <é@b.example>` } }, "/headers/references"],
        [{ attachments: [{ filename: "a.png", content: "YQ==", content_id: `logo@x${lookalike}X-Injected:yes` }] }, "/attachments/0/content_id"],
      ];
      for (const [fields, pointer] of cases) {
        const res = await send(aMessage(fields));
        expectValidationFailure(res, [pointer]);
        expect(res.json().errors[0].message).toMatch(/printable ASCII/);
      }
      await expectNothingStored();
    });

    it("writes a header of its own that the composer leaves unencoded as UTF-8, so no character can become a line break", async () => {
      const id = (await sendOk(aMessage({ headers: { "OTP-Token": "x\u010d\u010aContent-Type: text/plain\u010d\u010a\u010d\u010aBody replaced" } }))).id;
      await t.drain();
      const mime = (await t.call({ method: "GET", url: `/v1/messages/${id}` })).json().mime as string;
      expect(mime).not.toMatch(/^Body replaced/m);
      expect(mime).not.toMatch(/^Content-Type: text\/plain\r?$/m);
      const headers = headersOf(mime);
      expect(headers.filter(([name]) => name === "From")).toHaveLength(1);
      expect(headers.find(([name]) => name === "OTP-Token")).toBeDefined();
    });

    it("lists every failing field of the contract's checks at once, each with a JSON pointer", async () => {
      const res = await send({ to: 42, subject: 0, html: "", tags: ["ok", "not ok"], surprise: true });
      expectValidationFailure(res, ["/to", "/subject", "/html", "/tags/1", "/surprise"]);
      expect(res.json().detail).toBe("5 fields are invalid.");
      await expectNothingStored();
    });

    it("lists every failing field of Mailroom's own checks at once, each with a JSON pointer", async () => {
      const res = await send({
        from: "nobody",
        to: ["ada@example.com", "bob@"],
        subject: "Hi\r\n",
        html: "<p>Hi</p>",
        headers: { Subject: "forged", "X-Ok": "line\nbreak" },
        attachments: [{ filename: "a.txt", content: "%%%" }],
        scheduled_at: new Date(t.clock.now() - DAY).toISOString(),
      });
      expectValidationFailure(res, ["/from", "/to/1", "/subject", "/headers/Subject", "/headers/X-Ok", "/attachments/0/content", "/scheduled_at"]);
      for (const error of res.json().errors) expect(error.location).toBe("body");
      await expectNothingStored();
    });

    it("refuses header fields that describe the MIME body Mailroom composes, and keeps Content-Language", async () => {
      const res = await send({
        from: "hello@acme.example",
        to: "ada@example.com",
        subject: "Hi",
        html: "<p>Hi</p>",
        headers: { "Content-Disposition": "attachment; filename=x.bin", "content-id": "<x@example.com>", "Content-Description": "d", "Content-Location": "https://example.com/x" },
      });
      expectValidationFailure(res, ["/headers/Content-Disposition", "/headers/content-id", "/headers/Content-Description", "/headers/Content-Location"]);
      expect(res.json().errors[1].message).toBe("content-id is set by Mailroom and cannot be given");
      await expectNothingStored();
      const withLanguage = await send({ from: "hello@acme.example", to: "ada@example.com", subject: "Hallo", html: "<p>Hallo</p>", headers: { "Content-Language": "de" } });
      expect(withLanguage.statusCode, withLanguage.body).toBe(202);
    });

    it("answers 413 payload_too_large for a body over the configured limit", async () => {
      const small = await createTestApp(database, { BODY_LIMIT_BYTES: "2048" });
      try {
        const res = await small.call({ method: "POST", url: "/v1/messages", payload: aMessage({ html: `<p>${"x".repeat(4096)}</p>` }) });
        expect(res.statusCode).toBe(413);
        expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
        expect(res.json()).toMatchObject({ status: 413, code: "payload_too_large" });
        const accepted = await small.call({ method: "POST", url: "/v1/messages", payload: aMessage() });
        expect(accepted.statusCode).toBe(202);
        expect(Number(((await small.runtime.db.knex("messages").count({ n: "*" }).first()) as { n: number }).n)).toBe(1);
      } finally {
        await small.close();
      }
    });

    it("answers 415 unsupported_media_type for a body that is not sent as JSON", async () => {
      const res = await t.call({ method: "POST", url: "/v1/messages", payload: "to=ada@example.com&subject=Hi", headers: { "content-type": "application/x-www-form-urlencoded" } });
      expect(res.statusCode).toBe(415);
      expect(res.json()).toMatchObject({ status: 415, code: "unsupported_media_type" });
      await expectNothingStored();
    });

    it("answers 400 invalid_json for a body that is not JSON", async () => {
      const res = await t.call({ method: "POST", url: "/v1/messages", payload: '{"to": "ada@example.com", "subject": ', headers: { "content-type": "application/json" } });
      expect(res.statusCode).toBe(400);
      expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ status: 400, code: "invalid_json", request_id: res.headers["request-id"] });
      await expectNothingStored();
    });

    it("holds a message with a future scheduled_at until its time, then delivers it", async () => {
      const at = t.clock.now() + 2 * HOUR;
      const body = await sendOk(aMessage({ scheduled_at: new Date(at).toISOString() }));
      expect(body).toMatchObject({ status: "scheduled", scheduled_at: new Date(at).toISOString(), recipients: [{ status: "scheduled" }] });

      await t.drain();
      t.clock.advance(2 * HOUR - 1000);
      await t.drain();
      expect((await get(body.id)).status).toBe("scheduled");

      t.clock.advance(1000);
      await t.drain();
      const delivered = await get(body.id);
      expect(delivered).toMatchObject({ status: "delivered", recipients: [{ status: "delivered" }] });
      expect(delivered.mime).toContain("Subject: Welcome");
      expect((await events(body.id)).map((e) => [e.type, e.from_status, e.to_status])).toEqual([
        ["message.scheduled", null, "scheduled"],
        ["message.queued", "scheduled", "queued"],
        ["message.delivered", "queued", "delivered"],
      ]);
      expect(await count("jobs")).toBe(0);
    });

    it("refuses live mail from a domain that is not a verified domain of the workspace, naming the domain and the fix; nothing is stored", async () => {
      const unknown = await send(aMessage(), { key: t.workspace.liveKey });
      expect(unknown.statusCode).toBe(422);
      expect(unknown.json()).toMatchObject({ code: "sender_domain_not_verified", errors: [{ pointer: "/from" }] });
      expect(unknown.json().detail).toContain("acme.example");
      expect(unknown.json().detail).toContain("add it as a domain of the workspace, publish the DNS records it is given, then verify it");

      // Added but not verified: the fix is to publish and verify.
      await t.call({ method: "POST", url: "/v1/domains", payload: { name: "acme.example" }, key: t.workspace.liveKey });
      const unverified = await send(aMessage(), { key: t.workspace.liveKey });
      expect(unverified.json()).toMatchObject({ code: "sender_domain_not_verified" });
      expect(unverified.json().detail).toContain("publish its DNS records (the domain lists them) and verify it");
      // The workspace's default sender is held to the same rule.
      await t.call({ method: "PATCH", url: "/v1/workspace", payload: { default_from: "Acme <hello@acme.example>" } });
      const defaulted = await send({ to: "ada@example.com", subject: "Hi", text: "Hi" }, { key: t.workspace.liveKey });
      expect(defaulted.json()).toMatchObject({ code: "sender_domain_not_verified" });
      expect(await count("messages")).toBe(0);
      expect(await count("jobs")).toBe(0);

      // Sandbox mail may come from any domain.
      expect((await send(aMessage({ from: "someone@unverified.example" }))).statusCode).toBe(202);
    });

    it("accepts live mail from a verified domain of the workspace, its default sender included", async () => {
      await t.verifiedDomain("acme.example");
      const res = await send(aMessage(), { key: t.workspace.liveKey });
      expect(res.statusCode).toBe(202);
      expect(res.json()).toMatchObject({ environment: "live", status: "queued" });
      // Another workspace's verified domain is not this one's.
      expect((await send(aMessage(), { key: t.other.liveKey })).json()).toMatchObject({ code: "sender_domain_not_verified" });
    });
  });

  describe("getMessage", () => {
    it("shows each recipient with its own status", async () => {
      const body = await sendOk(aMessage({ to: ["ada@example.com", "bounced@simulator.test"], cc: "Grace <grace@example.com>" }));
      await t.drain();
      const message = await get(body.id);
      expect(message.status).toBe("delivered");
      const noEngagement = { opened_at: null, clicked_at: null, replied_at: null, complained_at: null, unsubscribed_at: null };
      expect(message.recipients).toEqual([
        { email: "ada@example.com", name: null, type: "to", status: "delivered", detail: expect.stringMatching(/^250 /), updated_at: expect.any(String), ...noEngagement },
        { email: "bounced@simulator.test", name: null, type: "to", status: "bounced", detail: expect.stringMatching(/^550 5\.1\.1 /), updated_at: expect.any(String), ...noEngagement },
        { email: "grace@example.com", name: "Grace", type: "cc", status: "delivered", detail: expect.stringMatching(/^250 /), updated_at: expect.any(String), ...noEngagement },
      ]);
    });

    it("shows the rendered MIME source once sent, with the Bcc recipients left out of it", async () => {
      const body = await sendOk(aMessage({ cc: "grace@example.com", bcc: ["secret@example.com"], headers: { "X-Entity-Ref-ID": "order-1234" } }));
      expect((await get(body.id)).mime).toBeNull();
      await t.drain();
      const message = await get(body.id);
      const headerBlock = (message.mime as string).split("\r\n\r\n", 1)[0]!;
      expect(headerBlock).toContain("From: Acme <hello@acme.example>");
      expect(headerBlock).toContain("To: ada@example.com");
      expect(headerBlock).toContain("Cc: grace@example.com");
      expect(headerBlock).toContain(`Message-ID: ${body.message_id_header}`);
      expect(headerBlock).toContain("X-Entity-Ref-ID: order-1234");
      expect(headerBlock).not.toMatch(/^bcc:/im);
      expect(message.mime).not.toContain("secret@example.com");
      expect(message.recipients.find((r: { email: string }) => r.email === "secret@example.com")).toMatchObject({ type: "bcc", status: "delivered" });
    });

    it("derives the text body from the html once rendered", async () => {
      const body = await sendOk(aMessage({ html: "<h1>Welcome</h1><p>Hello <b>Ada</b></p>" }));
      expect(body.text).toBeNull();
      await t.drain();
      const message = await get(body.id);
      expect(message.text).toMatch(/WELCOME/);
      expect(message.text).toContain("Hello Ada");
      expect(message.mime).toContain("Content-Type: text/plain");
      expect(message.mime).toContain("Content-Type: text/html");
    });

    it("keeps the text body it was given", async () => {
      const body = await sendOk(aMessage({ text: "Hi Ada, plain and simple." }));
      await t.drain();
      expect((await get(body.id)).text).toBe("Hi Ada, plain and simple.");
    });

    it("answers 404 for a message of another workspace or environment", async () => {
      const body = await sendOk();
      for (const key of [t.other.sandboxKey, t.workspace.liveKey]) {
        const res = await t.call({ method: "GET", url: `/v1/messages/${body.id}`, key });
        expect(res.statusCode).toBe(404);
        expect(res.json()).toMatchObject({ code: "not_found" });
      }
      expect((await t.call({ method: "GET", url: "/v1/messages/msg_doesnotexist" })).statusCode).toBe(404);
    });
  });

  describe("listMessages", () => {
    it("pages through every message newest first, without duplicates or gaps", async () => {
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) {
        ids.push((await sendOk(aMessage({ subject: `Message ${i}` }))).id);
        if (i % 2 === 0) t.clock.advance(1000); // some share a millisecond, some do not
      }
      const seen: string[] = [];
      const pages: Array<{ size: number; has_more: boolean }> = [];
      let cursor: string | null = null;
      do {
        const page = await list(`?limit=3${cursor ? `&after=${cursor}` : ""}`);
        seen.push(...page.data.map((m) => m.id));
        pages.push({ size: page.data.length, has_more: page.has_more });
        cursor = page.next_cursor;
        if (page.has_more) expect(cursor).toBe(page.data[page.data.length - 1]!.id);
        else expect(cursor).toBeNull();
      } while (cursor !== null);
      expect(pages).toEqual([
        { size: 3, has_more: true },
        { size: 3, has_more: true },
        { size: 1, has_more: false },
      ]);
      expect(seen).toEqual([...ids].reverse());
    });

    it("shows 20 messages by default and says there are more", async () => {
      for (let i = 0; i < 21; i++) await sendOk();
      const page = await list();
      expect(page.data).toHaveLength(20);
      expect(page.has_more).toBe(true);
    });

    it("filters by status", async () => {
      const delivered = (await sendOk(aMessage({ to: "delivered@simulator.test" }))).id;
      const bounced = (await sendOk(aMessage({ to: "bounced@simulator.test" }))).id;
      await t.drain();
      const scheduled = (await sendOk(aMessage({ scheduled_at: new Date(t.clock.now() + HOUR).toISOString() }))).id;
      expect((await list("?status=delivered")).data.map((m) => m.id)).toEqual([delivered]);
      expect((await list("?status=bounced")).data.map((m) => m.id)).toEqual([bounced]);
      expect((await list("?status=scheduled")).data.map((m) => m.id)).toEqual([scheduled]);
      expect((await list("?status=queued")).data).toEqual([]);
    });

    it("filters by recipient among to, cc and bcc, ignoring case", async () => {
      const asTo = (await sendOk(aMessage({ to: "Grace <Grace@Example.com>" }))).id;
      const asCc = (await sendOk(aMessage({ cc: "grace@example.com" }))).id;
      const asBcc = (await sendOk(aMessage({ bcc: "GRACE@EXAMPLE.COM" }))).id;
      await sendOk(aMessage({ to: "grace@example.org" }));
      expect((await list(`?recipient=${encodeURIComponent("gRACE@example.COM")}`)).data.map((m) => m.id)).toEqual([asBcc, asCc, asTo]);
      expect((await list("?recipient=nobody%40example.com")).data).toEqual([]);
    });

    it("filters by a recipient whose domain is an IDN, written in Unicode or in ASCII", async () => {
      const unicode = (await sendOk(aMessage({ to: "Joerg@Bücher.example" }))).id;
      const ascii = (await sendOk(aMessage({ to: "joerg@xn--bcher-kva.example" }))).id;
      await sendOk(aMessage({ to: "joerg@bucher.example" }));
      expect((await list(`?recipient=${encodeURIComponent("JOERG@BÜCHER.example")}`)).data.map((m) => m.id)).toEqual([ascii, unicode]);
      expect((await list("?recipient=joerg%40xn--bcher-kva.example")).data.map((m) => m.id)).toEqual([ascii, unicode]);
    });

    it("filters by tag", async () => {
      const receipt = (await sendOk(aMessage({ tags: ["receipt", "eu"] }))).id;
      await sendOk(aMessage({ tags: ["welcome"] }));
      const both = (await sendOk(aMessage({ tags: ["welcome", "receipt"] }))).id;
      expect((await list("?tag=receipt")).data.map((m) => m.id)).toEqual([both, receipt]);
      expect((await list("?tag=eu")).data.map((m) => m.id)).toEqual([receipt]);
      expect((await list("?tag=Receipt")).data).toEqual([]);
    });

    it("filters by creation time: created_after is inclusive, created_before exclusive", async () => {
      const start = t.clock.now();
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        ids.push((await sendOk()).id);
        t.clock.advance(HOUR);
      }
      const at = (ms: number) => encodeURIComponent(new Date(ms).toISOString());
      expect((await list(`?created_after=${at(start + HOUR)}`)).data.map((m) => m.id)).toEqual([ids[3], ids[2], ids[1]]);
      expect((await list(`?created_before=${at(start + 2 * HOUR)}`)).data.map((m) => m.id)).toEqual([ids[1], ids[0]]);
      expect((await list(`?created_after=${at(start + HOUR)}&created_before=${at(start + 3 * HOUR)}`)).data.map((m) => m.id)).toEqual([ids[2], ids[1]]);
    });

    it("combines filters with AND", async () => {
      const match = (await sendOk(aMessage({ to: "bounced@simulator.test", tags: ["receipt"] }))).id;
      await sendOk(aMessage({ to: "bounced@simulator.test", tags: ["welcome"] }));
      await sendOk(aMessage({ to: "ada@example.com", tags: ["receipt"] }));
      await t.drain();
      expect((await list("?status=bounced&tag=receipt")).data.map((m) => m.id)).toEqual([match]);
      expect((await list("?status=bounced&tag=receipt&recipient=ada%40example.com")).data).toEqual([]);
    });

    it("lists only the calling workspace's and environment's messages", async () => {
      await t.verifiedDomain("acme.example");
      const mine = (await sendOk()).id;
      await sendOk(aMessage(), { key: t.workspace.liveKey });
      await sendOk(aMessage(), { key: t.other.sandboxKey });
      expect((await list()).data.map((m) => m.id)).toEqual([mine]);
    });

    it("refuses a limit outside 1-100", async () => {
      for (const limit of ["0", "101", "ten"]) {
        const res = await t.call({ method: "GET", url: `/v1/messages?limit=${limit}` });
        expect(res.statusCode).toBe(422);
        expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ location: "query", pointer: "/limit" }] });
      }
    });
  });

  describe("cancelMessage", () => {
    it("answers 404 for its id followed by a space or in capitals, and leaves the message scheduled", async () => {
      // MySQL's binary collations pad: `msg_… ` compares equal to `msg_…` there, not on SQLite.
      const body = await sendOk(aMessage({ scheduled_at: new Date(t.clock.now() + HOUR).toISOString() }));
      for (const id of [`${body.id}%20`, `${body.id}%20%20`, body.id.toUpperCase()]) {
        for (const request of [
          { method: "POST" as const, url: `/v1/messages/${id}/cancel` },
          { method: "POST" as const, url: `/v1/messages/${id}/reschedule`, payload: { scheduled_at: new Date(t.clock.now() + 2 * HOUR).toISOString() } },
          { method: "GET" as const, url: `/v1/messages/${id}` },
          { method: "GET" as const, url: `/v1/messages/${id}/events` },
        ]) {
          const res = await t.call(request);
          expect(res.statusCode, `${request.method} ${request.url}: ${res.body}`).toBe(404);
          expect(res.json()).toMatchObject({ code: "not_found", detail: `No message ${decodeURIComponent(id)} in this environment.` });
        }
      }
      expect(await get(body.id)).toMatchObject({ status: "scheduled", scheduled_at: body.scheduled_at });
      expect((await events(body.id)).map((e) => e.type)).toEqual(["message.scheduled"]);
    });

    it("cancels a scheduled message: nothing is sent when its time comes", async () => {
      const body = await sendOk(aMessage({ scheduled_at: new Date(t.clock.now() + HOUR).toISOString() }));
      const res = await cancel(body.id);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ id: body.id, status: "canceled", recipients: [{ status: "canceled", detail: "canceled by request" }] });
      expect(await count("jobs")).toBe(0);

      t.clock.advance(2 * HOUR);
      await t.drain();
      const message = await get(body.id);
      expect(message).toMatchObject({ status: "canceled", mime: null });
      expect((await events(body.id)).map((e) => [e.type, e.from_status, e.to_status])).toEqual([
        ["message.scheduled", null, "scheduled"],
        ["message.canceled", "scheduled", "canceled"],
      ]);
    });

    it("cancels a queued message before the worker picks it up", async () => {
      const body = await sendOk();
      const res = await cancel(body.id);
      expect(res.statusCode).toBe(200);
      expect(res.json().status).toBe("canceled");
      await t.drain();
      expect((await get(body.id)).status).toBe("canceled");
      expect((await events(body.id)).map((e) => e.type)).toEqual(["message.queued", "message.canceled"]);
      expect(await count("jobs")).toBe(0);
    });

    it("cancels a deferred message, keeping delivered recipients as they are", async () => {
      const body = await sendOk(aMessage({ to: ["ada@example.com", "deferred@simulator.test"] }));
      await t.drain();
      expect((await get(body.id)).status).toBe("deferred");
      const res = await cancel(body.id);
      expect(res.statusCode).toBe(200);
      expect(res.json().recipients.map((r: { status: string }) => r.status)).toEqual(["delivered", "canceled"]);
      t.clock.advance(HOUR);
      await t.drain();
      expect((await get(body.id)).recipients.map((r: { status: string }) => r.status)).toEqual(["delivered", "canceled"]);
      expect((await events(body.id)).filter((e) => e.type === "message.delivered")).toHaveLength(1);
    });

    it("cancels a deferred message whose other recipient was suppressed: the message shows canceled and is not retried", async () => {
      expect((await t.call({ method: "POST", url: "/v1/suppressions", payload: { email: "x@example.com" } })).statusCode).toBe(201);
      const body = await sendOk(aMessage({ to: ["x@example.com", "deferred@simulator.test"] }));
      await t.drain();
      expect((await get(body.id)).status).toBe("deferred");
      const res = await cancel(body.id);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().status).toBe("canceled");
      expect(res.json().recipients.map((r: { status: string }) => r.status)).toEqual(["suppressed", "canceled"]);
      expect((await events(body.id)).at(-1)).toMatchObject({ type: "message.canceled", from_status: "deferred", to_status: "canceled", data: { recipients: ["deferred@simulator.test"] } });
      expect(await count("jobs")).toBe(0);
      t.clock.advance(HOUR);
      await t.drain();
      expect((await events(body.id)).filter((e) => e.type === "message.delivered")).toHaveLength(0);
    });

    it("refuses to cancel a delivered message with 409 message_not_cancelable", async () => {
      const body = await sendOk();
      await t.drain();
      const res = await cancel(body.id);
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ status: 409, code: "message_not_cancelable" });
      expect((await get(body.id)).status).toBe("delivered");
      expect((await events(body.id)).map((e) => e.type)).toEqual(["message.queued", "message.delivered"]);
    });

    it("refuses to cancel a message while a worker hands it off, and allows it once that worker's lease ran out", async () => {
      const body = await sendOk();
      const now = t.clock.now();
      const leaseMs = t.runtime.config.worker.leaseSeconds * 1000;
      const claimed = await t.runtime.repositories.jobs.claim({ now, limit: 10, leaseUntil: now + leaseMs, workerId: "busy-worker", environments: ["sandbox"] });
      expect(claimed).toHaveLength(1);

      const res = await cancel(body.id);
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ code: "message_not_cancelable" });
      expect(await count("jobs")).toBe(1);

      // The worker died: once its lease is over the message is waiting again, and can be stopped.
      t.clock.advance(leaseMs + 1);
      const later = await cancel(body.id);
      expect(later.statusCode, later.body).toBe(200);
      expect(later.json().status).toBe("canceled");
      await t.drain();
      expect((await get(body.id)).status).toBe("canceled");
    });

    it("answers the canceled message again when it is canceled twice", async () => {
      const body = await sendOk();
      const first = await cancel(body.id);
      const second = await cancel(body.id);
      expect(second.statusCode).toBe(200);
      expect(second.json()).toEqual(first.json());
      expect((await events(body.id)).filter((e) => e.type === "message.canceled")).toHaveLength(1);
    });

    it("records one cancellation when two cancels arrive at once", async () => {
      const body = await sendOk();
      const [a, b] = await Promise.all([cancel(body.id), cancel(body.id)]);
      expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
      expect(a.json()).toEqual(b.json());
      expect((await events(body.id)).map((e) => e.type)).toEqual(["message.queued", "message.canceled"]);
    });

    it("answers 404 for a message of another workspace", async () => {
      const body = await sendOk(aMessage(), { key: t.other.sandboxKey });
      const res = await cancel(body.id);
      expect(res.statusCode).toBe(404);
      const theirs = await t.call({ method: "GET", url: `/v1/messages/${body.id}`, key: t.other.sandboxKey });
      expect(theirs.json().status).toBe("queued");
    });
  });

  describe("rescheduleMessage", () => {
    const reschedule = (id: string, scheduled_at: string | null, key?: string) => t.call({ method: "POST", url: `/v1/messages/${id}/reschedule`, payload: { scheduled_at }, ...(key ? { key } : {}) });
    const iso = (ms: number) => new Date(ms).toISOString();
    const scheduledIn = async (ms: number, extra: Record<string, unknown> = {}) => sendOk(aMessage({ scheduled_at: iso(t.clock.now() + ms), ...extra }));

    it("moves a scheduled message to a later time: nothing is sent before it, and it is sent then", async () => {
      const body = await scheduledIn(HOUR);
      const first = iso(t.clock.now() + HOUR);
      const later = iso(t.clock.now() + 3 * HOUR);
      const res = await reschedule(body.id, later);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ id: body.id, status: "scheduled", scheduled_at: later, recipients: [{ status: "scheduled" }] });

      t.clock.advance(2 * HOUR);
      await t.drain();
      expect((await get(body.id)).status).toBe("scheduled");
      t.clock.advance(HOUR);
      await t.drain();
      expect((await get(body.id)).status).toBe("delivered");
      expect((await events(body.id)).map((e) => [e.type, e.from_status, e.to_status, e.data])).toEqual([
        ["message.scheduled", null, "scheduled", { scheduled_at: first }],
        ["message.scheduled", "scheduled", "scheduled", { scheduled_at: later, previous_scheduled_at: first }],
        ["message.queued", "scheduled", "queued", {}],
        ["message.delivered", "queued", "delivered", expect.anything()],
      ]);
    });

    it("changes nothing, and records no event, when the time given is the one it has", async () => {
      const body = await scheduledIn(HOUR);
      t.clock.advance(60_000);
      const res = await reschedule(body.id, body.scheduled_at);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ id: body.id, status: "scheduled", scheduled_at: body.scheduled_at, updated_at: body.updated_at });
      expect((await events(body.id)).map((e) => e.type)).toEqual(["message.scheduled"]);
    });

    it("moves a scheduled message to an earlier time", async () => {
      const body = await scheduledIn(5 * HOUR);
      expect((await reschedule(body.id, iso(t.clock.now() + HOUR))).statusCode).toBe(200);
      t.clock.advance(HOUR);
      await t.drain();
      expect((await get(body.id)).status).toBe("delivered");
    });

    it("sends it now with scheduled_at null, or a time not after now", async () => {
      for (const when of [null, iso(t.clock.now()), iso(t.clock.now() - 30_000)]) {
        const body = await scheduledIn(HOUR);
        const res = await reschedule(body.id, when);
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json()).toMatchObject({ status: "scheduled", scheduled_at: iso(t.clock.now()) });
        await t.drain();
        expect((await get(body.id)).status).toBe("delivered");
      }
    });

    it("refuses a time in the past, more than 30 days ahead, at or after expires_at, or not a date-time, with 422, changing nothing", async () => {
      const body = await scheduledIn(HOUR, { expires_at: iso(t.clock.now() + 5 * HOUR) });
      const cases: Array<[unknown, string]> = [
        [iso(t.clock.now() - 5 * 60_000), "must not be in the past"],
        [iso(t.clock.now() + 31 * 24 * HOUR), "must be at most 30 days ahead"],
        [iso(t.clock.now() + 5 * HOUR), "must be before the message's expires_at"],
        ["tomorrow", "date-time"],
      ];
      for (const [scheduled_at, message] of cases) {
        const res = await t.call({ method: "POST", url: `/v1/messages/${body.id}/reschedule`, payload: { scheduled_at } });
        expect(res.statusCode, res.body).toBe(422);
        expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/scheduled_at", message: expect.stringContaining(message) }] });
      }
      for (const payload of [{}, { scheduled_at: iso(t.clock.now() + 2 * HOUR), send_at: "now" }]) {
        const res = await t.call({ method: "POST", url: `/v1/messages/${body.id}/reschedule`, payload });
        expect(res.statusCode, res.body).toBe(422);
      }
      expect(await get(body.id)).toMatchObject({ status: "scheduled", scheduled_at: iso(t.clock.now() + HOUR) });
      expect(await events(body.id)).toHaveLength(1);
    });

    it("refuses a message that is not scheduled (queued, delivered, canceled) with 409 message_not_scheduled", async () => {
      const delivered = await sendOk();
      await t.drain();
      const canceled = await scheduledIn(HOUR);
      await cancel(canceled.id);
      const fresh = await sendOk();
      for (const id of [fresh.id, delivered.id, canceled.id]) {
        const res = await reschedule(id, iso(t.clock.now() + HOUR));
        expect(res.statusCode, res.body).toBe(409);
        expect(res.json()).toMatchObject({ code: "message_not_scheduled", detail: expect.stringContaining("only a scheduled message") });
      }
      expect((await get(fresh.id)).scheduled_at).toBeNull();
    });

    it("answers 409 message_not_scheduled for a sent message whatever time is asked, one past included", async () => {
      // A retried "reschedule to this time" whose first attempt sent the message hears that it was sent.
      const sent = await scheduledIn(HOUR);
      t.clock.advance(2 * HOUR);
      await t.drain();
      for (const at of [iso(t.clock.now() - HOUR), iso(t.clock.now() + 40 * 24 * HOUR)]) {
        const res = await reschedule(sent.id, at);
        expect(res.statusCode, res.body).toBe(409);
        expect(res.json().code).toBe("message_not_scheduled");
      }
    });

    it("refuses a message a worker is handing off at its time", async () => {
      const body = await scheduledIn(HOUR);
      t.clock.advance(HOUR);
      const now = t.clock.now();
      const claimed = await t.runtime.repositories.jobs.claim({ now, limit: 10, leaseUntil: now + 60_000, workerId: "busy-worker", environments: ["sandbox"] });
      expect(claimed).toHaveLength(1);
      const res = await reschedule(body.id, iso(now + HOUR));
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ code: "message_not_scheduled", detail: expect.stringContaining("handed off") });
    });

    it("is safe to retry with the same Idempotency-Key", async () => {
      const body = await scheduledIn(HOUR);
      const call = () => t.call({ method: "POST", url: `/v1/messages/${body.id}/reschedule`, payload: { scheduled_at: iso(t.clock.now() + 2 * HOUR) }, headers: { "idempotency-key": "move-it" } });
      const first = await call();
      const again = await call();
      expect(again.statusCode).toBe(200);
      expect(again.headers["idempotent-replayed"]).toBe("true");
      expect(again.body).toBe(first.body);
      expect((await events(body.id)).filter((e) => e.type === "message.scheduled")).toHaveLength(2);
    });

    it("answers 404 for a message of another workspace or of the other environment, and leaves it alone", async () => {
      const theirs = await sendOk(aMessage({ scheduled_at: iso(t.clock.now() + HOUR) }), { key: t.other.sandboxKey });
      expect((await reschedule(theirs.id, null)).statusCode).toBe(404);
      expect((await reschedule(theirs.id, null, t.workspace.liveKey)).statusCode).toBe(404);
      const mine = await scheduledIn(HOUR);
      expect((await reschedule(mine.id, null, t.workspace.liveKey)).statusCode).toBe(404);
      const still = await t.call({ method: "GET", url: `/v1/messages/${theirs.id}`, key: t.other.sandboxKey });
      expect(still.json()).toMatchObject({ status: "scheduled", scheduled_at: iso(t.clock.now() + HOUR) });
    });
  });
});
