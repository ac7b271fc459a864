import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebhookHttpClient } from "../../src/webhooks/http-client.js";
import { TargetGuard } from "../../src/webhooks/target-guard.js";

/** A receiver that never closes an idle keep-alive connection itself, and says when one is closed. */
async function lingeringReceiver(): Promise<{ server: Server; url: string; open: () => number; closed: Promise<void> }> {
  const sockets = new Set<Socket>();
  let onClose: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => (onClose = resolve));
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(204).end());
  });
  server.keepAliveTimeout = 0; // keeps idle connections open for as long as the client does
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => {
      sockets.delete(socket);
      onClose();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, open: () => sockets.size, closed };
}

describe("WebhookHttpClient", () => {
  const cleanups: Array<() => void> = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  });

  it("answers a URL whose credentials cannot be sent (a percent-escape that is not UTF-8) as a failed attempt, never a rejection", async () => {
    const receiver = await lingeringReceiver();
    const client = new WebhookHttpClient(new TargetGuard({ allowPrivate: true, dnsServers: [] }), 5_000);
    cleanups.push(() => {
      client.close();
      receiver.server.close();
    });
    const url = receiver.url.replace("http://", "http://hook:caf%E9@");
    await expect(client.post(url, {}, "{}")).resolves.toMatchObject({ status: null, error: "network" });
    expect(receiver.open()).toBe(0);
  });

  it("closes a keep-alive connection left idle, so receivers that never close theirs cannot use up the worker's file descriptors", async () => {
    const receiver = await lingeringReceiver();
    const client = new WebhookHttpClient(new TargetGuard({ allowPrivate: true, dnsServers: [] }), 5_000, { idleMs: 200 });
    cleanups.push(() => {
      client.close();
      receiver.server.closeAllConnections();
      receiver.server.close();
    });

    const answer = await client.post(receiver.url, { "content-type": "application/json" }, "{}");
    expect(answer.status).toBe(204);
    expect(receiver.open()).toBe(1);

    const closedInTime = await Promise.race([receiver.closed.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 3_000))]);
    expect(closedInTime).toBe(true);
    expect(receiver.open()).toBe(0);
  });

  it("waits for a receiver that is slower to answer than a connection may sit idle, up to the attempt's timeout", async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => setTimeout(() => res.writeHead(200).end("late but fine"), 600));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const client = new WebhookHttpClient(new TargetGuard({ allowPrivate: true, dnsServers: [] }), 5_000, { idleMs: 200 });
    cleanups.push(() => {
      client.close();
      server.closeAllConnections();
      server.close();
    });

    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    const first = await client.post(url, {}, "{}");
    const reused = await client.post(url, {}, "{}");
    expect([first, reused].map(({ status, body, error }) => ({ status, body, error }))).toEqual([
      { status: 200, body: "late but fine", error: null },
      { status: 200, body: "late but fine", error: null },
    ]);
  });

  it("takes the status as the answer when the receiver resets the connection after sending it, mid-body", async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-length": "100" });
        res.write("0123456789");
        setTimeout(() => res.socket?.resetAndDestroy(), 50);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const client = new WebhookHttpClient(new TargetGuard({ allowPrivate: true, dnsServers: [] }), 5_000);
    cleanups.push(() => {
      client.close();
      server.close();
    });

    const answer = await client.post(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, {}, "{}");
    expect({ status: answer.status, body: answer.body, error: answer.error }).toEqual({ status: 200, body: "0123456789", error: null });
  });
});
