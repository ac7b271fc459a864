/**
 * The DNS of bench/delivery.ts: the tests' authoritative server on loopback
 * (test/helpers/dns-server.ts, UDP and TCP), in its own process so that answering the workers'
 * MX/A/AAAA queries does not share an event loop with what is measured. The benchmark points
 * DNS_SERVERS at it and publishes records over IPC.
 *
 *   node --import tsx bench/loopback-dns.ts     (prints nothing; talks over process.send)
 *
 * IPC: the child sends { type: "listening", address } once. { type: "set", name, records }
 * replaces the name's records (answered { type: "set" }); { type: "stats" } is answered with the number of queries
 * received since the last one, { type: "stats", queries }.
 */
import { startDnsServer, type DnsRecord } from "../test/helpers/dns-server.js";

// Real zones publish MX and address records for minutes to hours; 300 s is a common choice.
// Node's resolver (c-ares) caches answers for their TTL, so the workers ask once per name, as
// they would in production, rather than three times per message.
const dns = await startDnsServer({ ttl: 300 });
let counted = 0;

process.on("message", (message: { type: "set"; name: string; records: DnsRecord[] } | { type: "stats" }) => {
  if (message.type === "set") {
    dns.set(message.name, message.records);
    process.send!({ type: "set" });
  } else {
    // The helper keeps every question for the tests to read; here only their number matters.
    counted += dns.queries.splice(0).length;
    process.send!({ type: "stats", queries: counted });
    counted = 0;
  }
});
process.on("disconnect", () => void dns.close().then(() => process.exit(0)));
process.send!({ type: "listening", address: dns.address });
