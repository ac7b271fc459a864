import type { ConnectionOptions } from "node:tls";
import type { DeliveryConfig } from "../../config.js";
import { isLoopback } from "../../domain/loopback.js";
import { credentialUrlProblem } from "../../domain/redact.js";
import { SmtpPool, toSendResult, type SmtpDestination } from "./smtp-pool.js";
import type { Envelope, MailTransport, SendOptions, SendResult } from "./transport.js";

/**
 * Everything through one SMTP relay (DESIGN.md §9, SMTP_RELAY_URL): smtp://user:pass@host:587
 * with STARTTLS when the relay offers it, or smtps://user:pass@host:465 with TLS from the start.
 * The relay's certificate is verified (a private CA: NODE_EXTRA_CA_CERTS, or `tlsOptions`).
 *
 * Refused credentials (535) defer the message and never bounce it: they are our configuration
 * error, not the recipient's, and once the credentials are fixed the retries deliver.
 */
export interface RelayTransportOptions {
  /** The pool to send through; close() closes it. */
  pool?: SmtpPool;
  /** Extra TLS options for the relay connection, e.g. `{ ca }`. */
  tlsOptions?: ConnectionOptions;
}

export interface RelayEndpoint {
  host: string;
  port: number;
  secure: boolean;
  auth: { user: string; pass: string } | null;
}

/** smtp://[user[:pass]@]host[:port] (default 587) or smtps://... (default 465); userinfo URL-decoded. */
export function parseRelayUrl(relayUrl: string): RelayEndpoint {
  // Checked first: the URL parser's own error would carry the whole URL, password included.
  const problem = credentialUrlProblem(relayUrl);
  if (problem !== null) throw new Error(`relay URL ${problem}`);
  const url = new URL(relayUrl);
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:") throw new Error(`relay URL must be smtp:// or smtps://, not ${url.protocol}//`);
  const secure = url.protocol === "smtps:";
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1"); // IPv6 literals come bracketed
  const user = decodeURIComponent(url.username);
  return {
    host,
    port: url.port === "" ? (secure ? 465 : 587) : Number(url.port),
    secure,
    auth: user === "" ? null : { user, pass: decodeURIComponent(url.password) },
  };
}

export class RelayTransport implements MailTransport {
  private readonly pool: SmtpPool;
  private readonly destination: SmtpDestination;

  constructor(config: DeliveryConfig, options: RelayTransportOptions = {}) {
    if (config.relayUrl === null) throw new Error("RelayTransport needs SMTP_RELAY_URL");
    const relay = parseRelayUrl(config.relayUrl);
    this.pool = options.pool ?? SmtpPool.fromConfig(config);
    this.destination = {
      key: `relay:${relay.host}:${relay.port}`,
      hostname: relay.host,
      // The relay's name is resolved by the system resolver, as any configured host name is.
      addresses: [relay.host],
      port: relay.port,
      // Credentials never cross a network in clear: over smtp:// to anything but this machine, a
      // relay that does not offer STARTTLS (or has it stripped by someone in between) is refused
      // rather than sent the password. A relay on loopback (a local Postfix) may go without.
      tls: relay.secure ? "implicit" : relay.auth !== null && !isLoopback(relay.host) ? "require-starttls" : "starttls",
      auth: relay.auth,
      ...(options.tlsOptions ? { tlsOptions: options.tlsOptions } : {}),
    };
  }

  async send(envelope: Envelope, mime: Buffer, options: SendOptions = {}): Promise<SendResult> {
    return relayed(toSendResult(await this.pool.send(this.destination, envelope, mime, options)));
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/**
 * A relay's refusal with a bare code ("550 relay not permitted", no enhanced status) bounces soft.
 * From a recipient's own server a bare 550 means the mailbox is unavailable (smtp-reply.ts), but a
 * relay says it about its own policy as often as about the address: relaying denied to this
 * host, a sender it does not allow. Hard, it would suppress every recipient of a misconfigured
 * relay; an enhanced code (550 5.1.1) still says which it is.
 */
function relayed(result: SendResult): SendResult {
  if (result.outcome !== "bounced" || result.bounceType !== "hard" || !result.enhancedStatus.endsWith(".0.0")) return result;
  return { ...result, bounceType: "soft" };
}

