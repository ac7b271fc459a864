import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Webhook } from "standardwebhooks";
import { arrivals, closeWithSockets } from "./receiver-parts.js";

/**
 * A real webhook receiver on loopback that answers only when the test says so: each request is
 * verified with the public `standardwebhooks` package (as in webhook-receiver.ts), then held open
 * until `answer()`. The test sees a request arrive and decides when and how it is answered, so
 * "an attempt in flight" is a state it waits for, not a delay it guesses. Never answered, it is a
 * dead receiver: it accepts the connection and the request and says nothing.
 */
export interface HeldRequest {
  /** The `webhook-id`. */
  id: string;
  body: string;
  payload: Record<string, unknown> & { id: string; type: string };
  answer(status: number, body?: string): void;
}

export interface ManualReceiver {
  readonly url: string;
  /** The secrets requests are verified with; set after creating the endpoint. */
  secrets: string[];
  /** Every verified request, in order of arrival, answered or not. */
  readonly arrived: HeldRequest[];
  /** Requests that verified with no secret (answered 400 at once): a test expects none. */
  readonly unverified: Array<{ body: string; reason: string }>;
  /** The next verified request not yet taken by next(), once it has arrived. */
  next(timeoutMs?: number): Promise<HeldRequest>;
  /** Drops every connection, answered or not (the client sees a reset), and stops listening. */
  close(): Promise<void>;
}

export async function startManualReceiver(): Promise<ManualReceiver> {
  const sockets = new Set<Socket>();
  const waiting = arrivals();
  let taken = 0;
  const receiver: ManualReceiver = {
    url: "",
    secrets: [],
    arrived: [],
    unverified: [],
    next: async (timeoutMs = 10_000) => {
      await waiting.until(() => receiver.arrived.length > taken, timeoutMs, () => `expected request ${taken + 1}, got ${receiver.arrived.length} in ${timeoutMs} ms`);
      return receiver.arrived[taken++]!;
    },
    close: () => closeWithSockets(server, sockets),
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    let reason = "no secret set";
    const verified = receiver.secrets.some((secret) => {
      try {
        new Webhook(secret).verify(body, req.headers as Record<string, string>);
        return true;
      } catch (error) {
        reason = (error as Error).message;
        return false;
      }
    });
    if (!verified) {
      receiver.unverified.push({ body, reason });
      res.writeHead(400).end("signature did not verify");
      return;
    }
    receiver.arrived.push({
      id: req.headers["webhook-id"] as string,
      body,
      payload: JSON.parse(body) as HeldRequest["payload"],
      answer: (status, answerBody = "") => {
        if (!res.destroyed) res.writeHead(status).end(answerBody);
      },
    });
    waiting.arrived();
  };

  const server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  Object.assign(receiver, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks` });
  return receiver;
}
