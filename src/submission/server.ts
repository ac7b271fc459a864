import { readFileSync } from "node:fs";
import { simpleParser } from "mailparser";
import { SMTPServer, type SMTPServerAuthentication, type SMTPServerSession } from "smtp-server";
import type { SubmissionConfig } from "../config.js";
import { normaliseAddress } from "../domain/addresses.js";
import type { Principal } from "../domain/environments.js";
import { AuthenticationError, DomainError, ValidationError, type FieldError } from "../domain/errors.js";
import { LIMITS } from "../domain/limits.js";
import { isLoopback } from "../domain/loopback.js";
import { loadSpec } from "../http/spec.js";
import { createValidators, validationErrors } from "../http/validation.js";
import type { Metrics } from "../metrics.js";
import type { AuthService } from "../services/auth.js";
import type { MessagesService } from "../services/messages.js";
import type { RateLimiter } from "../services/rate-limiter.js";
import { listenSmtp, readData, refusal, type ListeningSmtpServer } from "../smtp/server-kit.js";
import { replyFor, type SmtpReply } from "./replies.js";
import { submissionIdempotencyKey, submittedMessage } from "./submitted-message.js";

/** RFC 4954 §6: the reply to credentials that are not valid. The same for every reason, as the API's 401 is. */
const INVALID_KEY = "5.7.8 invalid_api_key: the password must be a valid, unrevoked API key (svc_live_... or svc_test_...)";

export type SubmissionSmtpServer = Pick<ListeningSmtpServer, "port" | "close">;

export interface SubmissionLog {
  info(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/**
 * The SMTP submission server (role `submission`, docs/smtp.md): a door to createMessage for
 * software that speaks SMTP rather than HTTP. A client authenticates with an API key as its
 * password (AUTH PLAIN or LOGIN), and each message it sends becomes the createMessage request it
 * stands for (src/submission/submitted-message.ts), checked against the contract's own schema and
 * accepted by the same service as an API call: same environment, rate limit, key restrictions,
 * sender-domain rule and quota. The answer to DATA is 250 only once the message is durable, and
 * carries its id.
 */
export async function startSubmissionServer(deps: {
  config: SubmissionConfig;
  hostname: string;
  auth: AuthService;
  rateLimiter: RateLimiter;
  messages: MessagesService;
  log: SubmissionLog;
  metrics: Metrics;
  /** How long close() lets a transaction in progress finish: below the shutdown grace. */
  closeTimeoutMs: number;
}): Promise<SubmissionSmtpServer> {
  const { config, auth, rateLimiter, messages, log, metrics } = deps;
  const checkRequest = createMessageRequestCheck();
  const recipients = new Map<string, string[]>();
  const tls = config.tlsKeyFile && config.tlsCertFile ? { key: readFileSync(config.tlsKeyFile), cert: readFileSync(config.tlsCertFile) } : null;
  const answer = (outcome: "refused" | "deferred", reply: SmtpReply) => {
    metrics.submissionMessages.inc({ outcome });
    return refusal(reply.code, reply.text);
  };
  /** A domain refusal as its reply; anything else is a bug or an outage: logged, and 451 so the client retries. */
  const refusalFor = (error: unknown, stage: string) => {
    if (error instanceof DomainError) return answer(replyFor(error).code >= 500 ? "refused" : "deferred", replyFor(error));
    log.error({ err: error, stage }, "submission: failed; the client will retry");
    return answer("deferred", { code: 451, text: "4.3.0 Temporary failure, try again later" });
  };

  const server = new SMTPServer({
    name: deps.hostname,
    banner: "Mailroom submission",
    // PLAIN and LOGIN carry the key itself, which is all Mailroom can check: it keeps only digests,
    // so the challenge-response mechanisms (CRAM-MD5) are impossible.
    authMethods: ["PLAIN", "LOGIN"],
    authOptional: false,
    // Whether a session may authenticate in clear is decided per client in onAuth (loopback only).
    allowInsecureAuth: true,
    ...(tls ?? {}),
    secure: config.implicitTls,
    disabledCommands: tls ? [] : ["STARTTLS"],
    size: config.maxMessageBytes,
    maxClients: config.maxConnections,
    socketTimeout: config.timeoutMs,
    // At least 1 ms: smtp-server takes 0 for its default of 30 s.
    closeTimeout: Math.max(1, deps.closeTimeoutMs),
    logger: false,

    onAuth(credentials: SMTPServerAuthentication, session: SMTPServerSession, callback) {
      // RFC 8314 §3: the key never crosses a network in clear; from this machine it may.
      if (!session.secure && !isLoopback(session.remoteAddress)) {
        metrics.submissionAuthentications.inc({ outcome: "refused" });
        return callback(refusal(538, "5.7.11 Encryption required: use STARTTLS (or port 465) before AUTH"));
      }
      auth.authenticate(credentials.password || undefined, session.remoteAddress).then(
        (principal) => {
          if (principal.credential.kind !== "api_key") {
            metrics.submissionAuthentications.inc({ outcome: "refused" });
            return callback(refusal(535, INVALID_KEY));
          }
          metrics.submissionAuthentications.inc({ outcome: "accepted" });
          callback(null, { user: principal });
        },
        (error: unknown) => {
          metrics.submissionAuthentications.inc({ outcome: error instanceof DomainError ? "refused" : "failed" });
          if (error instanceof AuthenticationError) return callback(refusal(535, INVALID_KEY));
          // A key used from outside its allowed_ips: the reason, as the API gives it, with AUTH's code.
          if (error instanceof DomainError) return callback(refusal(535, replyFor(error).text));
          log.error({ err: error }, "submission: authentication failed");
          callback(refusal(454, "4.7.0 Temporary authentication failure, try again later"));
        },
      );
    },

    onMailFrom(_address, session, callback) {
      recipients.set(session.id, []);
      // One message, one request against the key's rate limit, as an API call would count.
      rateLimiter.hit(principalOf(session), session.remoteAddress).then(
        (state) => (state.allowed ? callback() : callback(answer("deferred", { code: 451, text: `4.7.1 rate_limited: This key's request quota is spent; retry in ${state.resetSeconds} s.` }))),
        (error: unknown) => callback(refusalFor(error, "rate limit")),
      );
    },

    onRcptTo(address, session, callback) {
      const accepted = recipients.get(session.id) ?? [];
      const normalised = normaliseAddress(address.address);
      if (normalised === null) return callback(refusal(550, `5.1.3 ${JSON.stringify(address.address)} is not a valid email address`));
      if (accepted.includes(normalised)) return callback();
      if (accepted.length >= LIMITS.recipientsPerMessage) return callback(refusal(452, `4.5.3 Too many recipients: at most ${LIMITS.recipientsPerMessage} per message`));
      accepted.push(normalised);
      recipients.set(session.id, accepted);
      callback();
    },

    onData(stream, session, replied) {
      const callback = listener.answering(replied);
      readData(stream)
        .then(async (raw) => {
          if (stream.sizeExceeded) return callback(answer("refused", { code: 552, text: `5.3.4 Message too big: the limit is ${config.maxMessageBytes} bytes` }));
          const mail = await simpleParser(raw, { keepCidLinks: true, skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true });
          const submitted = submittedMessage(mail, recipients.get(session.id) ?? []);
          if (!submitted.ok) throw new ValidationError(submitted.errors);
          const shapeErrors = checkRequest(submitted.request);
          if (shapeErrors.length > 0) throw new ValidationError(shapeErrors);
          const principal = principalOf(session);
          const message = await messages.create(principal, submitted.request, submissionIdempotencyKey(raw, mail));
          log.info({ message_id: message.id, key_id: principal.credential.id, environment: principal.environment, recipients: message.recipients.length }, "submission: accepted");
          metrics.submissionMessages.inc({ outcome: "accepted" });
          callback(null, `2.0.0 Ok: queued as ${message.id}`);
        })
        .catch((error: unknown) => callback(refusalFor(error, "data")));
    },

    onClose(session) {
      recipients.delete(session.id);
    },
  });
  server.on("error", (error) => log.error({ err: error }, "submission SMTP server error"));
  const listener = await listenSmtp(server, config.host, config.port);
  return { port: listener.port, close: listener.close };
}

/** The principal onAuth put on the session; smtp-server lets no unauthenticated session reach MAIL FROM. */
function principalOf(session: SMTPServerSession): Principal {
  return session.user as Principal;
}

/**
 * The contract's schema of a createMessage body, compiled by the strict validator the HTTP door
 * checks bodies with, so a submitted message is held to exactly what an API call is.
 */
function createMessageRequestCheck(): (request: unknown) => FieldError[] {
  const validate = createValidators().compile({ schema: { $ref: "#/components/schemas/CreateMessageRequest", components: loadSpec().components }, httpPart: "body" });
  return (request) => (validate(request) ? [] : validationErrors((validate.errors ?? []) as Parameters<typeof validationErrors>[0], "body"));
}
