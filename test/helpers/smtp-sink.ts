import { generateKeyPairSync, randomBytes, sign } from "node:crypto";
import type { AddressInfo } from "node:net";
import { SMTPServer, type SMTPServerError, type SMTPServerSession } from "smtp-server";

/**
 * A real SMTP server on loopback standing for a recipient's MX or for a relay, for the
 * live-delivery tests. Each test scripts its replies (onRcpt, onData) and reads what arrived.
 */
export interface SmtpReply {
  code: number;
  message: string;
}

export interface ReceivedMail {
  /** "" for the null sender (bounces). */
  mailFrom: string;
  /** The recipients the sink accepted at RCPT. */
  rcptTo: string[];
  raw: Buffer;
  /** TLS was in use (STARTTLS or implicit). */
  secure: boolean;
  /** The AUTH user, or null. */
  user: string | null;
  receivedAt: number;
}

export interface SmtpSinkOptions {
  /** Advertise STARTTLS with a self-signed certificate generated at start (default true). */
  starttls?: boolean;
  /** When set, AUTH PLAIN/LOGIN is required (relay mode); without it no AUTH is offered. */
  auth?: { user: string; pass: string };
  /** Implicit TLS (smtps) instead of plain + STARTTLS. */
  secure?: boolean;
}

export interface SmtpSink {
  readonly host: "127.0.0.1";
  readonly port: number;
  /** Every DATA fully received, including ones then answered with an error or dropped. */
  readonly messages: ReceivedMail[];
  /** Those answered 250. */
  readonly accepted: ReceivedMail[];
  /**
   * Decide the reply to RCPT TO (undefined = 250). `attempt` counts RCPTs seen for that address so far, from 1;
   * `mailFrom` is the transaction's return path. A promise holds the reply until it settles: the sending side
   * waits, as on a slow MX, while the test acts.
   */
  onRcpt(fn: ((address: string, attempt: number, mailFrom: string) => SmtpReply | undefined | Promise<SmtpReply | undefined>) | null): void;
  /** Decide the reply after DATA (undefined = 250; "drop" = close the connection without any reply, the RFC 1047 case). `attempt` counts DATAs so far, from 1. */
  onData(fn: ((mail: ReceivedMail, attempt: number) => SmtpReply | "drop" | undefined) | null): void;
  /** Resolves when `accepted.length >= n` (or rejects after timeoutMs with a message that says how many arrived). */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  readonly stats: { connections: number; maxConcurrentConnections: number; openConnections: number };
  close(): Promise<void>;
}

export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const { starttls = true, auth, secure = false } = options;
  const messages: ReceivedMail[] = [];
  const accepted: ReceivedMail[] = [];
  const stats = { connections: 0, maxConcurrentConnections: 0, openConnections: 0 };
  const rcptAttempts = new Map<string, number>();
  let dataAttempts = 0;
  let rcptHandler: Parameters<SmtpSink["onRcpt"]>[0] = null;
  let dataHandler: Parameters<SmtpSink["onData"]>[0] = null;
  const waiters = new Set<() => void>();

  const replyError = (reply: SmtpReply): SMTPServerError => Object.assign(new Error(reply.message), { responseCode: reply.code });

  const server: SMTPServer = new SMTPServer({
    ...selfSignedCertificate(),
    secure,
    logger: false,
    // The client's address would be reverse-resolved through the machine's DNS otherwise.
    disableReverseLookup: true,
    // Enhanced status codes in the reply text are the test's to write ("5.1.1 No such user").
    hideENHANCEDSTATUSCODES: true,
    disabledCommands: [...(auth ? [] : ["AUTH"]), ...(starttls && !secure ? [] : ["STARTTLS"])],
    authMethods: ["PLAIN", "LOGIN"],
    // Relay tests may authenticate over a plain connection (starttls: false); refusing that is
    // the client's decision to test, not the server's.
    allowInsecureAuth: true,
    // Counted per SMTP session rather than per accepted TCP socket: after STARTTLS the TLS socket
    // takes over the TCP one, which then never reports its close.
    onConnect(_session, callback) {
      stats.connections++;
      stats.openConnections++;
      stats.maxConcurrentConnections = Math.max(stats.maxConcurrentConnections, stats.openConnections);
      callback();
    },
    onClose() {
      stats.openConnections--;
    },
    onAuth(credentials, _session, callback) {
      if (auth && credentials.username === auth.user && credentials.password === auth.pass) return callback(null, { user: credentials.username });
      callback(Object.assign(new Error("5.7.8 Authentication credentials invalid"), { responseCode: 535 }));
    },
    onRcptTo(address, session, callback) {
      const key = address.address.toLowerCase();
      const attempt = (rcptAttempts.get(key) ?? 0) + 1;
      rcptAttempts.set(key, attempt);
      const { mailFrom } = session.envelope;
      const reply = rcptHandler?.(address.address, attempt, mailFrom ? mailFrom.address : "");
      const answer = (given: SmtpReply | undefined) => callback(given && given.code >= 400 ? replyError(given) : null);
      if (reply instanceof Promise) void reply.then(answer);
      else answer(reply);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const mail = received(session, Buffer.concat(chunks));
        messages.push(mail);
        const reply = dataHandler?.(mail, ++dataAttempts);
        if (reply === "drop") {
          // The whole message is in, and the client waits for the reply that never comes.
          for (const connection of server.connections) if (connection.id === session.id) connection._socket.destroy();
          return;
        }
        if (reply && reply.code >= 400) return callback(replyError(reply));
        accepted.push(mail);
        for (const wake of waiters) wake();
        callback(null, reply?.message);
      });
    },
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  // smtp-server re-emits a client connection's failures (a reset when a sending process is
  // killed, a failed TLS handshake) on the server; a real MX shrugs them off, and so does this one.
  server.on("error", () => {});

  return {
    host: "127.0.0.1",
    port,
    messages,
    accepted,
    stats,
    onRcpt(fn) {
      rcptHandler = fn;
    },
    onData(fn) {
      dataHandler = fn;
    },
    waitFor(n, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (accepted.length < n) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(accepted);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`expected ${n} accepted message(s) within ${timeoutMs} ms, but ${accepted.length} were accepted (${messages.length} received in all)`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise((resolve) => {
        // smtp-server would otherwise give open sessions (a client's pool) 30 s to quit.
        for (const connection of server.connections) connection._socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function received(session: SMTPServerSession, raw: Buffer): ReceivedMail {
  const { mailFrom, rcptTo } = session.envelope;
  return {
    mailFrom: mailFrom ? mailFrom.address : "",
    rcptTo: rcptTo.map((rcpt) => rcpt.address),
    raw,
    secure: session.secure,
    user: typeof session.user === "string" ? session.user : null,
    receivedAt: Date.now(),
  };
}

/**
 * A fresh self-signed certificate for "localhost" / 127.0.0.1 (ECDSA P-256), built in DER by
 * hand: nothing in the dependencies writes X.509, and smtp-server's built-in certificate has a
 * published private key. Senders do opportunistic TLS to an MX without checking the certificate
 * (RFC 3207 §4.1), which is what this stands for.
 */
export function selfSignedCertificate(): { key: string; cert: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const ecdsaWithSha256 = der(0x30, oid("1.2.840.10045.4.3.2"));
  const name = der(0x30, der(0x31, der(0x30, oid("2.5.4.3"), der(0x0c, Buffer.from("localhost")))));
  const day = 86_400_000;
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x40; // positive, and no leading zero to strip
  const subjectAltName = der(0x30, der(0x82, Buffer.from("localhost")), der(0x87, Buffer.from([127, 0, 0, 1])));
  const tbs = der(
    0x30,
    der(0xa0, der(0x02, Buffer.from([2]))), // v3
    der(0x02, serial),
    ecdsaWithSha256,
    name,
    der(0x30, utcTime(Date.now() - day), utcTime(Date.now() + 365 * day)),
    name,
    publicKey.export({ type: "spki", format: "der" }),
    der(0xa3, der(0x30, der(0x30, oid("2.5.29.17"), der(0x04, subjectAltName)))),
  );
  const signature = sign("sha256", tbs, privateKey);
  const cert = der(0x30, tbs, ecdsaWithSha256, der(0x03, Buffer.from([0]), signature));
  const pem = cert.toString("base64").replace(/.{1,64}/g, "$&\n");
  return { key: privateKey.export({ type: "pkcs8", format: "pem" }) as string, cert: `-----BEGIN CERTIFICATE-----\n${pem}-----END CERTIFICATE-----\n` };
}

/** A DER TLV (X.690 §8.1): tag, definite length, contents. */
function der(tag: number, ...contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  const length = body.length < 0x80 ? Buffer.from([body.length]) : lengthBytes(body.length);
  return Buffer.concat([Buffer.from([tag]), length, body]);
}

function lengthBytes(n: number): Buffer {
  const bytes: number[] = [];
  for (; n > 0; n = Math.floor(n / 256)) bytes.unshift(n % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split(".").map(Number);
  const bytes = [40 * first + second];
  for (const arc of rest) {
    const base128 = [arc & 0x7f];
    for (let n = arc >> 7; n > 0; n >>= 7) base128.unshift((n & 0x7f) | 0x80);
    bytes.push(...base128);
  }
  return der(0x06, Buffer.from(bytes));
}

function utcTime(ms: number): Buffer {
  // YYMMDDHHMMSSZ; UTCTime is right for years before 2050 (RFC 5280 §4.1.2.5).
  return der(0x17, Buffer.from(new Date(ms).toISOString().replace(/\D/g, "").slice(2, 14) + "Z"));
}
