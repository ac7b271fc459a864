import { createServer, type Server, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { SMTPServer } from "smtp-server";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { loadConfig, type DeliveryConfig } from "../../src/config.js";
import { DnsTemporaryError, MxResolver } from "../../src/delivery/dns-resolver.js";
import { MxTransport } from "../../src/delivery/transports/mx.js";
import { parseRelayUrl, RelayTransport } from "../../src/delivery/transports/relay.js";
import { SmtpPool } from "../../src/delivery/transports/smtp-pool.js";
import type { MailTransport } from "../../src/delivery/transports/transport.js";
import { startDnsServer, type DnsServer } from "../helpers/dns-server.js";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp-sink.js";

// Live delivery against real servers on loopback: a DNS server publishing the recipients'
// domains, and SMTP servers (smtp-server) as their MX hosts or as the relay.

const mime = (n = 1) =>
  Buffer.from(
    [
      "From: Acme <hello@acme.example>",
      "To: bob@example.net",
      `Subject: Receipt ${n}`,
      `Message-ID: <msg_${n}@acme.example>`,
      "MIME-Version: 1.0",
      "Content-Type: text/plain; charset=utf-8",
      "",
      "Thanks for your order.",
      "",
    ].join("\r\n"),
  );
const envelope = (rcptTo = "bob@example.net") => ({ mailFrom: "bounces+msg_1=bob=example.net@acme.example", rcptTo });

let dns: DnsServer;
let sink: SmtpSink;
let transport: MailTransport | null;
const extraServers: Array<{ server: Server; sockets: Set<Socket> }> = [];

function deliveryConfig(env: Record<string, string> = {}): DeliveryConfig {
  return loadConfig({
    DNS_SERVERS: dns.address,
    SMTP_MX_PORT: String(sink.port),
    SENDING_HOSTNAME: "mta.mailroom.test",
    SMTP_CONNECT_TIMEOUT_MS: "1000",
    SMTP_COMMAND_TIMEOUT_MS: "3000",
    ...env,
  }).delivery;
}

function mxTransport(env: Record<string, string> = {}): MxTransport {
  const created = new MxTransport(deliveryConfig(env));
  transport = created;
  return created;
}

/** Listens at `address` on the sink's port until the end of the test, when it is closed with the connections still open to it. */
async function listenUntilTheEnd(server: Server, address: string): Promise<void> {
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(sink.port, address, resolve));
  extraServers.push({ server, sockets });
}

/** A bare TCP server at `address` on the sink's port, playing a broken MX. */
async function fakeMx(address: string, onConnection: (socket: Socket) => void): Promise<void> {
  const server = createServer((socket) => {
    socket.on("error", () => {});
    onConnection(socket);
  });
  await listenUntilTheEnd(server, address);
}

/** A second working MX (smtp-server, plaintext) at `address` on the sink's port: the recipients of the messages it accepted. */
async function anotherMx(address: string): Promise<{ accepted: string[] }> {
  const accepted: string[] = [];
  const mx = new SMTPServer({
    logger: false,
    disableReverseLookup: true,
    disabledCommands: ["AUTH", "STARTTLS"],
    onData(stream, session, callback) {
      stream.resume();
      stream.on("end", () => {
        accepted.push(...session.envelope.rcptTo.map((rcpt) => rcpt.address));
        callback();
      });
    },
  });
  await listenUntilTheEnd(mx.server, address);
  return { accepted };
}

/**
 * A scripted MX at `address` on the sink's port, plaintext, that logs the command verbs of each
 * session (one array per connection, QUIT included) and tells `heard` each command line as it
 * arrives; RCPT for refused@ gets 550, everything else 250.
 */
async function scriptedMx(address: string, heard: (line: string) => void = () => {}): Promise<string[][]> {
  const sessions: string[][] = [];
  await fakeMx(address, (socket) => {
    const commands: string[] = [];
    sessions.push(commands);
    let inData = false;
    let buffered = "";
    socket.write("220 mx ESMTP\r\n");
    socket.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("latin1");
      for (let end = buffered.indexOf("\r\n"); end !== -1; end = buffered.indexOf("\r\n")) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (inData) {
          if (line === ".") {
            inData = false;
            socket.write("250 2.0.0 queued\r\n");
          }
          continue;
        }
        const verb = line.split(/[ :]/)[0]!.toUpperCase();
        commands.push(verb);
        heard(line);
        if (verb === "EHLO") socket.write("250-mx\r\n250 8BITMIME\r\n");
        else if (verb === "RCPT" && line.includes("refused@")) socket.write("550 5.1.1 no such user\r\n");
        else if (verb === "DATA") {
          inData = true;
          socket.write("354 go ahead\r\n");
        } else if (verb === "QUIT") socket.end("221 bye\r\n");
        else socket.write("250 2.0.0 ok\r\n");
      }
    });
  });
  return sessions;
}

/**
 * A broken MX that greets and answers at once until a command matching `after`, then answers it
 * one line every 100 ms (each line well within any inactivity timeout), and closes after `forMs`.
 */
function trickleAfter(socket: Socket, after: RegExp, line: string, forMs: number): void {
  socket.write("220 slow.example.net ESMTP\r\n");
  let buffered = "";
  let trickling: NodeJS.Timeout | null = null;
  socket.on("close", () => trickling && clearInterval(trickling));
  socket.on("data", (chunk) => {
    buffered += chunk.toString("latin1");
    let end: number;
    while ((end = buffered.indexOf("\r\n")) !== -1) {
      const command = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      if (trickling) continue;
      if (after.test(command)) {
        trickling = setInterval(() => socket.write(line), 100);
        setTimeout(() => socket.destroy(), forMs);
      } else {
        socket.write(/^EHLO/i.test(command) ? "250 slow.example.net\r\n" : "250 ok\r\n");
      }
    }
  });
}

beforeEach(async () => {
  dns = await startDnsServer();
  sink = await startSmtpSink();
  transport = null;
  dns.add("example.net", { type: "MX", priority: 10, exchange: "mx1.example.net" });
  dns.add("mx1.example.net", { type: "A", address: "127.0.0.1" });
});

afterEach(async () => {
  await transport?.close();
  for (const { server, sockets } of extraServers.splice(0)) {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
  await Promise.all([sink.close(), dns.close()]);
});

describe("MxTransport", () => {
  it("delivers to the domain's MX over STARTTLS, with the envelope asked for", async () => {
    const result = await mxTransport().send(envelope(), mime());

    expect(result).toEqual({ outcome: "delivered", bounceType: null, smtpCode: 250, enhancedStatus: "2.0.0", response: expect.stringMatching(/^250 /), remoteHost: "mx1.example.net[127.0.0.1]" });
    const [received] = sink.accepted;
    expect(received).toMatchObject({ mailFrom: envelope().mailFrom, rcptTo: ["bob@example.net"], secure: true });
    expect(received!.raw.equals(mime())).toBe(true);
  });

  it("tries the MX hosts by preference, and the next one when a host refuses connections", async () => {
    dns.set("example.net", [
      { type: "MX", priority: 20, exchange: "mx-backup.example.net" },
      { type: "MX", priority: 10, exchange: "mx-dead.example.net" },
    ]);
    // Nothing listens at 127.0.0.2 on the MX port: connection refused.
    dns.add("mx-dead.example.net", { type: "A", address: "127.0.0.2" });
    dns.add("mx-backup.example.net", { type: "A", address: "127.0.0.1" });

    const result = await mxTransport().send(envelope(), mime());

    expect(result).toMatchObject({ outcome: "delivered", remoteHost: "mx-backup.example.net[127.0.0.1]" });
    const lookups = dns.queries.filter((q) => q.type === "A").map((q) => q.name);
    expect(lookups).toEqual(["mx-dead.example.net", "mx-backup.example.net"]);
    expect(sink.accepted).toHaveLength(1);
  });

  it("skips a host that answers 421 at the greeting, and one that never greets", async () => {
    await fakeMx("127.0.0.3", (socket) => socket.end("421 4.3.2 Too busy, try later\r\n"));
    await fakeMx("127.0.0.4", () => {}); // accepts, says nothing
    dns.set("example.net", [
      { type: "MX", priority: 10, exchange: "mx-busy.example.net" },
      { type: "MX", priority: 20, exchange: "mx-silent.example.net" },
      { type: "MX", priority: 30, exchange: "mx1.example.net" },
    ]);
    dns.add("mx-busy.example.net", { type: "A", address: "127.0.0.3" });
    dns.add("mx-silent.example.net", { type: "A", address: "127.0.0.4" });

    const result = await mxTransport().send(envelope(), mime());

    expect(result).toMatchObject({ outcome: "delivered", remoteHost: "mx1.example.net[127.0.0.1]" });
  });

  it("defers with the last host's answer when no host takes the session", async () => {
    await fakeMx("127.0.0.3", (socket) => socket.end("421 4.3.2 Too busy, try later\r\n"));
    dns.set("mx1.example.net", [{ type: "A", address: "127.0.0.3" }]);

    const result = await mxTransport().send(envelope(), mime());

    expect(result).toEqual({ outcome: "deferred", bounceType: null, smtpCode: 421, enhancedStatus: "4.3.2", response: "421 4.3.2 Too busy, try later", remoteHost: "mx1.example.net[127.0.0.3]" });
  });

  it("defers with 4.4.1 when the only host refuses connections, and 4.4.2 when it never greets", async () => {
    dns.set("mx1.example.net", [{ type: "A", address: "127.0.0.2" }]);
    expect(await mxTransport().send(envelope(), mime())).toMatchObject({ outcome: "deferred", smtpCode: null, enhancedStatus: "4.4.1", response: expect.stringContaining("ECONNREFUSED") });

    await fakeMx("127.0.0.4", () => {});
    dns.set("mx1.example.net", [{ type: "A", address: "127.0.0.4" }]);
    expect(await transport!.send(envelope(), mime())).toMatchObject({ outcome: "deferred", smtpCode: null, enhancedStatus: "4.4.2", response: expect.stringMatching(/greeting/i) });
  });

  it("delivers to the domain's own address when it has no MX (implicit MX, RFC 5321 §5.1)", async () => {
    dns.add("example.org", { type: "A", address: "127.0.0.1" });

    const result = await mxTransport().send(envelope("carol@example.org"), mime());

    expect(result).toMatchObject({ outcome: "delivered", remoteHost: "example.org[127.0.0.1]" });
    expect(sink.accepted[0]!.rcptTo).toEqual(["carol@example.org"]);
  });

  it("hard-bounces a domain with a null MX (RFC 7505) without connecting anywhere", async () => {
    dns.set("example.net", [{ type: "MX", priority: 0, exchange: "." }]);

    const result = await mxTransport().send(envelope(), mime());

    expect(result).toEqual({ outcome: "bounced", bounceType: "hard", smtpCode: null, enhancedStatus: "5.1.10", response: expect.stringContaining("null MX"), remoteHost: null });
    expect(sink.stats.connections).toBe(0);
  });

  it("hard-bounces a domain that does not exist (NXDOMAIN)", async () => {
    const result = await mxTransport().send(envelope("bob@no-such-domain.example"), mime());

    expect(result).toEqual({ outcome: "bounced", bounceType: "hard", smtpCode: null, enhancedStatus: "5.1.2", response: expect.stringContaining("does not exist"), remoteHost: null });
  });

  it("soft-bounces a domain that exists but has no MX and no address (5.4.4)", async () => {
    dns.add("parked.example", { type: "TXT", value: "v=spf1 -all" });

    const result = await mxTransport().send(envelope("bob@parked.example"), mime());

    expect(result).toMatchObject({ outcome: "bounced", bounceType: "soft", smtpCode: null, enhancedStatus: "5.4.4" });
  });

  it("defers when DNS fails (SERVFAIL) and delivers once it answers again", async () => {
    dns.fail("example.net", "SERVFAIL");
    const transport = mxTransport();

    expect(await transport.send(envelope(), mime())).toEqual({ outcome: "deferred", bounceType: null, smtpCode: null, enhancedStatus: "4.4.3", response: expect.stringContaining("ESERVFAIL"), remoteHost: null });
    dns.fail("example.net", "SERVFAIL", 0);
    expect(await transport.send(envelope(), mime())).toMatchObject({ outcome: "delivered" });
  });

  it("defers when the DNS server cannot be reached", async () => {
    const result = await mxTransport({ DNS_SERVERS: "127.0.0.1:9" }).send(envelope(), mime());

    expect(result).toMatchObject({ outcome: "deferred", smtpCode: null, enhancedStatus: "4.4.3" });
  });

  it("hard-bounces a 550 5.1.1 at RCPT with the server's reply", async () => {
    sink.onRcpt(() => ({ code: 550, message: "5.1.1 <bob@example.net>: Recipient address rejected: User unknown" }));

    const result = await mxTransport().send(envelope(), mime());

    expect(result).toEqual({
      outcome: "bounced",
      bounceType: "hard",
      smtpCode: 550,
      enhancedStatus: "5.1.1",
      response: "550 5.1.1 <bob@example.net>: Recipient address rejected: User unknown",
      remoteHost: "mx1.example.net[127.0.0.1]",
    });
    expect(sink.messages).toHaveLength(0);
  });

  it("soft-bounces a 552 5.2.2 (mailbox full)", async () => {
    sink.onRcpt(() => ({ code: 552, message: "5.2.2 Mailbox full" }));

    expect(await mxTransport().send(envelope(), mime())).toMatchObject({ outcome: "bounced", bounceType: "soft", smtpCode: 552, enhancedStatus: "5.2.2" });
  });

  it("defers a 451 after DATA, and delivers on the next try over the same connection", async () => {
    sink.onData((_mail, attempt) => (attempt === 1 ? { code: 451, message: "4.3.0 Temporary local problem" } : undefined));
    const transport = mxTransport();

    expect(await transport.send(envelope(), mime())).toEqual({
      outcome: "deferred",
      bounceType: null,
      smtpCode: 451,
      enhancedStatus: "4.3.0",
      response: "451 4.3.0 Temporary local problem",
      remoteHost: "mx1.example.net[127.0.0.1]",
    });
    expect(await transport.send(envelope(), mime())).toMatchObject({ outcome: "delivered" });
    expect(sink.stats.connections).toBe(1);
  });

  it("defers a connection lost after the message was sent (RFC 1047), and does not try another host", async () => {
    dns.add("example.net", { type: "MX", priority: 20, exchange: "mx2.example.net" });
    dns.add("mx2.example.net", { type: "A", address: "127.0.0.1" });
    sink.onData(() => "drop");

    const result = await mxTransport().send(envelope(), mime());

    expect(result).toMatchObject({ outcome: "deferred", bounceType: null, smtpCode: null, enhancedStatus: "4.4.2", response: expect.stringContaining("RFC 1047") });
    // The server has the whole message (it may have delivered it): no second copy elsewhere.
    expect(sink.messages).toHaveLength(1);
    expect(sink.stats.connections).toBe(1);
  });

  // Each line comes well within SMTP_COMMAND_TIMEOUT_MS, so no inactivity timer ever fires; only
  // a limit on the whole ends it. Left alone, the server gives up after 12 s.
  it.each([
    ["MAIL FROM", /^MAIL FROM/i],
    ["EHLO", /^EHLO/i],
  ])("gives up on a server that trickles its reply to %s, a line at a time, instead of waiting for ever", async (_command, after) => {
    await fakeMx("127.0.0.3", (socket) => trickleAfter(socket, after, "250-still thinking\r\n", 12_000));
    dns.set("mx1.example.net", [{ type: "A", address: "127.0.0.3" }]);

    const started = Date.now();
    const result = await mxTransport({ SMTP_COMMAND_TIMEOUT_MS: "500" }).send(envelope(), mime());

    expect(result).toMatchObject({ outcome: "deferred", bounceType: null, smtpCode: null, enhancedStatus: "4.4.2", response: expect.stringMatching(/took longer than/) });
    expect(Date.now() - started).toBeLessThan(8_000);
  });

  it("keeps to the per-destination connection cap under 50 concurrent sends, reusing connections", async () => {
    const transport = mxTransport({ SMTP_MAX_CONNECTIONS_PER_DESTINATION: "3" });

    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => transport.send(envelope(`user${i}@example.net`), mime(i))));

    expect(results.every((r) => r.outcome === "delivered")).toBe(true);
    expect(sink.accepted).toHaveLength(50);
    expect(sink.stats.maxConcurrentConnections).toBeLessThanOrEqual(3);
    expect(sink.stats.connections).toBeLessThanOrEqual(3);
  });

  it("opens new connections to the address DNS gives now, not to the one it gave for the first connection", async () => {
    const moved = await anotherMx("127.0.0.2");
    const transport = mxTransport({ SMTP_MAX_CONNECTIONS_PER_DESTINATION: "2" });
    expect(await transport.send(envelope("first@example.net"), mime(1))).toMatchObject({ outcome: "delivered", remoteHost: "mx1.example.net[127.0.0.1]" });

    // The host moves (this file's DNS answers with TTL 0, so nothing keeps the old answer). The
    // connection to the old address, open and idle, may carry one more message; the other needs
    // a new connection, and that one must go to the new address.
    dns.set("mx1.example.net", [{ type: "A", address: "127.0.0.2" }]);
    const results = await Promise.all([2, 3].map((i) => transport.send(envelope(`later${i}@example.net`), mime(i))));

    expect(results.map((r) => r.outcome)).toEqual(["delivered", "delivered"]);
    expect(results.map((r) => r.remoteHost).sort()).toEqual(["mx1.example.net[127.0.0.1]", "mx1.example.net[127.0.0.2]"]);
    expect(moved.accepted).toHaveLength(1);
    expect(sink.stats.connections).toBe(1);
  });
});

describe("SmtpPool", () => {
  it("fails the sends queued for a destination that cannot be reached at once, instead of one timeout after another", async () => {
    await fakeMx("127.0.0.4", () => {}); // accepts, never greets: each attempt costs the 1 s timeout
    dns.set("mx1.example.net", [{ type: "A", address: "127.0.0.4" }]);
    const transport = mxTransport({ SMTP_MAX_CONNECTIONS_PER_DESTINATION: "1" });

    const started = Date.now();
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => transport.send(envelope(`user${i}@example.net`), mime(i))));

    expect(results.map((r) => r.outcome)).toEqual(Array(5).fill("deferred"));
    expect(new Set(results.map((r) => r.enhancedStatus))).toEqual(new Set(["4.4.2"]));
    expect(Date.now() - started).toBeLessThan(3500); // one after another: 5 s
  });

  it("falls back to plaintext, once, when the STARTTLS handshake fails (opportunistic TLS)", async () => {
    const pool = new SmtpPool({ hostname: "mta.mailroom.test", maxConnectionsPerDestination: 2, connectTimeoutMs: 1000, commandTimeoutMs: 3000 });
    transport = { send: () => Promise.reject(new Error("unused")), close: () => pool.close() };
    // The handshake fails on the client's side: told to verify, it refuses the sink's
    // self-signed certificate. (A failure on the server's side, such as no shared cipher, would
    // do as well, but the sink re-emits it as an unhandled 'error'.)
    const destination = { key: "mx1", hostname: "mx1.example.net", addresses: ["127.0.0.1"], port: sink.port, tls: "opportunistic" as const, tlsOptions: { rejectUnauthorized: true } };

    const result = await pool.send(destination, envelope(), mime());

    expect(result).toMatchObject({ outcome: "delivered", stage: "data", answered: true, payloadSent: true });
    expect(sink.accepted[0]!.secure).toBe(false);
    expect(sink.stats.connections).toBe(2);
  });

  it("does not go on in plaintext where STARTTLS is required (credentials never cross in clear)", async () => {
    await sink.close();
    sink = await startSmtpSink({ starttls: false, auth: { user: "u", pass: "p" } });
    const pool = new SmtpPool({ hostname: "mta.mailroom.test", maxConnectionsPerDestination: 2, connectTimeoutMs: 1000, commandTimeoutMs: 3000 });
    transport = { send: () => Promise.reject(new Error("unused")), close: () => pool.close() };
    const destination = { key: "relay", hostname: "127.0.0.1", addresses: ["127.0.0.1"], port: sink.port, tls: "require-starttls" as const, auth: { user: "u", pass: "p" } };

    const result = await pool.send(destination, envelope(), mime());

    expect(result).toMatchObject({ outcome: "deferred", enhancedStatus: "4.7.4", stage: "connect", response: expect.stringContaining("STARTTLS") });
    expect(sink.messages).toHaveLength(0);
  });

  it("sends the next MAIL right after a completed transaction, and RSET only after one refused before its message", async () => {
    const sessions = await scriptedMx("127.0.0.5");
    const pool = new SmtpPool({ hostname: "mta.mailroom.test", maxConnectionsPerDestination: 1, connectTimeoutMs: 1000, commandTimeoutMs: 3000 });
    transport = { send: () => Promise.reject(new Error("unused")), close: () => pool.close() };
    const destination = { key: "mx5", hostname: "mx5.example.net", addresses: ["127.0.0.5"], port: sink.port, tls: "opportunistic" as const };

    expect(await pool.send(destination, envelope("a@example.net"), mime(1))).toMatchObject({ outcome: "delivered" });
    expect(await pool.send(destination, envelope("b@example.net"), mime(2))).toMatchObject({ outcome: "delivered" });
    expect(await pool.send(destination, envelope("refused@example.net"), mime(3))).toMatchObject({ outcome: "bounced", smtpCode: 550 });
    expect(await pool.send(destination, envelope("c@example.net"), mime(4))).toMatchObject({ outcome: "delivered" });

    expect(sessions).toEqual([["EHLO", "MAIL", "RCPT", "DATA", "MAIL", "RCPT", "DATA", "MAIL", "RCPT", "RSET", "MAIL", "RCPT", "DATA"]]);
  });

  /** A pool over the sink, whose destinations are told apart by key alone (the pool caps and queues per key). */
  const sinkPool = (settings: { maxConnectionsPerDestination: number; maxTransactions?: number }) => {
    // The sink holds some transactions open while the test looks on: a command timeout well beyond that.
    const pool = new SmtpPool({ hostname: "mta.mailroom.test", connectTimeoutMs: 5000, commandTimeoutMs: 30_000, ...settings });
    transport = { send: () => Promise.reject(new Error("unused")), close: () => pool.close() };
    const at = (key: string) => ({ key, hostname: `${key}.example.net`, addresses: ["127.0.0.1"], port: sink.port, tls: "opportunistic" as const });
    return { pool, at };
  };

  /** The sink holds the RCPT of every address `holds` picks until release(); `arrived` lists those it holds, as they arrive. */
  const holdRcpts = (holds: (address: string) => boolean) => {
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const arrived: string[] = [];
    sink.onRcpt((address) => {
      if (!holds(address)) return undefined;
      arrived.push(address);
      return released.then(() => undefined);
    });
    return { arrived, release: () => release() };
  };

  it("runs at most maxTransactions transactions over every destination, and a send waiting for its destination's connection holds none of them", async () => {
    const { pool, at } = sinkPool({ maxConnectionsPerDestination: 1, maxTransactions: 2 });
    const slow = holdRcpts((address) => address.startsWith("slow"));

    // Three for a destination whose one connection the first holds: two wait for it, in its line.
    const slowSends = [1, 2, 3].map((i) => pool.send(at("slow"), envelope(`slow${i}@example.net`), mime(i)));
    await vi.waitFor(() => expect(slow.arrived).toEqual(["slow1@example.net"]), { timeout: 10_000 });
    expect(pool.stats()).toMatchObject({ sending: 1, waiting: 2 });

    // So another destination's mail goes at once, in the second slot.
    expect(await pool.send(at("fast"), envelope("fast1@example.net"), mime(4))).toMatchObject({ outcome: "delivered" });

    // Two transactions running (both held): the next send waits, whatever its destination.
    const second = pool.send(at("slow-too"), envelope("slow-too@example.net"), mime(5));
    await vi.waitFor(() => expect(slow.arrived).toContain("slow-too@example.net"), { timeout: 10_000 });
    const queued = pool.send(at("fast"), envelope("fast2@example.net"), mime(6));
    expect(pool.stats()).toMatchObject({ sending: 2, waiting: 3 });
    expect(sink.accepted.map((mail) => mail.rcptTo)).toEqual([["fast1@example.net"]]);

    slow.release();
    const results = await Promise.all([...slowSends, second, queued]);
    expect(results.map((r) => r.outcome)).toEqual(Array(5).fill("delivered"));
    expect(pool.stats()).toMatchObject({ sending: 0, waiting: 0 });
  });

  it("asks begin() only once the connection is in hand; refused, it sends nothing, puts the connection back unused and passes the refusal on", async () => {
    const { pool, at } = sinkPool({ maxConnectionsPerDestination: 1 });
    const held = holdRcpts((address) => address === "first@example.net");
    const first = pool.send(at("mx1"), envelope("first@example.net"), mime(1), { begin: () => {} });
    await vi.waitFor(() => expect(held.arrived).toHaveLength(1), { timeout: 10_000 });

    // Waiting for the destination's one connection, the second send is not asked yet.
    const refusal = new Error("withdrawn");
    const begin = vi.fn(() => {
      throw refusal;
    });
    const refused = pool.send(at("mx1"), envelope("second@example.net"), mime(2), { begin });
    expect(begin).not.toHaveBeenCalled();

    held.release();
    expect(await first).toMatchObject({ outcome: "delivered" });
    await expect(refused).rejects.toBe(refusal);
    expect(begin).toHaveBeenCalledTimes(1);
    expect(sink.messages.map((mail) => mail.rcptTo)).toEqual([["first@example.net"]]);
    expect(pool.stats()).toMatchObject({ open: 1, idle: 1, sending: 0, waiting: 0 });

    // The connection is as good as before: the next send goes over it.
    expect(await pool.send(at("mx1"), envelope("third@example.net"), mime(3))).toMatchObject({ outcome: "delivered" });
    expect(sink.stats.connections).toBe(1);
  });

  it("closes idle connections after the idle timeout", async () => {
    const pool = new SmtpPool({ hostname: "mta.mailroom.test", maxConnectionsPerDestination: 2, connectTimeoutMs: 1000, commandTimeoutMs: 3000, idleTimeoutMs: 100 });
    transport = { send: () => Promise.reject(new Error("unused")), close: () => pool.close() };
    const destination = { key: "mx1", hostname: "mx1.example.net", addresses: ["127.0.0.1"], port: sink.port, tls: "opportunistic" as const };

    await pool.send(destination, envelope(), mime());
    expect(pool.stats()).toMatchObject({ open: 1 });
    await expect.poll(() => pool.stats().open, { timeout: 2000 }).toBe(0);
    await expect.poll(() => sink.stats.openConnections, { timeout: 2000 }).toBe(0);
  });

  describe("connection reuse limits", () => {
    const at = () => ({ key: "mx5", hostname: "mx5.example.net", addresses: ["127.0.0.5"], port: sink.port, tls: "opportunistic" as const });
    /** A pool as the configuration makes it (a reuse time limit of 300 s unless `env` sets one), reading connections' ages off `clock`. */
    const configuredPool = (env: Record<string, string> = {}, clock = { now: 0 }) => {
      const pool = SmtpPool.fromConfig(deliveryConfig(env), { now: () => clock.now });
      transport = { send: () => Promise.reject(new Error("unused")), close: () => pool.close() };
      return pool;
    };
    const transaction = ["MAIL", "RCPT", "DATA"];

    it("reuses a connection open no longer than the reuse time limit (300 s by default)", async () => {
      const sessions = await scriptedMx("127.0.0.5");
      const clock = { now: 0 };
      const pool = configuredPool({}, clock);

      for (const [i, ms] of [0, 150_000, 300_000].entries()) {
        clock.now = ms;
        expect(await pool.send(at(), envelope(`user${i}@example.net`), mime(i))).toMatchObject({ outcome: "delivered" });
      }

      expect(sessions).toEqual([["EHLO", ...transaction, ...transaction, ...transaction]]);
      expect(pool.stats()).toMatchObject({ open: 1, idle: 1 });
    });

    it("closes a connection open longer than the reuse time limit with QUIT instead of reusing it, and sends the next message over a new one", async () => {
      const sessions = await scriptedMx("127.0.0.5");
      const clock = { now: 0 };
      const pool = configuredPool({}, clock);

      expect(await pool.send(at(), envelope("first@example.net"), mime(1))).toMatchObject({ outcome: "delivered" });
      clock.now = 300_001;
      expect(await pool.send(at(), envelope("second@example.net"), mime(2))).toMatchObject({ outcome: "delivered" });

      await vi.waitFor(() => expect(sessions).toEqual([["EHLO", ...transaction, "QUIT"], ["EHLO", ...transaction]]), { timeout: 5000 });
      expect(pool.stats()).toMatchObject({ open: 1, idle: 1 });
    });

    it("under steady traffic, closes a connection with QUIT after the transaction during which it passed the limit, and the waiting send opens a new one", async () => {
      const clock = { now: 0 };
      // The clock passes the limit while the server reads late@'s RCPT: the connection never sits idle.
      const sessions = await scriptedMx("127.0.0.5", (line) => {
        if (line.includes("<late@")) clock.now = 300_001;
      });
      const pool = configuredPool({ SMTP_MAX_CONNECTIONS_PER_DESTINATION: "1" }, clock);

      expect(await pool.send(at(), envelope("first@example.net"), mime(1))).toMatchObject({ outcome: "delivered" });
      const results = await Promise.all([pool.send(at(), envelope("late@example.net"), mime(2)), pool.send(at(), envelope("next@example.net"), mime(3))]);

      expect(results.map((r) => r.outcome)).toEqual(["delivered", "delivered"]);
      await vi.waitFor(() => expect(sessions).toEqual([["EHLO", ...transaction, ...transaction, "QUIT"], ["EHLO", ...transaction]]), { timeout: 5000 });
    });

    it("closes a connection with QUIT once it has carried SMTP_MAX_MESSAGES_PER_CONNECTION messages, and goes on over a new one", async () => {
      const sessions = await scriptedMx("127.0.0.5");
      const pool = configuredPool({ SMTP_MAX_MESSAGES_PER_CONNECTION: "2" });

      for (const i of [1, 2, 3]) expect(await pool.send(at(), envelope(`user${i}@example.net`), mime(i))).toMatchObject({ outcome: "delivered" });

      await vi.waitFor(() => expect(sessions).toEqual([["EHLO", ...transaction, ...transaction, "QUIT"], ["EHLO", ...transaction]]), { timeout: 5000 });
      expect(pool.stats()).toMatchObject({ open: 1, idle: 1 });
    });
  });

  it("opens each new connection to the addresses of the send that needs it, while another send to the destination brings others", async () => {
    const moved = await anotherMx("127.0.0.2");
    const pool = new SmtpPool({ hostname: "mta.mailroom.test", maxConnectionsPerDestination: 2, connectTimeoutMs: 1000, commandTimeoutMs: 3000 });
    transport = { send: () => Promise.reject(new Error("unused")), close: () => pool.close() };
    const resolvedTo = (address: string) => ({ key: "mx1", hostname: "mx1.example.net", addresses: [address], port: sink.port, tls: "opportunistic" as const });

    const results = await Promise.all([pool.send(resolvedTo("127.0.0.1"), envelope("old@example.net"), mime(1)), pool.send(resolvedTo("127.0.0.2"), envelope("new@example.net"), mime(2))]);

    expect(results.map((r) => r.remoteHost)).toEqual(["mx1.example.net[127.0.0.1]", "mx1.example.net[127.0.0.2]"]);
    expect(sink.accepted.map((mail) => mail.rcptTo)).toEqual([["old@example.net"]]);
    expect(moved.accepted).toEqual(["new@example.net"]);
  });
});

describe("RelayTransport", () => {
  const auth = { user: "mailroom@acme.example", pass: "p@ss:w/rd" };
  const relayUrl = (scheme: "smtp" | "smtps", credentials = auth) => `${scheme}://${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.pass)}@127.0.0.1:${sink.port}`;
  const relay = (url: string, options: ConstructorParameters<typeof RelayTransport>[1] = {}) => {
    const created = new RelayTransport(deliveryConfig({ DELIVERY_TRANSPORT: "relay", SMTP_RELAY_URL: url }), options);
    transport = created;
    return created;
  };

  it("delivers through the relay, authenticated with the URL's (decoded) credentials", async () => {
    await sink.close();
    sink = await startSmtpSink({ starttls: false, auth });

    const result = await relay(relayUrl("smtp")).send(envelope("anyone@anywhere.example"), mime());

    expect(result).toMatchObject({ outcome: "delivered", smtpCode: 250, remoteHost: "127.0.0.1" });
    expect(sink.accepted[0]).toMatchObject({ user: auth.user, rcptTo: ["anyone@anywhere.example"] });
    expect(dns.queries).toEqual([]); // the relay routes, not us
  });

  it("defers (never bounces) when the relay refuses the credentials: it is our configuration", async () => {
    await sink.close();
    sink = await startSmtpSink({ starttls: false, auth });

    const result = await relay(relayUrl("smtp", { ...auth, pass: "wrong" })).send(envelope(), mime());

    expect(result).toEqual({
      outcome: "deferred",
      bounceType: null,
      smtpCode: 535,
      enhancedStatus: "4.7.8",
      response: expect.stringMatching(/^535 5\.7\.8 /),
      remoteHost: "127.0.0.1",
    });
    expect(sink.messages).toHaveLength(0);
  });

  it("asks begin() before the transaction, and sends nothing when it refuses", async () => {
    await sink.close();
    sink = await startSmtpSink({ starttls: false, auth });
    const transport = relay(relayUrl("smtp"));
    const refusal = new Error("withdrawn");

    await expect(
      transport.send(envelope(), mime(1), {
        begin: () => {
          throw refusal;
        },
      }),
    ).rejects.toBe(refusal);
    expect(sink.messages).toHaveLength(0);

    const begin = vi.fn();
    expect(await transport.send(envelope(), mime(2), { begin })).toMatchObject({ outcome: "delivered" });
    expect(begin).toHaveBeenCalledTimes(1);
    expect(sink.stats.connections).toBe(1); // the refused send's connection carried the next one
  });

  it("delivers over implicit TLS (smtps://) to a relay whose certificate it trusts", async () => {
    await sink.close();
    sink = await startSmtpSink({ secure: true, auth });
    const ca = await certificateOf(sink.port);

    const result = await relay(relayUrl("smtps"), { tlsOptions: { ca } }).send(envelope(), mime());

    expect(result).toMatchObject({ outcome: "delivered" });
    expect(sink.accepted[0]).toMatchObject({ secure: true, user: auth.user });
  });

  it("verifies the relay's certificate: an untrusted one defers with 4.7.5, and nothing goes in plaintext", async () => {
    await sink.close();
    sink = await startSmtpSink({ auth }); // STARTTLS with a self-signed certificate

    const result = await relay(relayUrl("smtp")).send(envelope(), mime());

    expect(result).toMatchObject({ outcome: "deferred", smtpCode: null, enhancedStatus: "4.7.5", response: expect.stringMatching(/TLS/) });
    expect(sink.messages).toHaveLength(0);
    expect(sink.stats.connections).toBe(1);
  });
});

describe("MxResolver", () => {
  const resolver = (random?: () => number) => new MxResolver({ servers: [dns.address], ...(random ? { random } : {}) });

  it("orders MX hosts by preference, at random among equal ones", async () => {
    dns.set("example.net", [
      { type: "MX", priority: 20, exchange: "c.example.net." },
      { type: "MX", priority: 10, exchange: "A.example.net" },
      { type: "MX", priority: 10, exchange: "b.example.net" },
    ]);
    const orders = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const destination = await resolver().resolveDestination("Example.NET");
      if (destination.kind !== "hosts") throw new Error(destination.reason);
      expect(destination.hosts[2]).toEqual({ host: "c.example.net", priority: 20 });
      orders.add(destination.hosts.map((h) => h.host).join(","));
    }
    expect(orders).toEqual(new Set(["a.example.net,b.example.net,c.example.net", "b.example.net,a.example.net,c.example.net"]));
  });

  it("resolves TXT records with their strings joined, and null for NXDOMAIN and NODATA", async () => {
    const dkim = `v=DKIM1; k=rsa; p=${"A".repeat(392)}`;
    dns.add("mr1._domainkey.acme.example", { type: "TXT", value: dkim });
    expect(await resolver().resolveTxt("mr1._domainkey.acme.example")).toEqual([dkim]);
    expect(await resolver().resolveTxt("nothing.acme.example")).toBeNull();
    expect(await resolver().resolveTxt("mx1.example.net")).toBeNull();
    expect(await resolver().resolveMx("example.net")).toEqual([{ exchange: "mx1.example.net", priority: 10 }]);
    expect(await resolver().resolveMx("mx1.example.net")).toBeNull();
  });

  it("throws a DnsTemporaryError when the lookup itself fails", async () => {
    dns.fail("acme.example", "SERVFAIL");
    await expect(resolver().resolveTxt("acme.example")).rejects.toMatchObject({ name: "DnsTemporaryError", code: "ESERVFAIL", enhancedStatus: "4.4.3" });
    dns.fail("acme.example", "REFUSED");
    await expect(resolver().resolveMx("acme.example")).rejects.toBeInstanceOf(DnsTemporaryError);
  });
});

describe("MxResolver's answer cache (DNS_CACHE_SECONDS)", () => {
  const queriesFor = (name: string) => dns.queries.filter((q) => q.name === name).map((q) => q.type);

  it("asks for a domain's MX once while it is fresh, and again once it is older than the cap", async () => {
    let now = 1_000_000;
    const resolver = new MxResolver({ servers: [dns.address], cacheMaxAgeMs: 60_000, now: () => now });
    for (let i = 0; i < 3; i++) expect(await resolver.resolveDestination("example.net")).toEqual({ kind: "hosts", hosts: [{ host: "mx1.example.net", priority: 10 }] });
    expect(queriesFor("example.net")).toEqual(["MX"]);
    now += 60_001;
    await resolver.resolveDestination("example.net");
    expect(queriesFor("example.net")).toEqual(["MX", "MX"]);
  });

  it("shares one lookup among concurrent callers", async () => {
    const resolver = new MxResolver({ servers: [dns.address], cacheMaxAgeMs: 60_000 });
    await Promise.all(Array.from({ length: 20 }, () => resolver.resolveDestination("example.net")));
    expect(queriesFor("example.net")).toEqual(["MX"]);
  });

  it("keeps an address answer no longer than its TTL", async () => {
    // This file's server answers with TTL 0: never kept.
    const resolver = new MxResolver({ servers: [dns.address], cacheMaxAgeMs: 60_000 });
    await resolver.resolveAddresses("mx1.example.net");
    await resolver.resolveAddresses("mx1.example.net");
    expect(queriesFor("mx1.example.net").filter((type) => type === "A")).toEqual(["A", "A"]);

    const longLived = await startDnsServer({ ttl: 300 });
    try {
      longLived.add("mx1.example.net", { type: "A", address: "127.0.0.1" });
      let now = 1_000_000;
      const caching = new MxResolver({ servers: [longLived.address], cacheMaxAgeMs: 3_600_000, now: () => now });
      for (let i = 0; i < 3; i++) expect(await caching.resolveAddresses("mx1.example.net")).toEqual({ kind: "addresses", addresses: ["127.0.0.1"] });
      expect(longLived.queries.map((q) => q.type).sort()).toEqual(["A", "AAAA"]);
      now += 300_001; // past the TTL, well within the cap
      await caching.resolveAddresses("mx1.example.net");
      expect(longLived.queries.filter((q) => q.type === "A")).toHaveLength(2);
    } finally {
      await longLived.close();
    }
  });

  it("does not keep a failed lookup: the next caller asks again", async () => {
    const resolver = new MxResolver({ servers: [dns.address], cacheMaxAgeMs: 60_000 });
    dns.fail("example.net", "SERVFAIL", 1);
    expect(await resolver.resolveDestination("example.net")).toMatchObject({ kind: "temporary", enhancedStatus: "4.4.3" });
    expect(await resolver.resolveDestination("example.net")).toMatchObject({ kind: "hosts" });
  });

  it("asks every time with a cap of 0", async () => {
    const resolver = new MxResolver({ servers: [dns.address], cacheMaxAgeMs: 0 });
    await resolver.resolveDestination("example.net");
    await resolver.resolveDestination("example.net");
    expect(queriesFor("example.net")).toEqual(["MX", "MX"]);
  });
});

describe("parseRelayUrl", () => {
  it("reads scheme, host, port (587 / 465 by default) and URL-encoded credentials", () => {
    expect(parseRelayUrl("smtp://u%40x.example:p%3Aw%2Fd@relay.example:2525")).toEqual({ host: "relay.example", port: 2525, secure: false, auth: { user: "u@x.example", pass: "p:w/d" } });
    expect(parseRelayUrl("smtp://relay.example")).toEqual({ host: "relay.example", port: 587, secure: false, auth: null });
    expect(parseRelayUrl("smtps://[::1]")).toEqual({ host: "::1", port: 465, secure: true, auth: null });
  });
});

/** The certificate an implicit-TLS server presents, in PEM: the test's trust anchor for it. */
function certificateOf(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: "127.0.0.1", port, rejectUnauthorized: false }, () => {
      const der = socket.getPeerCertificate().raw;
      socket.destroy();
      resolve(`-----BEGIN CERTIFICATE-----\n${der.toString("base64").replace(/.{1,64}/g, "$&\n")}-----END CERTIFICATE-----\n`);
    });
    socket.on("error", reject);
  });
}
