import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { databases } from "../helpers/databases.js";
import { startDnsServer } from "../helpers/dns-server.js";
import { timeOfId } from "../../src/domain/ids.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

const INVOICE = Buffer.from("%PDF-1.7\n% an invoice, byte for byte\n%%EOF\n");
/** What the file server does before it answers /files/late.pdf: a test makes time pass there. */
let beforeLateAnswer = (): void => {};

/**
 * A file server on loopback, as a customer's storage would answer; it counts what it was asked,
 * keeps each request's headers, and knows which of its connections are still open.
 */
function startFileServer(): Promise<{ base: string; hits: string[]; headers: Map<string, IncomingMessage["headers"]>; openConnections(): number; finishStalled(): void; close(): Promise<void> }> {
  const hits: string[] = [];
  const headers = new Map<string, IncomingMessage["headers"]>();
  const sockets = new Set<Socket>();
  const stalled: ServerResponse[] = [];
  /** A redirect whose body never ends: a byte every 100 ms for as long as the connection lasts. */
  const drippingRedirect = (res: ServerResponse, location: string) => {
    res.writeHead(302, { location, "transfer-encoding": "chunked" });
    const drip = setInterval(() => res.write("x"), 100);
    res.on("close", () => clearInterval(drip));
  };
  const routes: Record<string, (res: ServerResponse, req: IncomingMessage) => void> = {
    "/drip-loop": (res) => drippingRedirect(res, "/drip-loop"),
    "/drip-bad-location": (res) => drippingRedirect(res, "http://[bad"),
    "/files/gzipped.pdf": (res) => res.writeHead(200, { "content-type": "application/pdf", "content-encoding": "gzip" }).end(gzipSync(INVOICE)),
    "/files/identity.pdf": (res) => res.writeHead(200, { "content-type": "application/pdf", "content-encoding": "identity" }).end(INVOICE),
    // Declares 600 KiB, sends one byte, and the rest only when the test says so.
    "/files/600k-stalled": (res) => {
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(600 * 1024) });
      res.write(Buffer.alloc(1, 7));
      stalled.push(res);
    },
    "/files/invoice.pdf": (res) => res.writeHead(200, { "content-type": "application/pdf" }).end(INVOICE),
    "/files/late.pdf": (res) => {
      beforeLateAnswer();
      res.writeHead(200, { "content-type": "application/pdf" }).end(INVOICE);
    },
    "/files/%C3%A9t%C3%A9.txt": (res) => res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end("summer"),
    "/files/odd": (res) => res.writeHead(200, { "content-type": "not a type" }).end("odd"),
    "/download?id=7": (res) => res.writeHead(200, { "content-type": "application/pdf", "content-disposition": `attachment; filename="Invoice 7.pdf"; filename*=UTF-8''Facture%20%C3%A9t%C3%A9.pdf` }).end(INVOICE),
    "/download?id=8": (res) => res.writeHead(200, { "content-disposition": 'attachment; filename="../../etc/passwd"' }).end("root"),
    "/download?id=9": (res) => res.writeHead(200, { "content-disposition": "attachment; filename=" }).end("nine"),
    "/files/empty": (res) => res.writeHead(200).end(),
    "/files/600k": (res) => res.writeHead(200, { "content-type": "application/octet-stream" }).end(Buffer.alloc(600 * 1024, 7)),
    "/files/2m-chunked": (res) => {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      for (let i = 0; i < 32; i++) res.write(Buffer.alloc(64 * 1024, 1));
      res.end();
    },
    "/redirect": (res) => res.writeHead(302, { location: "/files/invoice.pdf" }).end(),
    "/to-undecodable-credentials": (res, req) => res.writeHead(302, { location: `http://files:caf%E9@${req.headers.host}/files/invoice.pdf` }).end(),
    "/loop": (res) => res.writeHead(302, { location: "/loop" }).end(),
    "/to-ftp": (res) => res.writeHead(301, { location: "ftp://files.example/invoice.pdf" }).end(),
    "/missing": (res) => res.writeHead(404).end("no such file"),
    "/slow": () => {}, // never answers
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    hits.push(req.url ?? "");
    headers.set(req.url ?? "", req.headers);
    (routes[req.url ?? ""] ?? ((r: ServerResponse) => r.writeHead(404).end()))(res, req);
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        base: `http://127.0.0.1:${port}`,
        hits,
        headers,
        openConnections: () => sockets.size,
        finishStalled: () => {
          for (const res of stalled.splice(0)) if (!res.destroyed) res.end(Buffer.alloc(600 * 1024 - 1, 7));
        },
        close: () => {
          server.closeAllConnections();
          return new Promise((done) => server.close(() => done()));
        },
      });
    }),
  );
}

describe.each(databases)("attachments by URL ($name)", (database) => {
  let files: Awaited<ReturnType<typeof startFileServer>>;
  let t: TestApp;
  beforeAll(async () => {
    files = await startFileServer();
  });
  afterAll(async () => files.close());
  beforeEach(async () => {
    files.hits.length = 0;
    t = await createTestApp(database);
  });
  afterEach(async () => t.close());

  const send = (attachments: object[], overrides: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ attachments, ...overrides }), headers });
  const stored = async () => (await t.call({ method: "GET", url: "/v1/messages" })).json().data as unknown[];

  describe("createMessage", () => {
    it("fetches the file before the 202, keeps it with the message and sends it", async () => {
      const res = await send([{ url: `${files.base}/files/invoice.pdf` }]);
      expect(res.statusCode, res.body).toBe(202);
      expect(files.hits).toEqual(["/files/invoice.pdf"]);
      await t.drain();
      const message = (await t.call({ method: "GET", url: `/v1/messages/${res.json().id}` })).json();
      expect(message.attachments).toEqual([{ filename: "invoice.pdf", content_type: "application/pdf", size: INVOICE.length, content_id: null }]);
      expect(message.mime).toContain('filename=invoice.pdf');
      expect(message.mime.replace(/\r\n/g, "")).toContain(INVOICE.toString("base64"));
    });

    it("stamps the message when its files are in, not when its request began: its id, created_at and first event", async () => {
      // A follower of the event log (mailroom events tail) looks back 10 s from the newest event
      // it saw; a message stamped before a slow fetch would be stored already that far behind.
      const began = t.clock.now();
      beforeLateAnswer = () => t.clock.advance(30_000);
      const res = await send([{ url: `${files.base}/files/late.pdf` }]);
      beforeLateAnswer = () => {};
      expect(res.statusCode, res.body).toBe(202);
      const message = res.json();
      expect(Date.parse(message.created_at)).toBe(began + 30_000);
      expect(timeOfId(message.id, "message")).toBe(began + 30_000);
      const recent = (await t.call({ method: "GET", url: `/v1/events?created_after=${new Date(began + 20_000).toISOString()}` })).json().data;
      expect(recent).toEqual([expect.objectContaining({ type: "message.queued", message_id: message.id, created_at: message.created_at })]);
    });

    it("refuses a message whose expires_at passed while its files were fetched, storing nothing", async () => {
      const began = t.clock.now();
      beforeLateAnswer = () => t.clock.advance(30_000);
      const res = await send([{ url: `${files.base}/files/late.pdf` }], { expires_at: new Date(began + 10_000).toISOString() });
      beforeLateAnswer = () => {};
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().errors).toEqual([expect.objectContaining({ pointer: "/expires_at", message: expect.stringContaining("its attachments were fetched after that time") })]);
      expect(await stored()).toEqual([]);
    });

    it("follows redirects, names the file from the last URL, and lets a given filename and content_type win", async () => {
      const res = await send([
        { url: `${files.base}/redirect` },
        { url: `${files.base}/files/%C3%A9t%C3%A9.txt` },
        { url: `${files.base}/files/invoice.pdf`, filename: "March.pdf", content_type: "application/x-pdf", content_id: "invoice" },
        { url: `${files.base}/files/odd` },
        { filename: "inline.txt", content: Buffer.from("given").toString("base64") },
      ]);
      expect(res.statusCode, res.body).toBe(202);
      expect(res.json().attachments ?? (await t.call({ method: "GET", url: `/v1/messages/${res.json().id}` })).json().attachments).toEqual([
        { filename: "invoice.pdf", content_type: "application/pdf", size: INVOICE.length, content_id: null },
        { filename: "été.txt", content_type: "text/plain", size: 6, content_id: null },
        { filename: "March.pdf", content_type: "application/x-pdf", size: INVOICE.length, content_id: "invoice" },
        { filename: "odd", content_type: "application/octet-stream", size: 3, content_id: null },
        { filename: "inline.txt", content_type: "text/plain", size: 5, content_id: null },
      ]);
    });

    it("names the file from the answer's Content-Disposition (filename* first), its last segment only, and from the URL when the header says nothing usable", async () => {
      const res = await send([{ url: `${files.base}/download?id=7` }, { url: `${files.base}/download?id=8` }, { url: `${files.base}/download?id=9` }]);
      expect(res.statusCode, res.body).toBe(202);
      const message = (await t.call({ method: "GET", url: `/v1/messages/${res.json().id}` })).json();
      expect(message.attachments.map((a: { filename: string }) => a.filename)).toEqual(["Facture été.pdf", "passwd", "download"]);
    });

    it.each([
      ["/missing", "could not be fetched: answered HTTP 404"],
      ["/loop", "could not be fetched: redirected more than 3 times"],
      ["/to-ftp", "could not be fetched: redirected to ftp: URL"],
      ["/files/empty", "answered an empty file"],
    ])("refuses %s with 422 naming the URL, and stores nothing", async (path, message) => {
      const res = await send([{ filename: "ok.txt", content: "b2s=" }, { url: `${files.base}${path}` }]);
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ location: "body", pointer: "/attachments/1/url", message: expect.stringContaining(message) }] });
      expect(await stored()).toEqual([]);
    });

    it("fetches nothing for a request refused on other grounds: its fields, the key's restrictions, an unverified live sender, the quota", async () => {
      const url = `${files.base}/files/invoice.pdf`;
      const invalid = await send([{ url }], { to: "ada@" });
      expect(invalid.statusCode).toBe(422);
      expect(invalid.json().errors.map((e: { pointer: string }) => e.pointer)).toEqual(["/to"]);

      const created = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Team only", permission: "sending_access", restrictions: { recipient_domains: ["team.example"] } } });
      expect(created.statusCode, created.body).toBe(201);
      const restricted = await t.call({ method: "POST", url: "/v1/messages", key: created.json().secret, payload: aMessage({ attachments: [{ url }] }) });
      expect(restricted.statusCode, restricted.body).toBe(403);

      const live = await t.call({ method: "POST", url: "/v1/messages", key: t.workspace.liveKey, payload: aMessage({ from: "billing@unverified.example", attachments: [{ url }] }) });
      expect(live.statusCode, live.body).toBe(422);
      expect(live.json().code).toBe("sender_domain_not_verified");

      await t.verifiedDomain("acme.example");
      expect((await t.call({ method: "PATCH", url: "/v1/workspace", key: t.workspace.liveKey, payload: { monthly_quota: 1 } })).statusCode).toBe(200);
      expect((await t.call({ method: "POST", url: "/v1/messages", key: t.workspace.liveKey, payload: aMessage() })).statusCode).toBe(202);
      const overQuota = await t.call({ method: "POST", url: "/v1/messages", key: t.workspace.liveKey, payload: aMessage({ attachments: [{ url }] }) });
      expect(overQuota.statusCode, overQuota.body).toBe(429);
      expect(overQuota.json().code).toBe("monthly_quota_exceeded");

      expect(files.hits).toEqual([]);
      expect(await stored()).toEqual([]); // in sandbox; in live, only the message sent without a URL
    });

    it("gives up on a server that does not answer within ATTACHMENT_FETCH_TIMEOUT_MS", async () => {
      await t.restart({ ATTACHMENT_FETCH_TIMEOUT_MS: "300" });
      const started = Date.now();
      const res = await send([{ url: `${files.base}/slow` }]);
      expect(res.statusCode).toBe(422);
      expect(res.json().errors[0]).toMatchObject({ pointer: "/attachments/0/url", message: "could not be fetched: did not answer within 300 ms" });
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    it("refuses a URL whose credentials cannot be sent (a percent-escape that is not UTF-8), given or redirected to, and outlives its fetch timeout", async () => {
      await t.restart({ ATTACHMENT_FETCH_TIMEOUT_MS: "300" });
      const given = `${files.base.replace("http://", "http://files:caf%E9@")}/files/invoice.pdf`;
      const res = await send([{ url: given }, { url: `${files.base}/to-undecodable-credentials` }]);
      expect(res.statusCode, res.body).toBe(422);
      const message = "could not be fetched: its user name or password holds a percent-escape that is not UTF-8 (%E9 for é is Latin-1; UTF-8 is %C3%A9), which no request can send";
      expect(res.json().errors).toEqual([
        { location: "body", pointer: "/attachments/0/url", message },
        { location: "body", pointer: "/attachments/1/url", message: message.replace("its user name", "redirected to a URL whose user name") },
      ]);
      expect(await stored()).toEqual([]);
      // Past the fetch timeout: a timer left behind by a request that never started would throw now.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect((await t.call({ method: "GET", url: "/health", key: null })).statusCode).toBe(200);
    });

    it("says a file's host could not be resolved when the resolver (DNS_SERVERS) cannot be reached, not that the host refused the connection", async () => {
      const dns = await startDnsServer();
      await dns.close();
      await t.restart({ DNS_SERVERS: dns.address });
      const res = await send([{ url: "http://files.test/files/invoice.pdf" }]);
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().errors[0]).toMatchObject({ pointer: "/attachments/0/url", message: expect.stringMatching(/^could not be fetched: files\.test could not be resolved/) });
    });

    it("keeps a request's Idempotency-Key locked while its attachments are still being fetched, past IDEMPOTENCY_LOCK_SECONDS", async () => {
      await t.restart({ IDEMPOTENCY_LOCK_SECONDS: "3", ATTACHMENT_FETCH_TIMEOUT_MS: "4500" });
      const body = aMessage({ attachments: [{ url: `${files.base}/slow` }] });
      const call = () => t.call({ method: "POST", url: "/v1/messages", payload: body, headers: { "idempotency-key": "slow-fetch" } });
      const first = call();
      while (!files.hits.includes("/slow")) await new Promise((resolve) => setTimeout(resolve, 20));
      // The running request renews its lock every second (a third of it) for a whole lock from then.
      const firstLock = t.clock.now() + 3000;
      t.clock.advance(2000);
      const lockedUntil = async () => Number(((await t.runtime.db.knex("idempotency_keys").where({ idempotency_key: "slow-fetch" }).first("locked_until")) as { locked_until: number | string }).locked_until);
      await vi.waitFor(async () => expect(await lockedUntil()).toBeGreaterThan(firstLock), { timeout: 10_000, interval: 100 });
      t.clock.advance(2000); // past the first lock, within the renewed one
      const retry = await call();
      expect(retry.statusCode, retry.body).toBe(409);
      expect(retry.json()).toMatchObject({ code: "idempotency_key_in_use" });
      expect(files.hits.filter((hit) => hit === "/slow")).toHaveLength(1);
      expect((await first).statusCode).toBe(422);
    });

    it("stops reading at ATTACHMENT_FETCH_MAX_BYTES, for one file or for all of a message's together", async () => {
      await t.restart({ ATTACHMENT_FETCH_MAX_BYTES: String(1024 * 1024) });
      const big = await send([{ url: `${files.base}/files/2m-chunked` }]);
      expect(big.statusCode).toBe(422);
      expect(big.json().errors[0]).toMatchObject({ pointer: "/attachments/0/url", message: expect.stringContaining("past 1048576 bytes (ATTACHMENT_FETCH_MAX_BYTES") });
      // Fetched together, the two take from one budget as their bytes arrive: whichever runs out is refused.
      const two = await send([{ url: `${files.base}/files/600k` }, { url: `${files.base}/files/600k` }]);
      expect(two.statusCode).toBe(422);
      expect(two.json().errors).toEqual([{ location: "body", pointer: expect.stringMatching(/^\/attachments\/[01]\/url$/), message: expect.stringContaining("past 1048576 bytes") }]);
      expect((await send([{ url: `${files.base}/files/600k` }])).statusCode).toBe(202);
    });

    it("shares ATTACHMENT_FETCH_MAX_BYTES among a batch's messages: the one that would pass it is refused, the others accepted", async () => {
      await t.restart({ ATTACHMENT_FETCH_MAX_BYTES: String(1024 * 1024) });
      const messages = [0, 1, 2].map(() => aMessage({ attachments: [{ url: `${files.base}/files/600k` }] }));
      const res = await t.call({ method: "POST", url: "/v1/messages/batch", payload: { messages } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.map((item: { status: number }) => item.status)).toEqual([202, 422, 422]);
      expect(res.json().data[1]).toMatchObject({ error: { errors: [{ pointer: "/attachments/0/url", message: expect.stringContaining("a batch's messages together") }] } });
      expect(await stored()).toHaveLength(1);
    });

    it.each([
      [{ url: "ftp://files.example/invoice.pdf" }, "/attachments/0/url"],
      [{ url: "http://127.0.0.1:1/a", content: "b2s=", filename: "a.txt" }, "/attachments/0"],
      [{ filename: "a.txt" }, "/attachments/0"],
    ])("refuses %j as the contract does", async (attachment, pointer) => {
      const res = await send([attachment]);
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
      expect(files.hits).toEqual([]);
    });

    it("does not fetch again when a request is replayed under its Idempotency-Key", async () => {
      const first = await send([{ url: `${files.base}/files/invoice.pdf` }], {}, { "idempotency-key": "invoice-1" });
      const again = await send([{ url: `${files.base}/files/invoice.pdf` }], {}, { "idempotency-key": "invoice-1" });
      expect(again.headers["idempotent-replayed"]).toBe("true");
      expect(again.body).toBe(first.body);
      expect(files.hits).toEqual(["/files/invoice.pdf"]);
    });

    it("answers a retry of a live message with a file by URL with that message, even at the quota, when the first answer was lost", async () => {
      await t.verifiedDomain("acme.example");
      expect((await t.call({ method: "PATCH", url: "/v1/workspace", key: t.workspace.liveKey, payload: { monthly_quota: 1 } })).statusCode).toBe(200);
      const sendLive = () => t.call({ method: "POST", url: "/v1/messages", key: t.workspace.liveKey, payload: aMessage({ attachments: [{ url: `${files.base}/files/invoice.pdf` }] }), headers: { "idempotency-key": "invoice-live" } });
      const first = await sendLive();
      expect(first.statusCode, first.body).toBe(202);
      // What a crash between storing the message and storing the answer leaves: the message alone.
      await t.runtime.db.knex("idempotency_keys").delete();
      const retry = await sendLive();
      expect(retry.statusCode, retry.body).toBe(202);
      expect(retry.json().id).toBe(first.json().id);
      expect((await t.call({ method: "GET", url: "/v1/usage", key: t.workspace.liveKey })).json().quota.used).toBe(1);
    });

    it("refuses loopback and private addresses unless ATTACHMENT_FETCH_ALLOW_PRIVATE_TARGETS allows them", async () => {
      await t.restart({ ATTACHMENT_FETCH_ALLOW_PRIVATE_TARGETS: "false" });
      for (const url of [`${files.base}/files/invoice.pdf`, "http://169.254.169.254/latest/meta-data/", "http://[::1]/x", "http://10.0.0.1/x"]) {
        const res = await send([{ url }]);
        expect(res.statusCode, url).toBe(422);
        expect(res.json().errors[0], url).toMatchObject({ pointer: "/attachments/0/url", message: expect.stringContaining("not fetched") });
      }
      expect(files.hits).toEqual([]);
    });
    it("closes the connection of every redirect it followed, however the fetch ends, whatever the redirect's body", async () => {
      for (const [path, message] of [
        ["/drip-loop", "redirected more than 3 times"],
        ["/drip-bad-location", "redirected to an invalid URL"],
      ] as const) {
        const res = await send([{ url: `${files.base}${path}` }]);
        expect(res.statusCode, res.body).toBe(422);
        expect(res.json().errors[0]).toMatchObject({ pointer: "/attachments/0/url", message: expect.stringContaining(message) });
        // Each redirect's body drips forever: only the fetcher closing its connections ends them.
        await vi.waitFor(() => expect(files.openConnections(), path).toBe(0), { timeout: 2_000, interval: 50 });
      }
      expect(files.hits.filter((hit) => hit === "/drip-loop")).toHaveLength(4);
    });

    it("asks for the file unencoded and refuses one sent with a Content-Encoding, naming it", async () => {
      const gzipped = await send([{ url: `${files.base}/files/gzipped.pdf` }]);
      expect(gzipped.statusCode, gzipped.body).toBe(422);
      expect(gzipped.json().errors).toEqual([{ location: "body", pointer: "/attachments/0/url", message: expect.stringContaining("Content-Encoding: gzip") }]);
      expect(files.headers.get("/files/gzipped.pdf")?.["accept-encoding"]).toBe("identity");
      const identity = await send([{ url: `${files.base}/files/identity.pdf` }]);
      expect(identity.statusCode, identity.body).toBe(202);
      expect(identity.json().attachments).toEqual([{ filename: "identity.pdf", content_type: "application/pdf", size: INVOICE.length, content_id: null }]);
      expect(await stored()).toHaveLength(1);
    });

    it("answers 503 with Retry-After while the process holds ATTACHMENT_FETCH_MAX_BYTES_IN_HAND of fetched files, and takes a request's back when it ends", async () => {
      await t.restart({ ATTACHMENT_FETCH_MAX_BYTES: String(1024 * 1024), ATTACHMENT_FETCH_MAX_BYTES_IN_HAND: String(1024 * 1024) });
      const inHand = () => t.runtime.services.attachmentUrls.bytesInHand;
      // The file declares 600 KiB: that much is held from its answer's headers on.
      const first = send([{ url: `${files.base}/files/600k-stalled` }]);
      await vi.waitFor(() => expect(inHand()).toBe(600 * 1024), { timeout: 5_000, interval: 20 });
      const refused = await send([{ url: `${files.base}/files/600k` }]);
      expect(refused.statusCode, refused.body).toBe(503);
      expect(refused.headers["retry-after"]).toMatch(/^[1-9][0-9]*$/);
      expect(refused.json()).toMatchObject({ code: "service_unavailable", detail: expect.stringContaining("ATTACHMENT_FETCH_MAX_BYTES_IN_HAND") });
      expect(inHand()).toBe(600 * 1024);
      files.finishStalled();
      expect((await first).statusCode).toBe(202);
      expect(inHand()).toBe(0);
      // Success or failure, a request's bytes are given back when it ends.
      expect((await send([{ url: `${files.base}/files/600k` }])).statusCode).toBe(202);
      expect(inHand()).toBe(0);
      expect((await send([{ url: `${files.base}/files/600k` }, { url: `${files.base}/missing` }])).statusCode).toBe(422);
      expect(inHand()).toBe(0);
      expect(await stored()).toHaveLength(2);
    });
  });

  describe("createMessageBatch and previewMessage", () => {
    it("gives the bytes of a refused message's fetched files back to the batch's ATTACHMENT_FETCH_MAX_BYTES", async () => {
      await t.restart({ ATTACHMENT_FETCH_MAX_BYTES: String(1024 * 1024) });
      const messages = [aMessage({ attachments: [{ url: `${files.base}/files/600k` }, { url: `${files.base}/missing` }] }), aMessage({ attachments: [{ url: `${files.base}/files/600k` }] })];
      const res = await t.call({ method: "POST", url: "/v1/messages/batch", payload: { messages } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.map((item: { status: number }) => item.status)).toEqual([422, 202]);
      expect(res.json().data[0]).toMatchObject({ error: { errors: [{ pointer: "/attachments/1/url", message: expect.stringContaining("HTTP 404") }] } });
    });

    it("gives back the bytes of a message refused as too large to store once its files are fetched", async () => {
      await t.restart({ ATTACHMENT_FETCH_MAX_BYTES: String(1024 * 1024) });
      // 5.9 MiB of apostrophes counts twice in the statement: within 12 MiB alone, past it with the file.
      const html = "'".repeat(Math.floor(5.9 * 1024 * 1024));
      const messages = [aMessage({ html, text: "short", attachments: [{ url: `${files.base}/files/600k` }] }), aMessage({ attachments: [{ url: `${files.base}/files/600k` }] })];
      const res = await t.call({ method: "POST", url: "/v1/messages/batch", payload: { messages } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.map((item: { status: number }) => item.status)).toEqual([422, 202]);
      expect(res.json().data[0]).toMatchObject({ error: { errors: [{ message: expect.stringContaining("as stored") }] } });
    });

    it("answers a whole batch, or a preview, 503 while the process holds ATTACHMENT_FETCH_MAX_BYTES_IN_HAND, storing nothing", async () => {
      await t.restart({ ATTACHMENT_FETCH_MAX_BYTES: String(1024 * 1024), ATTACHMENT_FETCH_MAX_BYTES_IN_HAND: String(1024 * 1024) });
      const first = t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ attachments: [{ url: `${files.base}/files/600k-stalled` }] }) });
      await vi.waitFor(() => expect(t.runtime.services.attachmentUrls.bytesInHand).toBe(600 * 1024), { timeout: 5_000, interval: 20 });
      const url = `${files.base}/files/600k`;
      const batch = await t.call({ method: "POST", url: "/v1/messages/batch", payload: { messages: [aMessage(), aMessage({ attachments: [{ url }] })] } });
      expect(batch.statusCode, batch.body).toBe(503);
      expect(batch.headers["retry-after"]).toBeDefined();
      expect(batch.json()).toMatchObject({ code: "service_unavailable" });
      const preview = await t.call({ method: "POST", url: "/v1/messages/preview", payload: aMessage({ attachments: [{ url }] }) });
      expect(preview.statusCode, preview.body).toBe(503);
      files.finishStalled();
      expect((await first).statusCode).toBe(202);
      expect(await stored()).toHaveLength(1);
      expect(t.runtime.services.attachmentUrls.bytesInHand).toBe(0);
    });

    it("answers each message of a batch on its own: a URL that fails refuses only its message", async () => {
      const res = await t.call({
        method: "POST",
        url: "/v1/messages/batch",
        payload: { messages: [aMessage({ attachments: [{ url: `${files.base}/files/invoice.pdf` }] }), aMessage({ attachments: [{ url: `${files.base}/missing` }] })] },
      });
      expect(res.statusCode, res.body).toBe(200);
      const [accepted, refused] = res.json().data;
      expect(accepted).toMatchObject({ status: 202 });
      expect(refused).toMatchObject({ status: 422, error: { errors: [{ pointer: "/attachments/0/url" }] } });
    });

    it.each(["http://files.example:99999/a.pdf", "http://1.2.3.4.5/a.pdf", "http://999.1.1.1/a.pdf", "http://xn--a.example/a.pdf"])(
      "refuses %s, a URI the contract admits but no request can reach, at its pointer: in a send, a preview, and only its own message of a batch",
      async (url) => {
        const message = "could not be fetched: is not a URL a request can be made to (the port, or an IPv4 address or IDN host name in it, is out of range)";
        const sent = await send([{ url }]);
        expect(sent.statusCode, sent.body).toBe(422);
        expect(sent.json().errors).toEqual([{ location: "body", pointer: "/attachments/0/url", message }]);
        const preview = await t.call({ method: "POST", url: "/v1/messages/preview", payload: aMessage({ attachments: [{ url }] }) });
        expect(preview.statusCode, preview.body).toBe(422);
        const batch = await t.call({ method: "POST", url: "/v1/messages/batch", payload: { messages: [aMessage(), aMessage({ attachments: [{ url }] })] } });
        expect(batch.statusCode, batch.body).toBe(200);
        expect(batch.json().data.map((answer: { status: number }) => answer.status)).toEqual([202, 422]);
        expect(await stored()).toHaveLength(1);
      },
    );

    it("previews a message with its fetched files, storing nothing", async () => {
      const res = await t.call({ method: "POST", url: "/v1/messages/preview", payload: aMessage({ attachments: [{ url: `${files.base}/files/invoice.pdf` }] }) });
      expect(res.statusCode, res.body).toBe(200);
      expect(JSON.stringify(res.json())).toContain("invoice.pdf");
      expect(await stored()).toEqual([]);
    });
  });

  describe("the services, called by another door than HTTP", () => {
    it("hold a send, a batch and a preview to ATTACHMENT_FETCH_MAX_BYTES_IN_HAND as the API does, and take each call's bytes back when it ends", async () => {
      await t.restart({ ATTACHMENT_FETCH_MAX_BYTES: String(1024 * 1024), ATTACHMENT_FETCH_MAX_BYTES_IN_HAND: String(1024 * 1024) });
      const { auth, messages, messagePreviews, attachmentUrls } = t.runtime.services;
      const principal = await auth.authenticate(t.workspace.sandboxKey, "127.0.0.1");
      const url = `${files.base}/files/600k`;
      const first = messages.create(principal, aMessage({ attachments: [{ url: `${files.base}/files/600k-stalled` }] }), null);
      await vi.waitFor(() => expect(attachmentUrls.bytesInHand).toBe(600 * 1024), { timeout: 5_000, interval: 20 });
      const full = { code: "service_unavailable", extra: { retryAfterSeconds: 5 } };
      await expect(messages.create(principal, aMessage({ attachments: [{ url }] }), null)).rejects.toMatchObject(full);
      await expect(messages.createBatch(principal, [aMessage(), aMessage({ attachments: [{ url }] })], null)).rejects.toMatchObject(full);
      await expect(messagePreviews.preview(principal, aMessage({ attachments: [{ url }] }))).rejects.toMatchObject(full);
      expect(attachmentUrls.bytesInHand).toBe(600 * 1024);
      files.finishStalled();
      await first;
      expect(attachmentUrls.bytesInHand).toBe(0);
      await messages.createBatch(principal, [aMessage({ attachments: [{ url }] })], null);
      expect(attachmentUrls.bytesInHand).toBe(0);
      expect(await stored()).toHaveLength(2);
    });
  });
});
