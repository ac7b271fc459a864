import Fastify, { errorCodes, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import openapiGlue from "fastify-openapi-glue";
import { stdSerializers } from "pino";
import { isAudited } from "./domain/audit.js";
import { ValidationError } from "./domain/errors.js";
import { LIMITS } from "./domain/limits.js";
import { newId } from "./domain/ids.js";
import { REDACTED, redactRequestUrl } from "./domain/redact.js";
import { noteGivenFields, recordAuditedChange } from "./http/audit.js";
import { authenticateAndAdmit, bearerAuthSecurityHandler, scopeNeeded, type Requirement } from "./http/auth-hooks.js";
import { batchItemValidators, relaxBatchItems } from "./http/batch.js";
import { AllowedMethods } from "./http/allowed-methods.js";
import { closedQuerySchema } from "./http/closed-query.js";
import { answerClientError } from "./http/client-errors.js";
import { checkBindings, operationsOf } from "./http/bindings.js";
import { createHandlers } from "./http/handlers.js";
import type { Lifecycle } from "./http/readiness.js";
import { storeIdempotentResponse, withIdempotency } from "./http/idempotency.js";
import { registerAuthRoutes } from "./http/auth-routes.js";
import { registerDashboard } from "./http/dashboard-routes.js";
import { registerMetaRoutes } from "./http/meta-routes.js";
import { registerRequestLog } from "./http/request-log.js";
import { registerTrackingRoutes } from "./http/tracking-routes.js";
import { problem, sendProblem, toProblem } from "./http/problems.js";
import { unreadableValue } from "./http/json-values.js";
import { jsonBodyText, refuseContentEncoding } from "./http/json-body.js";
import { prototypeKeyPointer } from "./http/prototype-keys.js";
import { loadSpec } from "./http/spec.js";
import { refuseMalformedPathIds } from "./http/path-ids.js";
import { bodyPresence, createValidators } from "./http/validation.js";
import { serializerCompiler } from "./http/serializers.js";
import type { Runtime } from "./runtime.js";
import { operationIdOf } from "./http/route-operation.js";

export interface AppOptions {
  runtime: Runtime;
  lifecycle?: Lifecycle;
  /**
   * false for no logs, or a level (default: the configured one) and where to write (default:
   * stdout; tests pass an in-memory stream). Redaction applies whatever is passed.
   */
  logger?: false | { level?: string; stream?: { write(line: string): void } };
  /** The built dashboard to serve at `/` (default: dashboard/dist). */
  dashboardDir?: string;
}

/** Secrets never reach the logs, whatever a future serializer or log call decides to include. */
export const LOG_REDACTION = { paths: ["req.headers.authorization", "req.headers.cookie", "headers.authorization", "headers.cookie", "*.secret"], censor: REDACTED };

/**
 * Fastify's request serializer (the "incoming request" line), with the URL as redactRequestUrl
 * gives it: an invitation's link carries its secret in the path, beyond the reach of `redact`.
 */
const LOG_SERIALIZERS = {
  // Whatever a log call passes as `req` comes here, a request or not: hence Partial.
  req: (req: Partial<FastifyRequest>) => ({ method: req.method, url: typeof req.url === "string" ? redactRequestUrl(req.url) : undefined, host: req.host, remoteAddress: req.ip, remotePort: req.socket?.remotePort }),
  err: logError,
};

/** A database error's statement with its values inlined (mysql2's `sql`) or the values themselves (`bindings`). */
const STATEMENT_FIELDS = ["sql", "bindings"];

/**
 * pino's error serializer, without the statement a database error carries: mysql2 puts the query
 * with every value inlined on its errors, so a deadlock while storing a message would log its
 * body and recipients, a failed password change the new hash. What went wrong (message, code,
 * sqlState) stays. Nested errors (pino serializes error-valued fields and AggregateError's list)
 * are stripped too. For every logger of the process (main.ts uses it too).
 */
export function logError(err: Error): ReturnType<typeof stdSerializers.err> {
  const serialized = stdSerializers.err(err);
  // Not an error (a log call may pass anything as `err`): left as pino leaves it.
  if ((serialized as unknown) === err || serialized === null || typeof serialized !== "object") return serialized;
  // Only the serializer's own copies are changed: the fields they share with the error are the error's objects.
  const copy = Object.getPrototypeOf(serialized) as unknown;
  const strip = (value: unknown): void => {
    if (Array.isArray(value)) for (const item of value) strip(item);
    else if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === copy) {
      for (const field of STATEMENT_FIELDS) delete (value as Record<string, unknown>)[field];
      for (const nested of Object.values(value)) strip(nested);
    }
  };
  strip(serialized);
  return serialized;
}

/**
 * What Node needs beside `requestTimeout` for it to hold: Node silently skips the request limit
 * while the headers' limit (60 s by default) is longer, and checks both on a timer (30 s by
 * default), so a short limit is checked more often to mean what it says.
 */
function nodeTimeouts(requestTimeoutMs: number): { headersTimeout: number; connectionsCheckingInterval: number } {
  if (requestTimeoutMs === 0) return { headersTimeout: 60_000, connectionsCheckingInterval: 30_000 };
  return { headersTimeout: Math.min(60_000, requestTimeoutMs), connectionsCheckingInterval: Math.min(30_000, Math.max(250, Math.floor(requestTimeoutMs / 4))) };
}

type AnyHandler = (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/** Builds the HTTP application (no listen): validation, errors, the contract's routes, security. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { runtime, lifecycle = { ready: true }, logger } = options;
  const { config, services, metrics } = runtime;
  const app = Fastify({
    logger: logger === false ? false : { level: logger?.level ?? config.logLevel, redact: LOG_REDACTION, serializers: LOG_SERIALIZERS, ...(logger?.stream ? { stream: logger.stream } : {}) },
    // The runtime's clock, like every other id: ids share one monotonic sequence per process, so
    // mixing clocks (a test's manual clock and Date.now) would break id order within a millisecond.
    genReqId: () => newId("request", runtime.clock.now()),
    requestIdHeader: false,
    bodyLimit: config.bodyLimitBytes,
    // Fastify's default is no limit at all: a client trickling a body would hold its connection
    // for ever.
    requestTimeout: config.requestTimeoutMs,
    http: nodeTimeouts(config.requestTimeoutMs),
    // Behind a reverse proxy every client would otherwise be the proxy (TRUST_PROXY).
    trustProxy: config.trustProxy,
    return503OnClosing: true,
    // Long path segments reach validation (a clear 422 naming the parameter) instead of the
    // router's bare 414.
    routerOptions: { maxParamLength: 1000 },
    // What Fastify rejects before routing (a malformed URL, an over-long path segment) skips the
    // hooks and the error handler; it gets the same problem document and request-id all else does.
    frameworkErrors: (error, req, reply) => {
      reply.header("request-id", req.id);
      return sendProblem(reply, toProblem(error, req).problem);
    },
    // And what Node's HTTP parser refuses before Fastify sees a request at all.
    clientErrorHandler: (error, socket) => answerClientError(error, socket, newId("request", runtime.clock.now())),
  });

  const validators = createValidators();
  app.setValidatorCompiler((route) => validators.compile(route));
  app.setSerializerCompiler(serializerCompiler);

  // An empty JSON body means "no body" (rotateApiKey's body is optional); anything else must parse.
  const defaultJson = app.getDefaultJsonParser("error", "error");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (req, raw, done) => {
    let body: string;
    try {
      refuseContentEncoding(req.headers);
      body = jsonBodyText(raw as Buffer);
    } catch (error) {
      return done(error as Error, undefined);
    }
    if (body === "") return done(null, undefined);
    defaultJson(req, body, (error, parsed) => {
      // The parser refuses a __proto__ or constructor.prototype key (prototype poisoning) as if the
      // body were not JSON; it is JSON, refused on purpose, so the answer names the key.
      const pointer = error ? prototypeKeyPointer(body) : null;
      if (pointer !== null) return done(ValidationError.field(pointer, "is a key no request body may use (it could reach an object's prototype)"), undefined);
      const unreadable = error ? null : unreadableValue(parsed, LIMITS.bodyDepth);
      if (unreadable !== null) return done(ValidationError.field(unreadable.pointer, unreadable.message), undefined);
      done(error, parsed);
    });
  });
  // Request bodies are application/json only. Body schemas are keyed by media type, so a body of
  // any other type that Fastify could parse would reach the handlers unvalidated: Fastify's
  // built-in text/plain parser goes, and everything else is 415 unsupported_media_type.
  app.removeContentTypeParser("text/plain");
  // The contract names application/problem+json (responses only); the glue warns at boot unless
  // a parser exists for every type the contract names. This one only refuses such bodies.
  app.addContentTypeParser("application/problem+json", (req, _payload, done) => done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(String(req.headers["content-type"])), undefined));

  app.addHook("onRequest", async (req, reply) => {
    reply.header("request-id", req.id);
  });
  app.addHook("onResponse", async (req, reply) => {
    const operation = operationIdOf(req.routeOptions.config) ?? "unmatched";
    metrics.httpRequests.inc({ operation, status: String(reply.statusCode) });
    metrics.httpDuration.observe({ operation }, reply.elapsedTime / 1000);
  });
  registerRequestLog(app, services.requestLogs);

  // A known path with an undeclared method is 405 with Allow (RFC 9110 §15.5.6); others are 404.
  const spec = loadSpec();
  const allowedMethods = new AllowedMethods(spec);
  const bodySchemas = new Map<string, object>();
  app.addHook("onRoute", (route) => {
    allowedMethods.addRoute(route.url, route.method);
    const operationId = operationIdOf(route.config);
    if (operationId !== undefined && route.url.startsWith("/v1/")) route.schema = { ...route.schema, querystring: closedQuerySchema(route.schema?.querystring, operationId) };
    const body = route.schema?.body as { content?: Record<string, { schema?: object }> } | undefined;
    const schema = body?.content ? body.content["application/json"]?.schema : body;
    if (operationId !== undefined && schema !== undefined) bodySchemas.set(operationId, schema);
  });
  const unmatchedRoute = (req: FastifyRequest, reply: FastifyReply) => {
    const path = req.url.split("?", 1)[0]!;
    const allowed = allowedMethods.of(path);
    if (allowed === null) return problem(404, "not_found", "Not found", `No route ${req.method} ${path}.`, req.id);
    reply.header("allow", allowed.join(", "));
    return problem(405, "method_not_allowed", "Method not allowed", `${path} allows ${allowed.join(", ")}.`, req.id);
  };

  // Fastify's router lets a path parameter be empty, so /v1/messages/ would be getMessage with
  // an empty id (a 422 about the id's length) while /v1/events/ is no route: both are the route
  // that is not there, before authentication as any unknown path is.
  app.addHook("onRequest", async (req, reply) => {
    const operationId = operationIdOf(req.routeOptions.config);
    if (operationId === undefined || !Object.values(req.params as Record<string, string>).includes("")) return;
    return sendProblem(reply, unmatchedRoute(req, reply));
  });

  app.setErrorHandler((error, req, reply) => {
    // Errors raised while serving an unmatched route (Fastify parses bodies even then) are
    // answered as the unmatched route they are.
    if (req.is404) return sendProblem(reply, unmatchedRoute(req, reply));
    const { problem: body, retryAfter } = toProblem(error, req);
    if (body.status >= 500) req.log.error({ err: error }, "request failed");
    return sendProblem(reply, body, retryAfter);
  });
  const dashboardPage = registerDashboard(app, options.dashboardDir);
  app.setNotFoundHandler((req, reply) => dashboardPage(req, reply) ?? sendProblem(reply, unmatchedRoute(req, reply)));

  const operations = new Map(operationsOf(spec).map((op) => [op.operationId, op]));
  const requirements = new Map<string, Requirement>();
  for (const op of operations.values()) if (op.security.length > 0 && op.minRole) requirements.set(op.operationId, { scope: scopeNeeded(op.security), minRole: op.minRole });

  const bodySchemaOf = (operationId: string) => {
    const schema = bodySchemas.get(operationId);
    if (schema === undefined) throw new Error(`no route with a body schema for ${operationId}`);
    return schema;
  };
  const validateBatchItems = batchItemValidators(bodySchemaOf, (route) => validators.compile(route));
  const handlers = createHandlers(services, lifecycle, runtime.repositories.ping, { publicUrl: config.publicUrl }, validateBatchItems) as unknown as Record<string, AnyHandler>;
  const securityHandlers = { bearerAuth: bearerAuthSecurityHandler(requirements) };
  checkBindings(spec, handlers, securityHandlers);

  const authenticate = authenticateAndAdmit(services);
  const store = storeIdempotentResponse(services.idempotency);
  const routeSpec = structuredClone(spec);
  relaxBatchItems(routeSpec);
  await app.register(openapiGlue, {
    specification: routeSpec,
    securityHandlers,
    // The glue's type wants full route options; it fills in method, url and schema itself.
    operationResolver: ((operationId: string) => {
      const op = operations.get(operationId)!;
      const handler = handlers[operationId]!;
      const requirement = requirements.get(operationId);
      const isPost = op.method === "post";
      return {
        handler: isPost ? withIdempotency(operationId, services.idempotency, handler) : handler,
        config: { operationId },
        ...(requirement ? { onRequest: authenticate(requirement) } : {}),
        preHandler: refuseMalformedPathIds,
        ...(op.body !== "none" ? { preValidation: isAudited(operationId) ? [bodyPresence(op.body), noteGivenFields] : bodyPresence(op.body) } : {}),
        ...(isPost ? { onSend: store } : {}),
        ...(isAudited(operationId) ? { preSerialization: recordAuditedChange(operationId, services.auditLog) } : {}),
      };
    }) as never,
  });
  registerMetaRoutes(app, metrics);
  registerAuthRoutes(app, services, config.publicUrl);
  registerTrackingRoutes(app, services);
  return app;
}
