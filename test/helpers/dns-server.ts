import { createSocket, type RemoteInfo, type Socket as UdpSocket } from "node:dgram";
import { createServer, type Server, type Socket } from "node:net";
import dnsPacket, { type Answer, type DecodedPacket, type OptAnswer, type Packet } from "dns-packet";

/**
 * An authoritative DNS server on loopback for the live-delivery tests: the server under test is
 * pointed at it (DNS_SERVERS) and resolves MX, A/AAAA and DKIM/MTA-STS TXT records from what each
 * test publishes here, so no test depends on the real DNS or on the network.
 */
export type DnsRecord =
  | { type: "MX"; priority: number; exchange: string } // exchange "." = null MX (RFC 7505)
  | { type: "A"; address: string }
  | { type: "AAAA"; address: string }
  | { type: "TXT"; value: string } // split into <=255-byte strings on the wire
  | { type: "CNAME"; target: string };

export interface DnsServer {
  readonly host: "127.0.0.1";
  readonly port: number;
  /** "127.0.0.1:PORT", as the server's DNS_SERVERS setting takes it. */
  readonly address: string;
  /** Names are case-insensitive, the trailing dot optional. */
  add(name: string, record: DnsRecord): void;
  /** Replaces every record of the name, and clears a failure set with fail(). */
  set(name: string, records: DnsRecord[]): void;
  /** Forgets the name (it answers NXDOMAIN), and clears a failure set with fail(). */
  remove(name: string): void;
  /** Answer this rcode for the name (any type) the next `times` queries (default: until cleared by set(), remove() or `times` 0). */
  fail(name: string, rcode: "SERVFAIL" | "NXDOMAIN" | "REFUSED", times?: number): void;
  /** Every question received, in order; the name lower-case without its trailing dot. */
  readonly queries: Array<{ name: string; type: string }>;
  close(): Promise<void>;
}

const RCODES = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;
// RFC 1035 §4.2.1: without EDNS a UDP answer holds 512 bytes. Larger ones are sent with TC set
// and no records, and the resolver asks again over TCP (RFC 7766).
const UDP_PLAIN_LIMIT = 512;
const UDP_EDNS_LIMIT = 4096;

const normalize = (name: string) => name.toLowerCase().replace(/\.$/, "");

export interface DnsServerOptions {
  /**
   * The TTL of every answer. 0 (the default) for tests: Node's resolver (c-ares >= 1.23) caches
   * answers for their TTL, and a test that changes a record must see the change on the next
   * lookup. The delivery benchmark publishes with a real zone's TTL, so that its workers cache
   * as they would in production.
   */
  ttl?: number;
}

export async function startDnsServer(options: DnsServerOptions = {}): Promise<DnsServer> {
  const ttl = options.ttl ?? 0;
  const zone = new Map<string, DnsRecord[]>();
  const failures = new Map<string, { rcode: keyof typeof RCODES; remaining: number }>();
  const queries: DnsServer["queries"] = [];

  const answer = (query: DecodedPacket, maxSize: number): Buffer => {
    const question = query.questions?.[0];
    const edns = query.additionals?.some((record) => record.type === "OPT");
    const response = (rcode: number, answers: Answer[] = [], truncated = false): Packet => ({
      type: "response",
      id: query.id,
      flags: dnsPacket.AUTHORITATIVE_ANSWER | ((query.flags ?? 0) & dnsPacket.RECURSION_DESIRED) | (truncated ? dnsPacket.TRUNCATED_RESPONSE : 0) | rcode,
      questions: query.questions,
      answers,
      // RFC 6891 §7: a query with an OPT record gets one back.
      additionals: edns ? [{ type: "OPT", name: ".", udpPayloadSize: UDP_EDNS_LIMIT, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }] : [],
    });
    if (!question) return dnsPacket.encode(response(1)); // FORMERR
    const name = normalize(question.name);
    queries.push({ name, type: question.type });

    const failure = failures.get(name);
    if (failure) {
      if (--failure.remaining <= 0) failures.delete(name);
      return dnsPacket.encode(response(RCODES[failure.rcode]));
    }
    if (!zone.has(name)) return dnsPacket.encode(response(RCODES.NXDOMAIN));

    // A name with a CNAME stands for its target (RFC 1034 §3.6.2): answer the alias, then what
    // the target has of the asked type, following chains within this zone.
    const answers: Answer[] = [];
    let owner = question.name;
    for (let hops = 0; hops < 8; hops++) {
      const records = zone.get(normalize(owner)) ?? [];
      const matching = records.filter((record) => record.type === question.type);
      const alias = records.find((record): record is Extract<DnsRecord, { type: "CNAME" }> => record.type === "CNAME");
      if (matching.length > 0 || !alias) {
        answers.push(...matching.map((record) => toAnswer(owner, record, ttl)));
        break;
      }
      answers.push(toAnswer(owner, alias, ttl));
      owner = alias.target;
    }
    const encoded = dnsPacket.encode(response(RCODES.NOERROR, answers));
    return encoded.length <= maxSize ? encoded : dnsPacket.encode(response(RCODES.NOERROR, [], true));
  };

  const onUdpMessage = (udp: UdpSocket) => (message: Buffer, remote: RemoteInfo) => {
    let query: DecodedPacket;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return; // not DNS: a real server drops it too
    }
    const opt = query.additionals?.find((record): record is OptAnswer => record.type === "OPT");
    const maxSize = opt ? Math.min(Math.max(opt.udpPayloadSize, UDP_PLAIN_LIMIT), UDP_EDNS_LIMIT) : UDP_PLAIN_LIMIT;
    udp.send(answer(query, maxSize), remote.port, remote.address);
  };

  // DNS over TCP: each message is preceded by its length in two bytes (RFC 1035 §4.2.2).
  const sockets = new Set<Socket>();
  const tcp = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    let pending = Buffer.alloc(0);
    socket.on("data", (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
        const length = pending.readUInt16BE(0);
        const message = pending.subarray(2, 2 + length);
        pending = pending.subarray(2 + length);
        let query: DecodedPacket;
        try {
          query = dnsPacket.decode(message);
        } catch {
          socket.destroy();
          return;
        }
        const encoded = answer(query, 0xffff);
        const prefix = Buffer.alloc(2);
        prefix.writeUInt16BE(encoded.length);
        socket.write(Buffer.concat([prefix, encoded]));
      }
    });
  });

  const udp = await listenOnOnePort(tcp, onUdpMessage);
  const { port } = udp.address();
  return {
    host: "127.0.0.1",
    port,
    address: `127.0.0.1:${port}`,
    queries,
    add(name, record) {
      const key = normalize(name);
      zone.set(key, [...(zone.get(key) ?? []), record]);
    },
    set(name, records) {
      zone.set(normalize(name), [...records]);
      failures.delete(normalize(name));
    },
    remove(name) {
      zone.delete(normalize(name));
      failures.delete(normalize(name));
    },
    fail(name, rcode, times = Infinity) {
      if (times > 0) failures.set(normalize(name), { rcode, remaining: times });
      else failures.delete(normalize(name));
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await Promise.all([new Promise<void>((resolve) => udp.close(() => resolve())), new Promise<void>((resolve) => tcp.close(() => resolve()))]);
    },
  };
}

function toAnswer(name: string, record: DnsRecord, ttl: number): Answer {
  const common = { name, ttl, class: "IN" as const };
  switch (record.type) {
    case "MX":
      return { ...common, type: "MX", data: { preference: record.priority, exchange: record.exchange } };
    case "A":
    case "AAAA":
      return { ...common, type: record.type, data: record.address };
    case "CNAME":
      return { ...common, type: "CNAME", data: record.target };
    case "TXT": {
      // RFC 7208 §3.3 / RFC 6376 §3.6.2.2: one record, several <=255-byte character-strings that
      // the reader concatenates.
      const bytes = Buffer.from(record.value, "utf8");
      const strings: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += 255) strings.push(bytes.subarray(i, i + 255));
      return { ...common, type: "TXT", data: strings.length > 0 ? strings : [Buffer.alloc(0)] };
    }
  }
}

/** Binds UDP and TCP to the same free port: a resolver given "host:port" uses both. */
async function listenOnOnePort(tcp: Server, onMessage: (udp: UdpSocket) => (message: Buffer, remote: RemoteInfo) => void): Promise<UdpSocket> {
  for (let attempt = 0; ; attempt++) {
    const udp = createSocket("udp4");
    udp.on("message", onMessage(udp));
    await new Promise<void>((resolve, reject) => {
      udp.once("error", reject);
      udp.bind(0, "127.0.0.1", () => resolve());
    });
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once("error", reject);
        tcp.listen(udp.address().port, "127.0.0.1", () => {
          tcp.off("error", reject);
          resolve();
        });
      });
      return udp;
    } catch (error) {
      // Someone holds that port over TCP: take another UDP port and try again.
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE" || attempt >= 10) throw error;
    }
  }
}
