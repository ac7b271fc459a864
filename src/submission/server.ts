import { SMTPServer, type SMTPServerAuthentication, type SMTPServerSession } from "smtp-server";
import { ConfigError, type SubmissionConfig } from "../config.js";
import { normaliseAddress } from "../domain/addresses.js";
import type { Principal } from "../domain/environments.js";
import { AuthenticationError, DomainError, IpNotAllowedError, ValidationError, type FieldError } from "../domain/errors.js";
import { LIMITS } from "../domain/limits.js";
import { isLoopback } from "../domain/loopback.js";
import { loadSpec } from "../http/spec.js";
import { createValidators, validationErrors } from "../http/validation.js";
import type { Metrics } from "../metrics.js";
import type { AuthService } from "../services/auth.js";
import type { MessagesService } from "../services/messages.js";
import type { RateLimiter } from "../services/rate-limiter.js";
import { parseWithinLimits, PARSER_LIMITS_TEXT } from "../smtp/bounded-parse.js";
import { clientLeft, listenerOptions, listenSmtp, readData, refusal, tlsOf, type ListeningSmtpServer } from "../smtp/server-kit.js";
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
  const tls = tlsOf(config);
  // RFC 8314 §3: an API key never crosses a network in clear. Without TLS the server is for this
  // machine only; with TLS every client, loopback included, authenticates only once encrypted.
  if (tls === null && !isLoopback(config.host)) {
    throw new ConfigError(`SUBMISSION_SMTP_HOST=${config.host} needs SUBMISSION_TLS_KEY_FILE and SUBMISSION_TLS_CERT_FILE: without TLS the submission server listens on loopback only, so that API keys never cross a network in clear (docs/smtp.md#security)`);
  }
  const checkRequest = createMessageRequestCheck();
  /** Per session: the key it authenticated with, checked again at every MAIL FROM. */
  const secrets = new WeakMap<SMTPServerSession, string>();
  /** Per session: its transaction in progress, from MAIL FROM: the recipients taken, and those refused (as given). */
  const transactions = new WeakMap<SMTPServerSession, { principal: Principal; recipients: string[]; refused: string[] }>();
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
    authRequiredMessage: "5.7.0 Authentication required: AUTH with an API key as the password",
    // With TLS, AUTH before STARTTLS is refused (538); without, only loopback clients can connect.
    allowInsecureAuth: tls === null,
    ...(tls ?? {}),
    secure: config.implicitTls,
    disabledCommands: tls ? [] : ["STARTTLS"],
    ...listenerOptions(config, deps.closeTimeoutMs),

    onAuth(credentials: SMTPServerAuthentication, session: SMTPServerSession, callback) {
      // Defence in depth: the options above already keep a key off the network in clear.
      if (!session.secure && !isLoopback(session.remoteAddress)) {
        metrics.submissionAuthentications.inc({ outcome: "refused" });
        return callback(refusal(538, "5.7.11 Encryption required: use STARTTLS (or port 465) before AUTH"));
      }
      const secret = credentials.password ?? "";
      authenticate(secret, session).then(
        (principal) => {
          metrics.submissionAuthentications.inc({ outcome: "accepted" });
          secrets.set(session, secret);
          callback(null, { user: principal.credential.id });
        },
        (error: unknown) => {
          metrics.submissionAuthentications.inc({ outcome: error instanceof DomainError ? "refused" : "failed" });
          callback(authRefusal(error));
        },
      );
    },

    onMailFrom(_address, session, callback) {
      transactions.delete(session);
      // As every API call is: a key revoked, expired or restricted since AUTH stops here.
      authenticate(secrets.get(session) ?? "", session)
        .then(async (principal) => {
          // One message, one request against the key's rate limit, as an API call would count.
          const state = await rateLimiter.hit(principal, session.remoteAddress);
          if (!state.allowed) return callback(answer("deferred", { code: 451, text: `4.7.1 rate_limited: This key's request quota is spent; retry in ${state.resetSeconds} s.` }));
          transactions.set(session, { principal, recipients: [], refused: [] });
          callback();
        })
        .catch((error: unknown) => callback(error instanceof AuthenticationError || error instanceof IpNotAllowedError ? authRefusal(error) : refusalFor(error, "mail from")));
    },

    onRcptTo(address, session, callback) {
      const transaction = transactions.get(session);
      if (!transaction) return callback(refusal(503, "5.5.1 Bad sequence of commands: MAIL FROM first"));
      const normalised = normaliseAddress(address.address);
      const refuse = (code: number, text: string) => {
        transaction.refused.push(address.address);
        callback(refusal(code, text));
      };
      if (normalised === null) return refuse(550, `5.1.3 ${JSON.stringify(address.address)} is not a valid email address`);
      if (transaction.recipients.includes(normalised)) return callback();
      if (transaction.recipients.length >= LIMITS.recipientsPerMessage) return refuse(452, `4.5.3 Too many recipients: at most ${LIMITS.recipientsPerMessage} per message`);
      transaction.recipients.push(normalised);
      callback();
    },

    onData(stream, session, replied) {
      const callback = listener.answering(replied);
      const transaction = transactions.get(session);
      transactions.delete(session);
      readData(stream)
        .then(async (raw) => {
          if (!transaction) return callback(refusal(503, "5.5.1 Bad sequence of commands: MAIL FROM first"));
          if (stream.sizeExceeded) return callback(answer("refused", { code: 552, text: `5.3.4 Message too big: the limit is ${config.maxMessageBytes} bytes` }));
          const mail = await parseWithinLimits(raw, { keepCidLinks: true, skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true });
          if (mail === null) return callback(answer("refused", { code: 552, text: `5.3.4 Message too big for system: it has more MIME parts than a message can ${PARSER_LIMITS_TEXT}` }));
          const { principal } = transaction;
          const idempotencyKey = submissionIdempotencyKey(raw, mail, transaction.recipients);
          // A resend of a stored message is answered with it before anything is checked again
          // (MessagesService.acceptedUnder says why), as the API replays a stored answer.
          const earlier = idempotencyKey === null ? null : await messages.acceptedUnder(principal, idempotencyKey);
          if (earlier !== null) {
            log.info({ message_id: earlier, key_id: principal.credential.id, environment: principal.environment }, "submission: resent, already accepted");
            metrics.submissionMessages.inc({ outcome: "accepted" });
            return callback(null, `2.0.0 Ok: queued as ${earlier}`);
          }
          const submitted = submittedMessage(mail, transaction.recipients, transaction.refused);
          if (!submitted.ok) throw new ValidationError(submitted.errors);
          const shapeErrors = checkRequest(submitted.request);
          if (shapeErrors.length > 0) throw new ValidationError(shapeErrors);
          const message = await messages.create(principal, submitted.request, idempotencyKey);
          log.info({ message_id: message.id, key_id: principal.credential.id, environment: principal.environment, recipients: message.recipients.length }, "submission: accepted");
          metrics.submissionMessages.inc({ outcome: "accepted" });
          callback(null, `2.0.0 Ok: queued as ${message.id}`);
        })
        .catch((error: unknown) => {
          // Nobody is left to answer: the message was never whole, so nothing was stored.
          if (clientLeft(error)) return log.info({ session: session.id }, "submission: the client left during DATA");
          callback(refusalFor(error, "data"));
        });
    },

    onClose(session) {
      secrets.delete(session);
      transactions.delete(session);
    },
  });
  server.on("error", (error) => log.error({ err: error }, "submission SMTP server error"));
  const listener = await listenSmtp(server, config.host, config.port);
  return { port: listener.port, close: listener.close };

  /** The API key behind a secret, as the API authenticates every call; a dashboard token is not one. */
  async function authenticate(secret: string, session: SMTPServerSession): Promise<Principal> {
    const principal = await auth.authenticate(secret || undefined, session.remoteAddress);
    if (principal.credential.kind !== "api_key") throw new AuthenticationError();
    return principal;
  }

  /** The reply to a secret that is not (or no longer) a usable key. */
  function authRefusal(error: unknown): Error {
    if (error instanceof AuthenticationError) return refusal(535, INVALID_KEY);
    // A key used from outside its allowed_ips: the reason, as the API gives it, with AUTH's code.
    if (error instanceof DomainError) return refusal(535, replyFor(error).text);
    log.error({ err: error }, "submission: authentication failed");
    return refusal(454, "4.7.0 Temporary authentication failure, try again later");
  }
}

/**
 * The contract's schema of a createMessage body, compiled by the strict validator the HTTP door
 * checks bodies with, so a submitted message is held to exactly what an API call is.
 */
function createMessageRequestCheck(): (request: unknown) => FieldError[] {
  const validate = createValidators().compile({ schema: { $ref: "#/components/schemas/CreateMessageRequest", components: loadSpec().components }, httpPart: "body" });
  return (request) => (validate(request) ? [] : validationErrors((validate.errors ?? []) as Parameters<typeof validationErrors>[0], "body"));
}
