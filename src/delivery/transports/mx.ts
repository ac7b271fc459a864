import { domainToASCII } from "node:url";
import type { DeliveryConfig } from "../../config.js";
import { MxResolver } from "../dns-resolver.js";
import { bounceTypeFor } from "../smtp-reply.js";
import { SmtpPool, toSendResult, type TransactionResult } from "./smtp-pool.js";
import type { Envelope, MailTransport, SendOptions, SendResult } from "./transport.js";

/**
 * Direct delivery (DESIGN.md §9): the recipient domain's MX hosts, best preference first, at
 * `config.mxPort`, with opportunistic STARTTLS. The next host is tried when one cannot be
 * reached or will not start a session (refused, timed out, 4xx or 5xx greeting); the first real
 * answer to the transaction (MAIL, RCPT, DATA) is the result, whatever it is.
 */
export interface MxTransportOptions {
  resolver?: MxResolver;
  /** The pool to send through; close() closes it. */
  pool?: SmtpPool;
}

// Postfix tries at most 5 MX addresses per delivery attempt (smtp_mx_address_limit): a domain
// with ten dead MX hosts would otherwise hold a message for ten connect timeouts, each in one of
// the pool's transaction slots.
const MAX_HOSTS_PER_ATTEMPT = 5;

export class MxTransport implements MailTransport {
  private readonly resolver: MxResolver;
  private readonly pool: SmtpPool;
  private readonly port: number;

  constructor(config: DeliveryConfig, options: MxTransportOptions = {}) {
    this.resolver = options.resolver ?? MxResolver.fromConfig(config);
    this.pool = options.pool ?? SmtpPool.fromConfig(config);
    this.port = config.mxPort;
  }

  async send(envelope: Envelope, mime: Buffer, options: SendOptions = {}): Promise<SendResult> {
    const domain = recipientDomain(envelope.rcptTo);
    if (domain === null) return noSmtp("bounced", "5.1.3", `${envelope.rcptTo} has no valid domain`);

    const destination = await this.resolver.resolveDestination(domain);
    if (destination.kind === "permanent") return noSmtp("bounced", destination.enhancedStatus, destination.reason);
    if (destination.kind === "temporary") return noSmtp("deferred", destination.enhancedStatus, destination.reason);

    let last: TransactionResult | null = null;
    let dnsFailure: string | null = null;
    const unresolved: string[] = [];
    for (const { host } of destination.hosts.slice(0, MAX_HOSTS_PER_ATTEMPT)) {
      const addresses = await this.resolver.resolveAddresses(host);
      if (addresses.kind === "none") {
        unresolved.push(addresses.reason);
        continue;
      }
      if (addresses.kind === "temporary") {
        dnsFailure = addresses.reason;
        continue;
      }
      const result = await this.pool.send({ key: `${host}:${this.port}`, hostname: host, addresses: addresses.addresses, port: this.port, tls: "opportunistic" }, envelope, mime, options);
      if (!worthTheNextHost(result)) return toSendResult(result);
      last = result;
    }
    if (last !== null) return toSendResult(last);
    if (dnsFailure !== null) return noSmtp("deferred", "4.4.3", dnsFailure);
    // RFC 3463 X.4.4 "unable to route": the domain exists but publishes no host that can be
    // reached. Permanent (RFC 5321 §5.1), but soft: it is the domain's configuration, not the
    // address, and a domain that fixes its DNS should get its mail again.
    return noSmtp("bounced", "5.4.4", `no mail host for ${domain} has an address: ${unresolved.join("; ")}`);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/**
 * Another MX host may do better when this one never started the session, or when the
 * connection was lost before the whole message was sent (nothing was accepted). Never after
 * the message was sent: the first host may have it (RFC 1047), and a second copy is worse.
 */
function worthTheNextHost(result: TransactionResult): boolean {
  if (result.stage === "connect") return true;
  return !result.answered && !result.payloadSent && result.outcome === "deferred";
}

/** The ASCII (A-label) form of the address's domain, or null when it has none. */
function recipientDomain(address: string): string | null {
  const at = address.lastIndexOf("@");
  if (at === -1 || at === address.length - 1) return null;
  const domain = domainToASCII(address.slice(at + 1).replace(/\.$/, ""));
  return domain === "" ? null : domain;
}

/** An outcome decided without an SMTP answer (DNS). */
function noSmtp(outcome: "bounced" | "deferred", enhancedStatus: string, response: string): SendResult {
  return {
    outcome,
    bounceType: outcome === "bounced" ? bounceTypeFor(enhancedStatus) : null,
    smtpCode: null,
    enhancedStatus,
    response,
    remoteHost: null,
  };
}
