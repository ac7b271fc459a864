import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import type { SMTPServer, SMTPServerDataStream, SMTPServerOptions } from "smtp-server";
import type { SmtpListenerConfig } from "../config.js";

/**
 * What Mailroom's two SMTP servers share (the inbound MX, src/inbound/server.ts, and the
 * submission server, src/submission/server.ts): the options their settings give (TLS, limits,
 * the PROXY protocol), how a refusal is spelled, how DATA is read, and how a server listens and
 * closes.
 */

/** The server's TLS key and certificate, read at start; null when either file is not configured (no TLS). */
export function tlsOf(config: SmtpListenerConfig): { key: Buffer; cert: Buffer } | null {
  return config.tlsKeyFile && config.tlsCertFile ? { key: readFileSync(config.tlsKeyFile), cert: readFileSync(config.tlsCertFile) } : null;
}

/** The smtp-server options both servers take from their listener settings. */
export function listenerOptions(config: SmtpListenerConfig, closeTimeoutMs: number): SMTPServerOptions {
  return {
    size: config.maxMessageBytes,
    maxClients: config.maxConnections,
    socketTimeout: config.timeoutMs,
    // At least 1 ms: smtp-server takes 0 for its default of 30 s.
    closeTimeout: Math.max(1, closeTimeoutMs),
    // A PROXY header is read only from the listed load balancers, and required from them: from
    // anyone else it would let a client claim any address (for SPF, allowed_ips).
    useProxy: config.proxyProtocolFrom.length > 0 ? config.proxyProtocolFrom : false,
    logger: false,
  };
}

/** The SMTP answer to a refused command: basic code, then the enhanced status (RFC 3463) in the text. */
export function refusal(code: number, text: string): Error & { responseCode: number } {
  return Object.assign(new Error(text), { responseCode: code });
}

/** The message bytes; past the size limit smtp-server stops keeping them and flags the stream. */
export function readData(stream: SMTPServerDataStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => {
      if (!stream.sizeExceeded) chunks.push(chunk);
    });
    stream.once("end", () => resolve(Buffer.concat(chunks)));
    stream.once("error", reject);
  });
}

/** Whether DATA ended because the client went away (smtp-server destroys the stream with ECONNECTION): no one to answer. */
export function clientLeft(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "ECONNECTION";
}

export interface ListeningSmtpServer {
  /** The port it listens on (useful when configured with 0). */
  readonly port: number;
  /**
   * Stops listening and closes idle sessions at once with 421; a session in a transaction (its
   * DATA still arriving, say) may finish it within the server's closeTimeout, then it is closed
   * with 421 too.
   */
  close(): Promise<void>;
  /**
   * Wraps an onData callback: while the server closes, the session leaves as soon as its
   * transaction is answered.
   */
  answering<Reply extends unknown[]>(replied: (...reply: Reply) => void): (...reply: Reply) => void;
}

/** Starts `server` on host:port; rejects when it cannot listen there. */
export async function listenSmtp(server: SMTPServer, host: string, port: number): Promise<ListeningSmtpServer> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  let closing = false;
  return {
    port: (server.server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        // From here smtp-server answers every new command with 421, and closes what is still open
        // after closeTimeout.
        server.close(() => resolve());
        closeIdleSessions(server);
      }),
    answering:
      (replied) =>
      (...reply) => {
        replied(...reply);
        if (closing) closeIdleSessions(server);
      },
  };
}

/**
 * Closes the sessions with no transaction in progress, with the 421 smtp-server sends at its
 * close timeout (RFC 5321 §3.8): an idle client would otherwise hold shutdown for that long.
 */
function closeIdleSessions(server: SMTPServer): void {
  for (const connection of server.connections) {
    // No envelope yet: the greeting is still being prepared.
    if (!connection.session.envelope?.mailFrom) connection.send(421, "Server shutting down");
  }
}
