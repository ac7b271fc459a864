import type { Server } from "node:http";
import type { Socket } from "node:net";

/**
 * What the loopback webhook receivers (webhook-receiver.ts, manual-receiver.ts) share: waiting
 * for requests to arrive, and closing with connections still open.
 */
export function arrivals() {
  const waiters: Array<() => void> = [];
  return {
    /** Call when a request arrived: wakes whoever waits. */
    arrived(): void {
      for (const wake of waiters.splice(0)) wake();
    },
    /** Resolves once `done()` holds, woken by arrivals (and every 50 ms); throws `failure()` after `timeoutMs`. */
    async until(done: () => boolean, timeoutMs: number, failure: () => string): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(failure());
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
    },
  };
}

/** Drops every connection, answered or not (the client sees a reset), and stops listening. */
export async function closeWithSockets(server: Server, sockets: ReadonlySet<Socket>): Promise<void> {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
