/**
 * The baseline sender of bench/delivery.ts, in its own process (as each Mailroom worker is):
 * nodemailer's pooled SMTP transport sends one prebuilt message (raw MIME, no DKIM) with an
 * envelope, over and over, into the benchmark's SMTP sink.
 *
 *   node --import tsx bench/nodemailer-baseline.ts     (started with an IPC channel)
 *
 * IPC: the parent sends { type: "run", port, raw (latin1), warmup, messages, maxConnections,
 * keepConnections }: with it, maxMessages is Infinity (nodemailer's default, 100, recycles each
 * connection after 100 messages). The child sends the warm-up
 * (which opens the pool's connections), answers { type: "warm" }, waits for { type: "go" }, sends
 * the measured messages and answers { type: "done", seconds, hwmMb }.
 */
import { readFileSync } from "node:fs";
import nodemailer from "nodemailer";

interface RunRequest {
  type: "run";
  port: number;
  raw: string;
  warmup: number;
  messages: number;
  maxConnections: number;
  keepConnections: boolean;
  envelopeFrom: string;
  recipientDomain: string;
}

// At most this many sendMail calls outstanding: nodemailer queues the rest itself, but a hundred
// thousand pending promises at once would only measure that queue.
const WINDOW = 500;

async function run(request: RunRequest): Promise<void> {
  const raw = Buffer.from(request.raw, "latin1");
  const transport = nodemailer.createTransport({
    pool: true,
    host: "127.0.0.1",
    port: request.port,
    maxConnections: request.maxConnections,
    tls: { rejectUnauthorized: false },
    ...(request.keepConnections ? { maxMessages: Infinity } : {}),
  });
  const sendMany = async (count: number) => {
    let next = 0;
    const lane = async () => {
      while (next < count) {
        const i = next++;
        const info = await transport.sendMail({ envelope: { from: request.envelopeFrom, to: [`customer${i}@${request.recipientDomain}`] }, raw });
        if (!/^250/.test(info.response)) throw new Error(`unexpected answer ${info.response}`);
      }
    };
    await Promise.all(Array.from({ length: Math.min(WINDOW, count) }, lane));
  };
  await sendMany(request.warmup);
  const go = new Promise<void>((resolve) => process.once("message", () => resolve()));
  process.send!({ type: "warm" });
  await go;
  const t0 = performance.now();
  await sendMany(request.messages);
  const seconds = (performance.now() - t0) / 1000;
  const hwm = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync("/proc/self/status", "utf8"));
  process.send!({ type: "done", seconds, hwmMb: hwm ? Number(hwm[1]) / 1024 : NaN });
  transport.close();
}

process.once("message", (request: RunRequest) => {
  run(request).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
});
process.on("disconnect", () => process.exit(0));
