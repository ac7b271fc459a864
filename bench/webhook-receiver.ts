/**
 * The benchmark's webhook receiver (bench/webhooks.ts), in its own process: a plain node:http
 * server on loopback that answers 204, after SLOW_MS for paths under /slow. It records, per
 * request, when it arrived and how long after the event's creation (the payload's created_at),
 * and answers GET /stats with the figures. It does not verify signatures: the integration tests
 * do (test/integration/webhooks.test.ts); here it would only add the receiver's CPU to the figure.
 * Prints its port once listening.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

const SLOW_MS = Number(process.env.SLOW_MS ?? 2000);
let fast: number[] = [];
let slow = 0;
let firstAt = 0;
let lastAt = 0;
const ids = new Set<string>();
let duplicates = 0;

const server = createServer((req, res) => {
  if (req.method === "GET" && req.url === "/stats") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ fast: fast.length, slow, duplicates, firstAt, lastAt, latencies: fast }));
    return;
  }
  if (req.method === "POST" && req.url === "/reset") {
    fast = [];
    slow = 0;
    firstAt = lastAt = 0;
    // `ids` stays: a delivery received again after a reset still counts as a duplicate.
    duplicates = 0;
    res.writeHead(204).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const now = Date.now();
    const id = `${req.url} ${String(req.headers["webhook-id"])}`;
    if (ids.has(id)) duplicates++;
    ids.add(id);
    if (req.url?.startsWith("/slow")) {
      slow++;
      setTimeout(() => res.writeHead(204).end(), SLOW_MS);
      return;
    }
    const created = Date.parse((JSON.parse(Buffer.concat(chunks).toString()) as { created_at: string }).created_at);
    fast.push(now - created);
    if (firstAt === 0) firstAt = now;
    lastAt = now;
    res.writeHead(204).end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => console.log((server.address() as AddressInfo).port));
process.on("SIGTERM", () => process.exit(0));
