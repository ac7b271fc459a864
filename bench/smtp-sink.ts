/**
 * The recipients' MX for bench/delivery.ts: an smtp-server on loopback that reads every message,
 * answers 250 and counts. It runs in its own process (started by the benchmark with an IPC
 * channel), so that receiving mail does not share an event loop with what is measured.
 *
 *   node --import tsx bench/smtp-sink.ts        (prints nothing; talks over process.send)
 *
 * No STARTTLS and no AUTH are offered: Mailroom's MX transport uses STARTTLS only when offered,
 * and the baseline is told the same, so both send in plaintext and neither pays for TLS.
 *
 * IPC: the child sends { type: "listening", port } once; each { type: "stats" } is answered
 * with a Stats message, { type: "sample" } with the raw source of the first message received
 * since the last { type: "reset" } (which zeroes the counters).
 */
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

export interface SinkStats {
  type: "stats";
  /** Messages whose DATA was read to the end and answered 250. */
  messages: number;
  bytes: number;
  /** Messages carrying a DKIM-Signature with a=rsa-sha256 and one with a=ed25519-sha256. */
  signedBoth: number;
  /** Messages with at least one DKIM-Signature. */
  signedAny: number;
  /** Date.now() when the first and the last message of the counted ones ended. */
  firstAt: number | null;
  lastAt: number | null;
  connections: number;
  maxOpenConnections: number;
}

const stats: SinkStats = { type: "stats", messages: 0, bytes: 0, signedBoth: 0, signedAny: 0, firstAt: null, lastAt: null, connections: 0, maxOpenConnections: 0 };
let open = 0;
let sample: string | null = null;

const HEADER_END = Buffer.from("\r\n\r\n");

/** Which DKIM algorithms the header block signs with (unfolded, case-insensitive field names). */
function dkimAlgorithms(head: string): Set<string> {
  const found = new Set<string>();
  const unfolded = head.replace(/\r\n[ \t]+/g, " ");
  for (const line of unfolded.split("\r\n")) {
    if (!/^dkim-signature:/i.test(line)) continue;
    const a = /(?:^|;)\s*a=([a-z0-9-]+)/i.exec(line.slice(line.indexOf(":") + 1));
    if (a) found.add(a[1]!.toLowerCase());
  }
  return found;
}

const server = new SMTPServer({
  logger: false,
  disableReverseLookup: true,
  disabledCommands: ["STARTTLS", "AUTH"],
  // smtp-server waits 100 ms before its greeting (to catch early talkers), as many MTAs do.
  // Mailroom's pool pays it once per connection; nodemailer's, as configured by default, every
  // 100 messages (its maxMessages), which is why the benchmark also runs it with connections kept.
  banner: "bench sink",
  onConnect(_session, callback) {
    stats.connections++;
    open++;
    stats.maxOpenConnections = Math.max(stats.maxOpenConnections, open);
    callback();
  },
  onClose() {
    open--;
  },
  onData(stream, _session, callback) {
    // Keep only the header block (and the whole of a sample message); the body is counted.
    let head: Buffer | null = Buffer.alloc(0);
    let headDone = false;
    let bytes = 0;
    const whole: Buffer[] | null = sample === null ? [] : null;
    stream.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      whole?.push(chunk);
      if (!headDone) {
        head = Buffer.concat([head!, chunk]);
        const end = head.indexOf(HEADER_END);
        if (end !== -1) {
          head = head.subarray(0, end + 2);
          headDone = true;
        } else if (head.length > 64 * 1024) headDone = true;
      }
    });
    stream.on("end", () => {
      const algorithms = dkimAlgorithms(head!.toString("latin1"));
      stats.messages++;
      stats.bytes += bytes;
      if (algorithms.size > 0) stats.signedAny++;
      if (algorithms.has("rsa-sha256") && algorithms.has("ed25519-sha256")) stats.signedBoth++;
      const now = Date.now();
      stats.firstAt ??= now;
      stats.lastAt = now;
      if (whole && sample === null) sample = Buffer.concat(whole).toString("latin1");
      callback(null, "2.0.0 Ok: queued");
    });
  },
});

server.on("error", (error) => {
  // A client that vanishes mid-session is the client's business; the sink keeps going.
  if ((error as NodeJS.ErrnoException).code !== "ECONNRESET") console.error(`sink: ${error.message}`);
});

process.on("message", (message: { type: string }) => {
  if (message.type === "stats") process.send!({ ...stats });
  else if (message.type === "sample") process.send!({ type: "sample", raw: sample });
  else if (message.type === "reset") {
    Object.assign(stats, { messages: 0, bytes: 0, signedBoth: 0, signedAny: 0, firstAt: null, lastAt: null, connections: 0, maxOpenConnections: open });
    sample = null;
    process.send!({ type: "reset" });
  }
});
process.on("disconnect", () => process.exit(0));

server.listen(0, "127.0.0.1", () => {
  process.send!({ type: "listening", port: (server.server.address() as AddressInfo).port });
});
