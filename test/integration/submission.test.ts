import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTransport } from "nodemailer";
import type Mail from "nodemailer/lib/mailer/index.js";
import SMTPConnection from "nodemailer/lib/smtp-connection/index.js";
import { afterEach, describe, expect, it } from "vitest";
import type { SubmissionSmtpServer } from "../../src/submission/server.js";
import { databases } from "../helpers/databases.js";
import { signedUp } from "../helpers/dashboard-session.js";
import { selfSignedCertificate } from "../helpers/smtp-sink.js";
import { createTestApp, type TestApp } from "../helpers/test-app.js";

interface SendOptions {
  /** TLS from the first byte (port 465). */
  secure?: boolean;
  /** Connect as a load balancer does for this client: a PROXY protocol v1 header first. */
  proxyFrom?: string;
}

interface Harness {
  t: TestApp;
  server: SubmissionSmtpServer;
  /** Sends through the submission server with nodemailer's SMTP transport, as an application would. */
  send(mail: Mail.Options, key?: string | null, options?: SendOptions): Promise<{ id: string; response: string; rejected: string[] }>;
  /** The messages the key's environment holds. */
  stored(key?: string): Promise<Array<{ id: string }>>;
  close(): Promise<void>;
}

async function startSubmission(database: (typeof databases)[number], env: Record<string, string> = {}): Promise<Harness> {
  const t = await createTestApp(database, { SUBMISSION_SMTP_PORT: "0", ...env });
  const server = await t.runtime.startSubmission().catch(async (error: unknown) => {
    await t.close();
    throw error;
  });
  return {
    t,
    server,
    async send(mail, key = t.workspace.sandboxKey, options = {}) {
      const transport = createTransport({
        host: "127.0.0.1",
        port: server.port,
        secure: options.secure ?? false,
        ...(key === null ? {} : { auth: { user: "mailroom", pass: key } }),
        tls: { rejectUnauthorized: false },
      });
      const { proxyFrom } = options;
      if (proxyFrom !== undefined) {
        transport.getSocket = (_options, callback) => {
          const socket = connect({ host: "127.0.0.1", port: server.port }, () => {
            socket.write(`PROXY TCP4 ${proxyFrom} 127.0.0.1 40000 ${server.port}\r\n`);
            callback(null, { connection: socket });
          });
          socket.once("error", (error) => callback(error));
        };
      }
      try {
        const info = await transport.sendMail(mail);
        const id = /^250 2\.0\.0 Ok: queued as (msg_[0-9a-z]+)$/.exec(info.response)?.[1];
        if (!id) throw new Error(`unexpected answer: ${info.response}`);
        return { id, response: info.response, rejected: info.rejected.map(String) };
      } finally {
        transport.close();
      }
    },
    async stored(key = t.workspace.sandboxKey) {
      const res = await t.call({ method: "GET", url: "/v1/messages", key });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data;
    },
    async close() {
      await server.close();
      await t.close();
    },
  };
}

/** A connection to the submission server, logged in with `key` (nodemailer's SMTP client, driven command by command). */
async function authenticated(h: Harness, key = h.t.workspace.sandboxKey): Promise<SMTPConnection> {
  const connection = new SMTPConnection({ host: "127.0.0.1", port: h.server.port, ignoreTLS: true });
  await new Promise<void>((resolve, reject) => connection.connect((error?: Error) => (error ? reject(error) : resolve())));
  await new Promise<void>((resolve, reject) => connection.login({ user: "mailroom", pass: key }, (error) => (error ? reject(error) : resolve())));
  return connection;
}

/** The server's replies on a raw socket, one (multi-line ones joined) per next(). */
async function* smtpReplies(socket: Socket): AsyncGenerator<string> {
  let buffered = "";
  let lines: string[] = [];
  for await (const chunk of socket) {
    buffered += String(chunk);
    let end: number;
    while ((end = buffered.indexOf("\r\n")) >= 0) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      lines.push(line);
      if (line[3] !== "-") {
        yield lines.join("\n");
        lines = [];
      }
    }
  }
}

/** The SMTP error a send failed with. */
async function refusal(sending: Promise<unknown>): Promise<{ responseCode?: number; response?: string; command?: string }> {
  return sending.then(
    () => {
      throw new Error("the send was accepted");
    },
    (error: { responseCode?: number; response?: string; command?: string }) => error,
  );
}

const receipt = (overrides: Mail.Options = {}): Mail.Options => ({ from: "Acme <hello@acme.example>", to: "ada@example.com", subject: "Your receipt", html: "<p>Paid</p>", ...overrides });

describe.each(databases)("SMTP submission ($name)", (database) => {
  let h: Harness;
  afterEach(async () => h?.close());

  describe("sending", () => {
    it("accepts a message sent with an API key, answers with its id once it is stored, and runs it through the sandbox pipeline", async () => {
      h = await startSubmission(database);
      const sent = await h.send({
        from: "Acme <hello@acme.example>",
        to: "Ada <ada@example.com>",
        cc: "bounced@simulator.test",
        bcc: "grace@example.com",
        subject: "Your receipt",
        html: '<p>Paid <img src="cid:logo@acme"></p>',
        text: "Paid",
        headers: { "X-Entity-Ref-ID": "order-1042", "X-Mailroom-Tags": "receipt", "X-Mailroom-Metadata": '{"order_id":"1042"}' },
        attachments: [
          { filename: "receipt.pdf", content: Buffer.from("%PDF-1.4 receipt"), contentType: "application/pdf" },
          { filename: "logo.png", content: Buffer.from([0x89, 0x50, 0x4e, 0x47]), contentType: "image/png", cid: "logo@acme" },
        ],
      });
      // Durable before the 250: a new process on the same database finds it.
      await h.t.restart();
      const res = await h.t.call({ method: "GET", url: `/v1/messages/${sent.id}` });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({
        environment: "sandbox",
        from: "Acme <hello@acme.example>",
        to: ["Ada <ada@example.com>"],
        cc: ["bounced@simulator.test"],
        bcc: ["grace@example.com"],
        subject: "Your receipt",
        html: '<p>Paid <img src="cid:logo@acme"></p>',
        text: "Paid",
        headers: { "X-Entity-Ref-ID": "order-1042" },
        tags: ["receipt"],
        metadata: { order_id: "1042" },
        idempotency_key: expect.stringMatching(/^smtp:/),
        attachments: [
          { filename: "logo.png", content_type: "image/png", content_id: "logo@acme", size: 4 },
          { filename: "receipt.pdf", content_type: "application/pdf", content_id: null, size: 16 },
        ],
      });
      await h.t.drain();
      const after = (await h.t.call({ method: "GET", url: `/v1/messages/${sent.id}` })).json();
      expect(after.recipients.map((r: { email: string; status: string }) => [r.email, r.status])).toEqual([
        ["ada@example.com", "delivered"],
        ["bounced@simulator.test", "bounced"],
        ["grace@example.com", "delivered"],
      ]);
      // The message as rendered carries the client's own header and none of the control headers or the Bcc.
      expect(after.mime).toContain("X-Entity-Ref-ID: order-1042");
      expect(after.mime).not.toMatch(/X-Mailroom-|grace@example\.com/i);
      expect(after.message_id_header).toMatch(new RegExp(`^<${sent.id}@acme\\.example>$`));
    });

    it("belongs to the key's workspace and environment: another environment's or workspace's key gets 404", async () => {
      h = await startSubmission(database);
      const sent = await h.send(receipt());
      for (const key of [h.t.workspace.liveKey, h.t.other.sandboxKey]) {
        const res = await h.t.call({ method: "GET", url: `/v1/messages/${sent.id}`, key });
        expect(res.statusCode).toBe(404);
      }
      expect(await h.stored(h.t.workspace.liveKey)).toEqual([]);
    });

    it("sends a message without From from the workspace's default sender", async () => {
      h = await startSubmission(database);
      const patched = await h.t.call({ method: "PATCH", url: "/v1/workspace", payload: { default_from: "Acme <hello@acme.example>" } });
      expect(patched.statusCode, patched.body).toBe(200);
      const raw = ["To: ada@example.com", "Subject: Hi", "Message-ID: <1@app.example>", "", "Hello", ""].join("\r\n");
      const sent = await h.send({ envelope: { from: "app@app.example", to: ["ada@example.com"] }, raw });
      expect((await h.t.call({ method: "GET", url: `/v1/messages/${sent.id}` })).json()).toMatchObject({ from: "Acme <hello@acme.example>", text: "Hello" });
    });

    it("answers the same bytes sent again with the message already accepted (a lost 250, RFC 1047), and sends another message with the same Message-ID", async () => {
      h = await startSubmission(database);
      const raw = (body: string) => ["From: hello@acme.example", "To: ada@example.com", "Subject: Hi", "Message-ID: <42@app.example>", "Date: Sat, 28 Nov 2026 10:00:00 +0000", "", body, ""].join("\r\n");
      const envelope = { from: "hello@acme.example", to: ["ada@example.com"] };
      const first = await h.send({ envelope, raw: raw("Hello") });
      const again = await h.send({ envelope, raw: raw("Hello") });
      const other = await h.send({ envelope, raw: raw("Something else") });
      // The same bytes to more recipients (a client that splits a message between transactions) are another message.
      const wider = await h.send({ envelope: { ...envelope, to: ["ada@example.com", "grace@example.com"] }, raw: raw("Hello") });
      expect(again.id).toBe(first.id);
      expect(new Set([first.id, other.id, wider.id]).size).toBe(3);
      expect((await h.stored()).map((m) => m.id).sort()).toEqual([first.id, other.id, wider.id].sort());
      expect((await h.t.call({ method: "GET", url: `/v1/messages/${wider.id}` })).json().bcc).toEqual(["grace@example.com"]);
    });

    it("answers a resend with the message already accepted before checking it again: its scheduled time has passed since, which a new message could not have", async () => {
      h = await startSubmission(database);
      const due = new Date(h.t.clock.now() + 60_000).toISOString();
      const raw = ["From: hello@acme.example", "To: ada@example.com", "Subject: Hi", "Message-ID: <43@app.example>", `X-Mailroom-Scheduled-At: ${due}`, "", "Hello", ""].join("\r\n");
      const envelope = { from: "hello@acme.example", to: ["ada@example.com"] };
      const first = await h.send({ envelope, raw });
      h.t.clock.advance(5 * 60_000);
      const again = await h.send({ envelope, raw });
      expect(again.id).toBe(first.id);
      // The same message under another Message-ID is new, and refused for its past scheduled time.
      const refused = await refusal(h.send({ envelope, raw: raw.replace("<43@app.example>", "<44@app.example>") }));
      expect(refused.response).toMatch(/^554 5\.6\.0 validation_failed: .*scheduled_at/);
      expect((await h.stored()).map((m) => m.id)).toEqual([first.id]);
    });

    it("takes live mail from a verified domain, and refuses it from any other with 550 5.7.1 sender_domain_not_verified, storing nothing", async () => {
      h = await startSubmission(database);
      const refused = await refusal(h.send(receipt(), h.t.workspace.liveKey));
      expect(refused).toMatchObject({ responseCode: 550, command: "DATA" });
      expect(refused.response).toMatch(/^550 5\.7\.1 sender_domain_not_verified: \/from: acme\.example is not a verified domain/);
      expect(await h.stored(h.t.workspace.liveKey)).toEqual([]);
      await h.t.verifiedDomain("acme.example");
      const sent = await h.send(receipt(), h.t.workspace.liveKey);
      expect((await h.t.call({ method: "GET", url: `/v1/messages/${sent.id}`, key: h.t.workspace.liveKey })).json()).toMatchObject({ environment: "live", status: "queued" });
    });
  });

  describe("refusals", () => {
    it("refuses a message the API would refuse, naming each field and the problem's code, and stores nothing", async () => {
      h = await startSubmission(database);
      const cases: Array<[Mail.Options, RegExp]> = [
        [receipt({ to: undefined, bcc: "ada@example.com" }), /^554 5\.6\.0 validation_failed: \/to: a To header naming at least one of the recipients is required$/],
        [receipt({ subject: undefined }), /^554 5\.6\.0 validation_failed: \/subject: /],
        [receipt({ headers: { "X-Mailroom-Tag": "receipt" } }), /^554 5\.6\.0 validation_failed: \/headers\/X-Mailroom-Tag: is not a Mailroom header/],
        [receipt({ headers: { "X-Mailroom-Tags": "not a tag!" } }), /^554 5\.6\.0 validation_failed: \/tags\/0: /],
        [receipt({ headers: { "X-Mailroom-Scheduled-At": "tomorrow" } }), /^554 5\.6\.0 validation_failed: \/scheduled_at: /],
      ];
      for (const [mail, expected] of cases) {
        const refused = await refusal(h.send(mail));
        expect(refused.response, JSON.stringify(mail)).toMatch(expected);
      }
      expect(await h.stored()).toEqual([]);
    });

    it("holds a key to its restrictions: a recipient outside recipient_domains is refused with 550 5.7.1", async () => {
      h = await startSubmission(database);
      const created = await h.t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Billing", permission: "sending_access", restrictions: { recipient_domains: ["example.com"] } } });
      expect(created.statusCode, created.body).toBe(201);
      const refused = await refusal(h.send(receipt({ to: "ada@example.org" }), created.json().secret));
      expect(refused.response).toMatch(/^550 5\.7\.1 recipient_not_allowed: /);
      await h.send(receipt(), created.json().secret);
      expect(await h.stored()).toHaveLength(1);
    });

    it("refuses a recipient that is not an address (550 5.1.3) and the 51st recipient (452 4.5.3); the others are sent, with the refused left out of To", async () => {
      h = await startSubmission(database);
      const connection = await authenticated(h);
      const to = ["ada@localhost", ...Array.from({ length: 51 }, (_, i) => `user${i}@example.com`)];
      // As clients write it: every recipient in the To header too, the refused ones included.
      const info = await new Promise<SMTPConnection.SentMessageInfo>((resolve, reject) =>
        connection.send({ from: "hello@acme.example", to }, `From: hello@acme.example\r\nTo: ${to.join(", ")}\r\nSubject: Hi\r\n\r\nHello\r\n`, (error, result) => (error ? reject(error) : resolve(result))),
      );
      connection.quit();
      expect(info.rejectedErrors?.map((e) => e.response)).toEqual([expect.stringMatching(/^550 5\.1\.3 /), expect.stringMatching(/^452 4\.5\.3 Too many recipients: at most 50/)]);
      const id = /queued as (msg_[0-9a-z]+)/.exec(info.response)![1]!;
      const message = (await h.t.call({ method: "GET", url: `/v1/messages/${id}` })).json();
      expect(message.recipients).toHaveLength(50);
      expect(message.to).toEqual(to.slice(1, 51));
    });

    it("refuses a message over SUBMISSION_MAX_MESSAGE_BYTES with 552: at MAIL FROM when its SIZE says so, else 552 5.3.4 after its data", async () => {
      h = await startSubmission(database, { SUBMISSION_MAX_MESSAGE_BYTES: "4096" });
      const big = `From: hello@acme.example\r\nTo: ada@example.com\r\nSubject: Hi\r\n\r\n${"x".repeat(8000)}\r\n`;
      // nodemailer's client checks a SIZE it declares itself, so the declared case is spoken by hand.
      const socket = connect(h.server.port, "127.0.0.1");
      const replies = smtpReplies(socket);
      await replies.next();
      for (const command of ["EHLO app.example", `AUTH PLAIN ${Buffer.from(`\0mailroom\0${h.t.workspace.sandboxKey}`).toString("base64")}`]) {
        socket.write(`${command}\r\n`);
        expect((await replies.next()).value).toMatch(/^2/);
      }
      socket.write(`MAIL FROM:<hello@acme.example> SIZE=${big.length}\r\n`);
      expect((await replies.next()).value).toMatch(/^552 .*exceeds fixed maximum message size 4096/);
      socket.destroy();
      const connection = await authenticated(h);
      const undeclared = await new Promise<Error & { responseCode?: number; response?: string }>((resolve) => connection.send({ from: "hello@acme.example", to: ["ada@example.com"] }, big, (error) => resolve(error!)));
      connection.quit();
      expect(undeclared.response).toMatch(/^552 5\.3\.4 Message too big: the limit is 4096 bytes/);
      expect(await h.stored()).toEqual([]);
    });

    it("refuses for good (552 5.3.4, not 451) a message past the MIME parser's limits: more than 1,000 parts, or a part with over 1 MiB of header fields", async () => {
      h = await startSubmission(database);
      const head = "From: hello@acme.example\r\nTo: ada@example.com\r\nSubject: Hi\r\n";
      const parts = Array.from({ length: 1001 }, () => "--b\r\nContent-Type: text/plain\r\n\r\nx\r\n").join("");
      const manyParts = `${head}MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n${parts}--b--\r\n`;
      const longHeader = `${head}X-Long: ${"x".repeat(990)}\r\n${" y".repeat(600_000)}\r\n\r\nHello\r\n`;
      for (const raw of [manyParts, longHeader]) {
        const connection = await authenticated(h);
        const refused = await new Promise<Error & { response?: string }>((resolve) => connection.send({ from: "hello@acme.example", to: ["ada@example.com"] }, raw, (error) => resolve(error!)));
        connection.quit();
        expect(refused.response).toMatch(/^552 5\.3\.4 Message too big for system: it has more MIME parts than a message can \(at most 1000, each with at most 1 MiB of header fields\)/);
      }
      expect(await h.stored()).toEqual([]);
    });

    it("counts each message against the key's rate limit: past it, 451 4.7.1 at MAIL FROM, so the client retries", async () => {
      h = await startSubmission(database, { RATE_LIMIT_REQUESTS: "1" });
      await h.send(receipt());
      const refused = await refusal(h.send(receipt()));
      expect(refused).toMatchObject({ responseCode: 451, command: "MAIL FROM" });
      expect(refused.response).toMatch(/^451 4\.7\.1 rate_limited: .*retry in \d+ s/);
      // The next window takes it.
      h.t.clock.advance(60_000);
      await h.send(receipt());
      h.t.clock.advance(60_000);
      expect(await h.stored()).toHaveLength(2);
    });
  });

  describe("authentication", () => {
    it("refuses to take mail before AUTH (530), and an unknown, revoked or mistyped key or a dashboard token (535), storing nothing", async () => {
      h = await startSubmission(database);
      expect(await refusal(h.send(receipt(), null))).toMatchObject({ responseCode: 530, command: "MAIL FROM", response: expect.stringMatching(/^530 5\.7\.0 Authentication required/) });
      const created = await h.t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Old" } });
      const revoked = created.json().secret as string;
      expect((await h.t.call({ method: "DELETE", url: `/v1/api-keys/${created.json().id}` })).statusCode).toBe(200);
      const { session, workspaceId } = await signedUp(h.t, { email: "ada@acme.example" });
      const token = (await session.post("/auth/token", { workspace_id: workspaceId, environment: "sandbox" })).json().token as string;
      const mistyped = `${h.t.workspace.sandboxKey.slice(0, -1)}${h.t.workspace.sandboxKey.endsWith("a") ? "b" : "a"}`;
      for (const key of [revoked, mistyped, token, "not a key"]) {
        const refused = await refusal(h.send(receipt(), key));
        expect(refused, key).toMatchObject({ responseCode: 535 });
        expect(refused.response).toMatch(/^535 5\.7\.8 invalid_api_key: /);
      }
      expect(await h.stored()).toEqual([]);
    });

    it("refuses a key from outside its allowed_ips with 535 5.7.1 ip_not_allowed", async () => {
      h = await startSubmission(database);
      const created = await h.t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Office", restrictions: { allowed_ips: ["203.0.113.0/24"] } } });
      expect(created.statusCode, created.body).toBe(201);
      const refused = await refusal(h.send(receipt(), created.json().secret));
      expect(refused.response).toMatch(/^535 5\.7\.1 ip_not_allowed: .*127\.0\.0\.1/);
    });

    it("checks the key again at every message: one revoked while its session is open sends nothing more (535 at MAIL FROM)", async () => {
      h = await startSubmission(database);
      const created = await h.t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "App" } });
      const connection = await authenticated(h, created.json().secret);
      const mail = "From: hello@acme.example\r\nTo: ada@example.com\r\nSubject: Hi\r\n\r\nHello\r\n";
      const sendOnSession = () => new Promise<{ error?: Error & { responseCode?: number; response?: string } }>((resolve) => connection.send({ from: "hello@acme.example", to: ["ada@example.com"] }, mail, (error) => resolve({ error: error ?? undefined })));
      expect((await sendOnSession()).error).toBeUndefined();
      expect((await h.t.call({ method: "DELETE", url: `/v1/api-keys/${created.json().id}` })).statusCode).toBe(200);
      const { error } = await sendOnSession();
      connection.quit();
      expect(error).toMatchObject({ responseCode: 535, response: expect.stringMatching(/^535 5\.7\.8 invalid_api_key: /) });
      expect(await h.stored()).toHaveLength(1);
    });

    it("will not listen beyond loopback without TLS, so that a key never crosses a network in clear", async () => {
      const t = await createTestApp(database, { SUBMISSION_SMTP_PORT: "0", SUBMISSION_SMTP_HOST: "0.0.0.0" });
      try {
        await expect(t.runtime.startSubmission()).rejects.toThrow(/SUBMISSION_SMTP_HOST=0\.0\.0\.0 needs SUBMISSION_TLS_KEY_FILE and SUBMISSION_TLS_CERT_FILE/);
      } finally {
        await t.close();
      }
    });

    it("refuses AUTH in clear from a client that a load balancer on loopback names: the key crossed a network before it (538)", async () => {
      h = await startSubmission(database, { SUBMISSION_PROXY_PROTOCOL_FROM: "127.0.0.1" });
      const refused = await refusal(h.send(receipt(), h.t.workspace.sandboxKey, { proxyFrom: "203.0.113.9" }));
      expect(refused).toMatchObject({ responseCode: 538, response: expect.stringMatching(/^538 5\.7\.11 /) });
      expect(await h.stored()).toEqual([]);
    });

    describe("with TLS", () => {
      let dir: string;
      const tlsFiles = () => {
        dir = mkdtempSync(join(tmpdir(), "mailroom-submission-tls-"));
        const { key, cert } = selfSignedCertificate();
        writeFileSync(join(dir, "key.pem"), key);
        writeFileSync(join(dir, "cert.pem"), cert);
        return { SUBMISSION_TLS_KEY_FILE: join(dir, "key.pem"), SUBMISSION_TLS_CERT_FILE: join(dir, "cert.pem") };
      };
      afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

      it("takes AUTH only once the session is encrypted, from any client: 538 before STARTTLS", async () => {
        h = await startSubmission(database, tlsFiles());
        const plain = new SMTPConnection({ host: "127.0.0.1", port: h.server.port, ignoreTLS: true });
        await new Promise<void>((resolve, reject) => plain.connect((error?: Error) => (error ? reject(error) : resolve())));
        const refused = await new Promise<Error & { responseCode?: number }>((resolve) => plain.login({ user: "mailroom", pass: h.t.workspace.sandboxKey }, (error) => resolve(error!)));
        plain.close();
        expect(refused).toMatchObject({ responseCode: 538 });
        await h.send(receipt());
        expect(await h.stored()).toHaveLength(1);
      });

      it("holds a key's allowed_ips against the client that a listed load balancer names (PROXY protocol), not against the balancer", async () => {
        h = await startSubmission(database, { ...tlsFiles(), SUBMISSION_PROXY_PROTOCOL_FROM: "127.0.0.1" });
        const created = await h.t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Office", restrictions: { allowed_ips: ["203.0.113.0/24"] } } });
        expect(created.statusCode, created.body).toBe(201);
        const key = created.json().secret as string;
        await h.send(receipt(), key, { proxyFrom: "203.0.113.9" });
        const refused = await refusal(h.send(receipt(), key, { proxyFrom: "198.51.100.7" }));
        expect(refused.response).toMatch(/^535 5\.7\.1 ip_not_allowed: .*198\.51\.100\.7/);
        expect(await h.stored()).toHaveLength(1);
      });

      it("speaks TLS from the first byte with SUBMISSION_IMPLICIT_TLS (port 465)", async () => {
        h = await startSubmission(database, { ...tlsFiles(), SUBMISSION_IMPLICIT_TLS: "true" });
        await h.send(receipt(), h.t.workspace.sandboxKey, { secure: true });
        expect(await h.stored()).toHaveLength(1);
      });
    });
  });
});
