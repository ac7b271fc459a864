import { createServer, type AddressInfo, type Socket } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { databases } from "../helpers/databases.js";
import { verifyDkim } from "../helpers/dkim-verify.js";
import { headersOf, RECIPIENT_DOMAIN, startLiveHarness, type LiveHarness } from "../helpers/live-delivery.js";

const RETRY_WAIT_MS = 5 * 60 * 1000 * 1.2; // the first retry (RETRY_MIN_SECONDS=300) plus its jitter

describe.each(databases)("live delivery through the MX transport ($name)", (database) => {
  let h: LiveHarness;
  afterEach(async () => h?.close());

  const ada = `ada@${RECIPIENT_DOMAIN}`;
  const eventTypes = async (id: string) => (await h.events(id)).map((e) => e.type);

  it("delivers exactly the message, signed twice (RSA and Ed25519) so that an independent verifier passes both", async () => {
    h = await startLiveHarness(database);
    const id = await h.send({ to: `Ada Lovelace <${ada}>`, subject: "Your receipt", text: "Thanks for your order." });
    await h.t.drain();

    expect(h.sink.accepted).toHaveLength(1);
    const mail = h.sink.accepted[0]!;
    expect(mail.rcptTo).toEqual([ada]);
    expect(mail.mailFrom).toMatch(/^bounces\+msg_[0-9a-z]+-0-[0-9a-f]{10}@bounces\.acme\.example$/);
    expect(mail.secure).toBe(true); // opportunistic STARTTLS was offered and taken

    const message = await h.message(id);
    expect(message.status).toBe("delivered");
    const headers = headersOf(mail.raw);
    expect(headers.find(([name]) => name.toLowerCase() === "message-id")?.[1]).toBe(message.message_id_header);
    expect(headers.filter(([name]) => name.toLowerCase() === "dkim-signature")).toHaveLength(2);

    const results = await verifyDkim(mail.raw, h.published);
    expect(results.map((r) => [r.domain, r.algorithm, r.valid, r.error])).toEqual(
      expect.arrayContaining([
        ["acme.example", "rsa-sha256", true, null],
        ["acme.example", "ed25519-sha256", true, null],
      ]),
    );
    expect(results).toHaveLength(2);

    const delivered = (await h.events(id)).find((e) => e.type === "message.delivered")!;
    expect(delivered.data).toMatchObject({ smtp_code: 250, enhanced_status: expect.stringMatching(/^2\./), remote_host: `mx1.${RECIPIENT_DOMAIN}[127.0.0.1]`, attempt: 1 });
  });

  it("signs with the new keys once a DKIM rotation ends, which the independent verifier checks against the new records alone", async () => {
    h = await startLiveHarness(database);
    const call = (method: "GET" | "POST", url: string) => h.t.call({ method, url, key: h.t.workspace.liveKey });
    const domainId = (await call("GET", "/v1/domains")).json().data[0].id as string;
    const rotating = (await call("POST", `/v1/domains/${domainId}/rotate-dkim`)).json() as { records: Array<{ purpose: string; name: string; value: string }>; dkim_rotation: { keys: Array<{ selector: string }> } };
    const published: Record<string, string> = {};
    for (const record of rotating.records.filter((r) => r.purpose === "dkim_next")) {
      h.dns.add(record.name, { type: "TXT", value: record.value });
      published[record.name] = record.value;
    }
    expect((await call("POST", `/v1/domains/${domainId}/verify`)).json()).toMatchObject({ dkim_rotation: null, dkim: rotating.dkim_rotation.keys });

    await h.send({ to: ada, subject: "Signed anew" });
    await h.t.drain();
    const results = await verifyDkim(h.sink.accepted[0]!.raw, published);
    expect(results.map((r) => [r.selector, r.valid, r.error])).toEqual(rotating.dkim_rotation.keys.map((k) => [k.selector, true, null]));
  });

  it("defers on 451 with backoff, then delivers once when the MX accepts", async () => {
    h = await startLiveHarness(database);
    h.sink.onRcpt((_address, attempt) => (attempt <= 2 ? { code: 451, message: "4.7.1 Greylisted, try again later" } : undefined));
    const id = await h.send({ to: ada });

    await h.t.drain();
    expect((await h.message(id)).status).toBe("deferred");
    const first = (await h.events(id)).find((e) => e.type === "message.deferred")!;
    expect(first.data).toMatchObject({ smtp_code: 451, enhanced_status: "4.7.1", attempt: 1 });
    expect(Date.parse(first.data.next_attempt_at as string)).toBeGreaterThan(h.t.clock.now() + 4 * 60 * 1000);

    // Not before the retry is due.
    h.t.clock.advance(60 * 1000);
    await h.t.drain();
    expect(await eventTypes(id)).toEqual(["message.queued", "message.deferred"]);

    h.t.clock.advance(RETRY_WAIT_MS);
    await h.t.drain();
    h.t.clock.advance(2 * RETRY_WAIT_MS);
    await h.t.drain();
    expect(await eventTypes(id)).toEqual(["message.queued", "message.deferred", "message.deferred", "message.delivered"]);
    expect(h.sink.accepted).toHaveLength(1);
    expect((await h.message(id)).status).toBe("delivered");
  });

  it("bounces 550 5.1.1 hard at once, suppresses the address, and suppresses the next send to it", async () => {
    h = await startLiveHarness(database);
    h.sink.onRcpt((address) => (address === ada ? { code: 550, message: "5.1.1 <ada@example.net>: Recipient address rejected: User unknown" } : undefined));
    const first = await h.send({ to: [ada, `grace@${RECIPIENT_DOMAIN}`] });
    await h.t.drain();

    const bounced = (await h.events(first)).find((e) => e.type === "message.bounced")!;
    expect(bounced).toMatchObject({ recipient: ada, data: { smtp_code: 550, enhanced_status: "5.1.1", bounce_type: "hard", attempt: 1 } });
    expect(String(bounced.data.response)).toContain("User unknown");
    h.t.clock.advance(10 * RETRY_WAIT_MS);
    await h.t.drain();
    expect((await h.events(first)).filter((e) => e.recipient === ada).map((e) => e.type)).toEqual(["message.bounced"]); // no retry

    const list = (await h.t.call({ method: "GET", url: `/v1/suppressions?email=${ada}`, key: h.t.workspace.liveKey })).json().data;
    expect(list).toEqual([expect.objectContaining({ email: ada, reason: "hard_bounce", message_id: first })]);
    // Only the live environment's list: the sandbox's is separate.
    expect((await h.t.call({ method: "GET", url: "/v1/suppressions" })).json().data).toEqual([]);

    const second = await h.send({ to: [ada, `grace@${RECIPIENT_DOMAIN}`] });
    await h.t.drain();
    const events = await h.events(second);
    expect(events.find((e) => e.recipient === ada)).toMatchObject({ type: "message.suppressed", data: { reason: "hard_bounce" } });
    expect(events.find((e) => e.recipient === `grace@${RECIPIENT_DOMAIN}`)?.type).toBe("message.delivered");
    expect(h.sink.accepted.filter((m) => m.rcptTo.includes(ada))).toHaveLength(0);
  });

  it("bounces 552 5.2.2 (mailbox full) soft, without suppressing the address", async () => {
    h = await startLiveHarness(database);
    h.sink.onData(() => ({ code: 552, message: "5.2.2 Mailbox full" }));
    const id = await h.send({ to: ada });
    await h.t.drain();
    const bounced = (await h.events(id)).find((e) => e.type === "message.bounced")!;
    expect(bounced.data).toMatchObject({ smtp_code: 552, enhanced_status: "5.2.2", bounce_type: "soft" });
    expect((await h.t.call({ method: "GET", url: "/v1/suppressions", key: h.t.workspace.liveKey })).json().data).toEqual([]);
  });

  it("keeps the first 1,000 characters of a very long answer, so the outcome is recorded once and the mail not sent again", async () => {
    h = await startLiveHarness(database);
    const blurb = "Your message was rejected by our policy engine. ".repeat(2_000); // ~96 KB, past MySQL's TEXT
    h.sink.onRcpt((address) => (address === ada ? { code: 550, message: `5.1.1 ${blurb}` } : undefined));
    const id = await h.send({ to: [ada, `grace@${RECIPIENT_DOMAIN}`] });
    await h.t.drain();

    const bounced = (await h.events(id)).find((e) => e.type === "message.bounced")!;
    expect(bounced.data).toMatchObject({ smtp_code: 550, enhanced_status: "5.1.1", bounce_type: "hard" });
    const kept = String(bounced.data.response);
    expect(kept.startsWith(`550 5.1.1 ${blurb.slice(0, 900)}`)).toBe(true);
    expect(kept).toMatch(/… \(\d+ more characters not kept\)$/);
    expect(kept.length).toBeLessThan(1_100);
    const message = await h.message(id);
    expect(message.recipients.find((r) => r.email === ada)).toMatchObject({ status: "bounced" });
    const suppressed = (await h.t.call({ method: "GET", url: `/v1/suppressions?email=${ada}`, key: h.t.workspace.liveKey })).json().data;
    expect(suppressed).toEqual([expect.objectContaining({ reason: "hard_bounce", message_id: id })]);

    // Recorded: however much time passes, neither recipient is tried again.
    h.t.clock.advance(10 * RETRY_WAIT_MS);
    await h.t.drain();
    expect(h.sink.accepted).toHaveLength(1);
    expect((await h.events(id)).map((e) => e.type).sort()).toEqual(["message.bounced", "message.delivered", "message.queued"]);
  });

  it("retries a connection dropped after DATA with the same Message-ID: at most the one duplicate RFC 1047 allows", async () => {
    h = await startLiveHarness(database);
    h.sink.onData((_mail, attempt) => (attempt === 1 ? "drop" : undefined));
    const id = await h.send({ to: ada });
    await h.t.drain();
    expect((await h.message(id)).status).toBe("deferred");
    h.t.clock.advance(RETRY_WAIT_MS);
    await h.t.drain();

    expect((await h.message(id)).status).toBe("delivered");
    expect(h.sink.messages).toHaveLength(2);
    const ids = h.sink.messages.map((m) => headersOf(m.raw).find(([name]) => name.toLowerCase() === "message-id")?.[1]);
    expect(new Set(ids).size).toBe(1);
    expect(ids[0]).toBe((await h.message(id)).message_id_header);
    expect(await eventTypes(id)).toEqual(["message.queued", "message.deferred", "message.delivered"]);
  });

  it("bounces a domain with a null MX (RFC 7505) and a domain that does not exist, without retrying", async () => {
    h = await startLiveHarness(database);
    h.dns.add("nullmx.example", { type: "MX", priority: 0, exchange: "." });
    const id = await h.send({ to: ["ada@nullmx.example", "ada@nowhere.example"] });
    await h.t.drain();
    const events = await h.events(id);
    expect(events.find((e) => e.recipient === "ada@nullmx.example")).toMatchObject({ type: "message.bounced", data: { enhanced_status: "5.1.10", bounce_type: "hard" } });
    expect(events.find((e) => e.recipient === "ada@nowhere.example")).toMatchObject({ type: "message.bounced", data: { enhanced_status: "5.1.2", bounce_type: "hard" } });
    expect((await h.message(id)).status).toBe("bounced");
  });

  it("defers while the recipient's DNS fails (SERVFAIL) and delivers once it recovers", async () => {
    h = await startLiveHarness(database);
    h.dns.fail(RECIPIENT_DOMAIN, "SERVFAIL", 1);
    const id = await h.send({ to: ada });
    await h.t.drain();
    expect((await h.events(id)).find((e) => e.type === "message.deferred")?.data).toMatchObject({ enhanced_status: "4.4.3" });
    h.t.clock.advance(RETRY_WAIT_MS);
    await h.t.drain();
    expect((await h.message(id)).status).toBe("delivered");
    expect(h.sink.accepted).toHaveLength(1);
  });

  it("fails what is still deferred at the message's expires_at with 4.4.7, and sends nothing more", async () => {
    h = await startLiveHarness(database);
    h.sink.onRcpt(() => ({ code: 421, message: "4.3.2 Service shutting down" }));
    const expiresAt = new Date(h.t.clock.now() + 20 * 60 * 1000).toISOString();
    const id = await h.send({ to: ada, expires_at: expiresAt });
    for (let i = 0; i < 6; i++) {
      await h.t.drain();
      h.t.clock.advance(RETRY_WAIT_MS);
    }
    await h.t.drain();
    const events = await h.events(id);
    const failed = events.find((e) => e.type === "message.failed")!;
    expect(failed.data).toMatchObject({ enhanced_status: "4.4.7" });
    expect(String(failed.data.response)).toContain("4.3.2");
    expect((await h.message(id)).status).toBe("failed");
    const attempts = events.filter((e) => e.type === "message.deferred").length;
    expect(attempts).toBeGreaterThanOrEqual(2);
    expect(events.at(-1)!.type).toBe("message.failed");
  });

  it("fails a message rescheduled to now at the lifetime after it became due, not at its later expires_at", async () => {
    const HOUR = 60 * 60 * 1000;
    h = await startLiveHarness(database, { env: () => ({ DELIVERY_LIFETIME_SECONDS: "3600" }) });
    h.sink.onRcpt(() => ({ code: 451, message: "4.7.1 Try again later" }));
    const now = h.t.clock.now();
    // Within the lifetime of its scheduled time, but almost three hours after now.
    const id = await h.send({ to: ada, scheduled_at: new Date(now + 2 * HOUR).toISOString(), expires_at: new Date(now + 2.8 * HOUR).toISOString() });
    const rescheduled = await h.t.call({ method: "POST", url: `/v1/messages/${id}/reschedule`, key: h.t.workspace.liveKey, payload: { scheduled_at: null } });
    expect(rescheduled.statusCode, rescheduled.body).toBe(200);
    await h.t.drain();
    const deferred = (await h.events(id)).find((e) => e.type === "message.deferred")!;
    expect(Date.parse(deferred.data.next_attempt_at as string)).toBeLessThanOrEqual(now + HOUR);

    h.t.clock.advance(HOUR + 60 * 1000); // past the lifetime, well before expires_at
    await h.t.drain();
    expect((await h.message(id)).status).toBe("failed");
    expect((await h.events(id)).at(-1)).toMatchObject({ type: "message.failed", data: { enhanced_status: "4.4.7" } });
    expect(h.sink.accepted).toEqual([]);
  });

  it("fails, sending nothing, a message whose domain was deleted while it waited: scheduled, or deferred for a retry", async () => {
    h = await startLiveHarness(database);
    h.sink.onRcpt((_address, attempt) => (attempt === 1 ? { code: 451, message: "4.7.1 Greylisted, try again later" } : undefined));
    const deferred = await h.send({ to: ada });
    await h.t.drain();
    expect((await h.message(deferred)).status).toBe("deferred");
    const scheduled = await h.send({ to: `grace@${RECIPIENT_DOMAIN}`, scheduled_at: new Date(h.t.clock.now() + 60 * 60 * 1000).toISOString() });

    const domainId = (await h.t.call({ method: "GET", url: "/v1/domains", key: h.t.workspace.liveKey })).json().data[0].id as string;
    expect((await h.t.call({ method: "DELETE", url: `/v1/domains/${domainId}`, key: h.t.workspace.liveKey })).statusCode).toBe(200);
    h.t.clock.advance(2 * 60 * 60 * 1000);
    await h.t.drain();

    expect(h.sink.accepted).toEqual([]);
    for (const id of [deferred, scheduled]) {
      expect((await h.message(id)).status).toBe("failed");
      const failed = (await h.events(id)).at(-1)!;
      expect(failed).toMatchObject({ type: "message.failed", data: { smtp_code: null, enhanced_status: "5.7.1" } });
      expect(String(failed.data.response)).toContain("acme.example is no longer a sending domain of this workspace");
    }
    // Not the recipients' fault: nothing is suppressed.
    expect((await h.t.call({ method: "GET", url: "/v1/suppressions", key: h.t.workspace.liveKey })).json().data).toEqual([]);
  });

  it("fails a message at its deadline even when its domain's keys can no longer be opened, rather than retrying it forever", async () => {
    h = await startLiveHarness(database);
    h.sink.onRcpt(() => ({ code: 451, message: "4.7.1 Try again later" }));
    const id = await h.send({ to: ada });
    await h.t.drain();
    expect((await h.message(id)).status).toBe("deferred");
    // As after SECRET_KEY changed without SECRET_KEY_PREVIOUS: the sealed keys no longer open.
    const knex = h.t.runtime.db.knex;
    const row = (await knex("domains").first("id", "dkim_keys")) as { id: string; dkim_keys: string };
    const keys = (typeof row.dkim_keys === "string" ? JSON.parse(row.dkim_keys) : row.dkim_keys) as Array<{ private_key: string }>;
    await knex("domains").where({ id: row.id }).update({ dkim_keys: JSON.stringify(keys.map((key) => ({ ...key, private_key: `${key.private_key.slice(0, -8)}AAAAAAAA` }))) });

    h.t.clock.advance(6 * 24 * 60 * 60 * 1000); // past the 5-day lifetime, and the identity cache
    await h.t.drain();
    expect((await h.message(id)).status).toBe("failed");
    expect((await h.events(id)).at(-1)).toMatchObject({ type: "message.failed", data: { enhanced_status: "4.4.7" } });
    expect(h.sink.accepted).toEqual([]);
  });

  it("renews the lease of a message whose SMTP server is slow, so no other worker takes it over meanwhile", async () => {
    // An MX that accepts the connection and never greets: the hand-off hangs until the timeout.
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      h = await startLiveHarness(database, { env: () => ({ SMTP_MX_PORT: String((silent.address() as AddressInfo).port), SMTP_CONNECT_TIMEOUT_MS: "30000", SMTP_COMMAND_TIMEOUT_MS: "30000", JOB_LEASE_SECONDS: "6" }) });
      const id = await h.send({ to: ada });
      h.t.runtime.worker.start();
      // The first send starts the compose threads and signs: seconds on a loaded machine.
      await vi.waitFor(() => expect(sockets.size).toBe(1), { timeout: 20_000 });
      const steal = async () => {
        const now = h.t.clock.now();
        return h.t.runtime.repositories.jobs.claim({ now, limit: 10, leaseUntil: now + 60_000, workerId: "thief", environments: ["live"] });
      };
      const leased = await h.t.runtime.db.knex("jobs").first("locked_by");
      expect(leased.locked_by).toBe(h.t.runtime.worker.id);
      // Past the original lease, in steps shorter than a lease; each step waits two renewal
      // periods (a third of the lease, 2 s), so a renewal lands after every move of the clock.
      for (let i = 0; i < 2; i++) {
        await new Promise((resolve) => setTimeout(resolve, 4500));
        h.t.clock.advance(4000);
        expect(await steal(), `after ${(i + 1) * 4} s`).toEqual([]);
      }
      for (const socket of sockets) socket.destroy(); // the connection drops: a deferral
      // Recorded before the stop: no transaction began, so a stop would give the job back instead.
      await vi.waitFor(async () => expect((await h.message(id)).status).toBe("deferred"), { timeout: 10_000 });
      await h.t.runtime.worker.stop();
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it("delivers to another destination while a slow one's mail waits for its connection, which holds none of the DELIVERY_CONCURRENCY transactions", { timeout: 90_000 }, async () => {
    // Two transactions at once, one connection per destination; example.net's MX holds every
    // transaction open at RCPT (for less than the command timeout). example.org's MX is the same
    // sink under another name, which is another destination: the pool caps and queues per MX host.
    h = await startLiveHarness(database, { env: () => ({ DELIVERY_CONCURRENCY: "2", SMTP_MAX_CONNECTIONS_PER_DESTINATION: "1", SMTP_COMMAND_TIMEOUT_MS: "120000" }) });
    h.dns.add("example.org", { type: "MX", priority: 10, exchange: "mx1.example.org" });
    h.dns.add("mx1.example.org", { type: "A", address: "127.0.0.1" });
    let answer = () => {};
    const slowMx = new Promise<void>((resolve) => (answer = resolve));
    const held: string[] = [];
    h.sink.onRcpt((address) => {
      if (!address.endsWith(`@${RECIPIENT_DOMAIN}`)) return undefined;
      held.push(address);
      return slowMx.then(() => undefined);
    });
    try {
      const slow: string[] = [];
      for (let i = 0; i < 4; i++) slow.push(await h.send({ to: `reader${i}@${RECIPIENT_DOMAIN}` }));
      h.t.runtime.worker.start();
      await vi.waitFor(() => expect(held).toHaveLength(1), { timeout: 20_000 });

      // The other three wait for example.net's one connection; this one needs none of theirs.
      const other = await h.send({ to: "grace@example.org" });
      h.t.runtime.worker.notify();
      const [first] = await h.sink.waitFor(1, 20_000);
      expect(first!.rcptTo).toEqual(["grace@example.org"]);
      await vi.waitFor(async () => expect((await h.message(other)).status).toBe("delivered"), { timeout: 10_000 });
      expect(held).toHaveLength(1);
      for (const id of slow) expect((await h.message(id)).status).toBe("queued");

      answer();
      await h.sink.waitFor(5, 20_000);
      await h.t.runtime.worker.stop();
      for (const id of slow) expect((await h.message(id)).status).toBe("delivered");
    } finally {
      answer();
    }
  });

  it("never lets an injection attempt reach the MX as a header or a recipient", async () => {
    h = await startLiveHarness(database);
    const attempts: Array<Record<string, unknown>> = [
      { to: `${ada}\r\nBcc: eve@evil.example` },
      { to: `"Ada\r\nBcc: eve@evil.example" <${ada}>` },
      { to: ada, subject: "Hi\r\nBcc: eve@evil.example" },
      { to: ada, headers: { "X-Ref": "1\r\nBcc: eve@evil.example" } },
      { to: ada, headers: { "X-Ref\r\nBcc": "eve@evil.example" } },
      { to: ada, reply_to: `support@acme.example\nBcc: eve@evil.example` },
      { to: ada, attachments: [{ filename: "a.txt\r\nBcc: eve@evil.example", content: "SGk=" }] },
      { to: ada, from: `Acme\r\nBcc: eve@evil.example <hello@acme.example>` },
    ];
    for (const body of attempts) {
      const res = await h.t.call({ method: "POST", url: "/v1/messages", key: h.t.workspace.liveKey, payload: { from: "Acme <hello@acme.example>", subject: "Hi", html: "<p>x</p>", ...body } });
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
    }
    // What is allowed through is encoded, never interpreted: a display name full of specials.
    await h.send({ to: `"Ada, \\"Bcc: eve@evil.example\\"" <${ada}>`, subject: "Bcc: eve@evil.example" });
    await h.t.drain();
    expect(h.sink.accepted).toHaveLength(1);
    expect(h.sink.accepted.flatMap((m) => m.rcptTo)).toEqual([ada]);
    const names = headersOf(h.sink.accepted[0]!.raw).map(([name]) => name.toLowerCase());
    expect(names).not.toContain("bcc");
    expect(names.filter((n) => n === "to")).toHaveLength(1);
  });
});

describe.each(databases)("live delivery through a relay ($name)", (database) => {
  let h: LiveHarness;
  afterEach(async () => h?.close());

  const relayed = (sink: { port: number }, password: string) => ({ DELIVERY_TRANSPORT: "relay", SMTP_RELAY_URL: `smtp://mailroom:${encodeURIComponent(password)}@127.0.0.1:${sink.port}` });

  it("hands everything to SMTP_RELAY_URL, authenticated, without asking the recipients' DNS", async () => {
    // Plain SMTP on loopback: the relay transport verifies certificates, and this one is self-signed.
    h = await startLiveHarness(database, { sink: { auth: { user: "mailroom", pass: "s3cret pass/1" }, starttls: false }, env: (sink) => relayed(sink, "s3cret pass/1") });
    const queriesBefore = h.dns.queries.length;
    const id = await h.send({ to: ["ada@example.net", "grace@elsewhere.example"] });
    await h.t.drain();
    expect((await h.message(id)).status).toBe("delivered");
    expect(h.sink.accepted.map((m) => [m.user, m.rcptTo])).toEqual(
      expect.arrayContaining([
        ["mailroom", ["ada@example.net"]],
        ["mailroom", ["grace@elsewhere.example"]],
      ]),
    );
    expect(h.dns.queries.slice(queriesBefore)).toEqual([]);
    expect((await verifyDkim(h.sink.accepted[0]!.raw, h.published)).every((r) => r.valid)).toBe(true);
  });

  it("defers (never bounces) when the relay refuses its credentials: a configuration error is not the recipient's", async () => {
    h = await startLiveHarness(database, { sink: { auth: { user: "mailroom", pass: "right" }, starttls: false }, env: (sink) => relayed(sink, "wrong") });
    const id = await h.send({ to: "ada@example.net" });
    await h.t.drain();
    const deferred = (await h.events(id)).find((e) => e.type === "message.deferred");
    expect(deferred?.data).toMatchObject({ smtp_code: 535 });
    expect(h.sink.messages).toHaveLength(0);
    expect((await h.t.call({ method: "GET", url: "/v1/suppressions", key: h.t.workspace.liveKey })).json().data).toEqual([]);
  });

  it("bounces soft, suppressing no one, when the relay refuses with a bare code; an enhanced one still bounces hard", async () => {
    h = await startLiveHarness(database, { sink: { auth: { user: "mailroom", pass: "right" }, starttls: false }, env: (sink) => relayed(sink, "right") });
    h.sink.onRcpt((address) => (address === "ada@example.net" ? { code: 550, message: "relay not permitted" } : { code: 550, message: "5.1.1 No such user" }));
    const id = await h.send({ to: ["ada@example.net", "grace@elsewhere.example"] });
    await h.t.drain();
    const bounces = (await h.events(id)).filter((e) => e.type === "message.bounced").map((e) => [e.recipient, e.data.enhanced_status, e.data.bounce_type]);
    expect(bounces.sort()).toEqual([
      ["ada@example.net", "5.0.0", "soft"],
      ["grace@elsewhere.example", "5.1.1", "hard"],
    ]);
    const suppressed = (await h.t.call({ method: "GET", url: "/v1/suppressions", key: h.t.workspace.liveKey })).json().data;
    expect(suppressed.map((s: { email: string }) => s.email)).toEqual(["grace@elsewhere.example"]);
  });
});
