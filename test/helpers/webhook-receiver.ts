import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Webhook } from "standardwebhooks";
import { arrivals, closeWithSockets } from "./receiver-parts.js";

/**
 * A real webhook receiver on loopback: every request is verified with the public
 * `standardwebhooks` package, as a customer's code would, and recorded. Tests script its answers
 * (statuses, Retry-After, redirects, sleeping past the timeout).
 */
export interface ReceivedWebhook {
  id: string;
  timestamp: number;
  signature: string;
  /** Indexes into `secrets` of the secrets this delivery verified with. */
  verifiedWith: number[];
  body: string;
  payload: Record<string, unknown> & { id: string; type: string; sequence: number; message_id: string; data: Record<string, unknown> };
  headers: IncomingMessage["headers"];
  /** Wall-clock milliseconds. */
  receivedAt: number;
  /** The status this receiver answered. */
  answered: number;
}

export interface ScriptedAnswer {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait this long before answering (a slow receiver). */
  delayMs?: number;
  /** Called as the request arrives, before the wait: a test moves its clock while the request is in flight. */
  onArrival?: () => void;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly port: number;
  /** The secrets deliveries are verified with; set after creating the endpoint. */
  secrets: string[];
  /** Every request that verified with at least one secret, in order of arrival. */
  readonly received: ReceivedWebhook[];
  /** Requests that verified with no secret (answered 400): a test expects none. */
  readonly unverified: Array<{ headers: IncomingMessage["headers"]; body: string; reason: string }>;
  /** Answers for the next requests, in order; once spent, `otherwise` (default 204). */
  script(...answers: ScriptedAnswer[]): void;
  otherwise: ScriptedAnswer;
  /** Resolves once `count` verified deliveries have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(secrets: string[] = []): Promise<WebhookReceiver> {
  const queue: ScriptedAnswer[] = [];
  const sockets = new Set<Socket>();
  const waiting = arrivals();
  const receiver: WebhookReceiver = {
    url: "",
    port: 0,
    secrets,
    received: [],
    unverified: [],
    script: (...answers) => void queue.push(...answers),
    otherwise: { status: 204 },
    waitFor: async (count, timeoutMs = 10_000) => {
      await waiting.until(() => receiver.received.length >= count, timeoutMs, () => `expected ${count} webhooks, got ${receiver.received.length} in ${timeoutMs} ms`);
      return receiver.received.slice(0, count);
    },
    close: () => closeWithSockets(server, sockets),
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const headers = req.headers;
    const verifiedWith: number[] = [];
    let reason = "no secret set";
    receiver.secrets.forEach((secret, index) => {
      try {
        new Webhook(secret).verify(body, headers as Record<string, string>);
        verifiedWith.push(index);
      } catch (error) {
        reason = (error as Error).message;
      }
    });
    if (verifiedWith.length === 0) {
      receiver.unverified.push({ headers, body, reason });
      res.writeHead(400).end("signature did not verify");
      return;
    }
    const answer = queue.shift() ?? receiver.otherwise;
    answer.onArrival?.();
    if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
    const status = answer.status ?? 204;
    receiver.received.push({
      id: headers["webhook-id"] as string,
      timestamp: Number(headers["webhook-timestamp"]),
      signature: headers["webhook-signature"] as string,
      verifiedWith,
      body,
      payload: JSON.parse(body) as ReceivedWebhook["payload"],
      headers,
      receivedAt: Date.now(),
      answered: status,
    });
    waiting.arrived();
    if (res.destroyed) return;
    res.writeHead(status, answer.headers ?? {}).end(answer.body ?? "");
  };

  const server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  Object.assign(receiver, { port, url: `http://127.0.0.1:${port}/hooks` });
  return receiver;
}

/**
 * A TCP listener that only counts connections: the SSRF tests point a refused URL at it and
 * expect zero, which proves the refusal happened before any connection was made.
 */
export async function startCanary(host = "127.0.0.1"): Promise<{ port: number; connections: number; close(): Promise<void> }> {
  const { createServer: createTcpServer } = await import("node:net");
  const canary = { port: 0, connections: 0, close: async () => undefined as void };
  const server = createTcpServer((socket) => {
    canary.connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  canary.port = (server.address() as AddressInfo).port;
  canary.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return canary;
}
