import { SMTPServer, type SMTPServerSession } from "smtp-server";
import type { InboundConfig } from "../config.js";
import type { Metrics } from "../metrics.js";
import type { InboundService } from "../services/inbound.js";
import { clientLeft, listenerOptions, listenSmtp, readData, refusal, tlsOf, type ListeningSmtpServer } from "../smtp/server-kit.js";
import type { AcceptedRoute, InboundReceiver, ReceiverLog } from "./receiver.js";

/** RFC 5321 §4.5.3.1.8 asks a server to take at least 100; replies and reports never need more than a few. */
export const MAX_RECIPIENTS = 50;

export type InboundSmtpServer = Pick<ListeningSmtpServer, "port" | "close">;

/**
 * The inbound MX (role `smtp`, DESIGN.md §10): takes mail only for addresses at return-path
 * domains and for postmaster (never an open relay, no AUTH), and answers 250 to DATA only after
 * what the mail says is committed, so a crash before that makes the sender retry rather than
 * lose it.
 */
export async function startInboundServer(deps: {
  config: InboundConfig;
  hostname: string;
  service: InboundService;
  receiver: InboundReceiver;
  log: ReceiverLog;
  metrics: Metrics;
  /** How long close() lets a transaction in progress finish: below the shutdown grace. */
  closeTimeoutMs: number;
}): Promise<InboundSmtpServer> {
  const { config, service, receiver, log, metrics } = deps;
  const refuseRecipient = (reason: "relay" | "unknown_token" | "too_many" | "lookup_failed", code: number, text: string) => {
    metrics.inboundRecipientsRefused.inc({ reason });
    return refusal(code, text);
  };
  const answerData = (outcome: "refused" | "deferred", code: number, text: string) => {
    metrics.inboundMessages.inc({ outcome });
    return refusal(code, text);
  };
  const routes = new WeakMap<SMTPServerSession, AcceptedRoute[]>();
  const tls = tlsOf(config);

  const server = new SMTPServer({
    name: deps.hostname,
    banner: "Mailroom",
    // Nobody logs in: every address this server takes is one of its own.
    authMethods: [],
    authOptional: true,
    disabledCommands: tls ? ["AUTH"] : ["AUTH", "STARTTLS"],
    ...(tls ?? {}),
    ...listenerOptions(config, deps.closeTimeoutMs),

    onMailFrom(_address, session, callback) {
      routes.set(session, []);
      callback();
    },

    onRcptTo(address, session, callback) {
      const accepted = routes.get(session) ?? [];
      if (accepted.length >= MAX_RECIPIENTS) return callback(refuseRecipient("too_many", 452, `4.5.3 Too many recipients: at most ${MAX_RECIPIENTS} per message`));
      service.route(address.address).then(
        (route) => {
          if (route.kind === "relay") return callback(refuseRecipient("relay", 550, "5.7.1 Relay access denied: this server takes mail only for its own addresses"));
          if (route.kind === "unknown_token") return callback(refuseRecipient("unknown_token", 550, "5.1.1 No such mailbox: the address's token is not valid"));
          accepted.push(route);
          routes.set(session, accepted);
          callback();
        },
        (error: unknown) => {
          log.error({ err: error }, "inbound: RCPT lookup failed");
          callback(refuseRecipient("lookup_failed", 451, "4.3.0 Temporary failure, try again later"));
        },
      );
    },

    onData(stream, session, replied) {
      const callback = listener.answering(replied);
      readData(stream)
        .then(async (raw) => {
          if (stream.sizeExceeded) return callback(answerData("refused", 552, `5.3.4 Message too big: the limit is ${config.maxMessageBytes} bytes`));
          const verdict = await receiver.receive(raw, connectionOf(session), routes.get(session) ?? []);
          if (!verdict.accepted) return callback(answerData(verdict.code >= 500 ? "refused" : "deferred", verdict.code, verdict.message));
          log.info({ recipients: session.envelope.rcptTo.map((r) => r.address), outcome: verdict.summary }, "inbound: accepted");
          metrics.inboundMessages.inc({ outcome: "accepted" });
          callback(null, `2.0.0 Ok: ${verdict.summary}`);
        })
        .catch((error: unknown) => {
          // Nobody is left to answer: the message was never whole, so nothing was stored.
          if (clientLeft(error)) return log.info({ session: session.id }, "inbound: the sender left during DATA");
          log.error({ err: error }, "inbound: processing failed; the sender will retry");
          callback(answerData("deferred", 451, "4.3.0 Temporary failure while processing the message, try again later"));
        });
    },

    onClose(session) {
      routes.delete(session);
    },
  });
  server.on("error", (error) => log.error({ err: error }, "inbound SMTP server error"));
  const listener = await listenSmtp(server, config.host, config.port);
  return { port: listener.port, close: listener.close };
}

function connectionOf(session: SMTPServerSession): { ip: string; helo: string; mailFrom: string } {
  const from = session.envelope.mailFrom;
  return { ip: session.remoteAddress, helo: session.hostNameAppearsAs, mailFrom: from ? from.address : "" };
}
