import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import openapiGlue from "fastify-openapi-glue";
import { newId } from "./domain/ids.js";
import { authenticateAndAdmit, bearerAuthSecurityHandler } from "./http/auth-hooks.js";
import { checkBindings, operationsOf } from "./http/bindings.js";
import { createHandlers, type Lifecycle } from "./http/handlers.js";
import { storeIdempotentResponse, withIdempotency } from "./http/idempotency.js";
import { registerMetaRoutes } from "./http/meta-routes.js";
import { problem, sendProblem, toProblem } from "./http/problems.js";
import { loadSpec } from "./http/spec.js";
import { createValidators } from "./http/validation.js";
import type { Runtime } from "./runtime.js";

export interface AppOptions {
  runtime: Runtime;
  lifecycle?: Lifecycle;
  /** pino options or false; defaults to the configured level. */
  logger?: boolean | Record<string, unknown>;
}

type AnyHandler = (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/** Builds the HTTP application (no listen): validation, errors, the contract's routes, security. */
export async function buildApp({ runtime, lifecycle = { ready: true }, logger }: AppOptions): Promise<FastifyInstance> {
  const { config, services, metrics } = runtime;
  const app = Fastify({
    logger: logger ?? {
      level: config.logLevel,
      // Secrets never reach the logs, whatever a future serializer decides to include.
      redact: { paths: ["req.headers.authorization", "req.headers.cookie", "headers.authorization", "*.secret"], censor: "[redacted]" },
    },
    genReqId: () => newId("request"),
    requestIdHeader: false,
    bodyLimit: config.bodyLimitBytes,
    return503OnClosing: true,
  });

  const validators = createValidators();
  app.setValidatorCompiler((route) => validators.compile(route));

  // An empty JSON body means "no body" (rotateApiKey's body is optional); anything else must parse.
  const defaultJson = app.getDefaultJsonParser("error", "error");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (req, body, done) => {
    if (body === "") return done(null, undefined);
    defaultJson(req, body as string, done);
  });
  // The contract names application/problem+json (responses); the glue warns at boot unless a
  // parser for every named type exists. Problem documents sent as bodies parse as JSON.
  app.addContentTypeParser("application/problem+json", { parseAs: "string" }, (req, body, done) => defaultJson(req, body as string, done));

  app.addHook("onRequest", async (req, reply) => {
    reply.header("request-id", req.id);
  });
  app.addHook("onResponse", async (req, reply) => {
    const operation = (req.routeOptions.config as { operationId?: string } | undefined)?.operationId ?? "unmatched";
    metrics.httpRequests.inc({ operation, status: String(reply.statusCode) });
    metrics.httpDuration.observe({ operation }, reply.elapsedTime / 1000);
  });

  app.setErrorHandler((error, req, reply) => {
    const { problem: body, retryAfter } = toProblem(error, req);
    if (body.status >= 500) req.log.error({ err: error }, "request failed");
    return sendProblem(reply, body, retryAfter);
  });
  app.setNotFoundHandler((req, reply) => sendProblem(reply, problem(404, "not_found", "Not found", `No route ${req.method} ${req.url.split("?", 1)[0]}.`, req.id)));

  const spec = loadSpec();
  const handlers = createHandlers(services, lifecycle, runtime.repositories.ping) as unknown as Record<string, AnyHandler>;
  const securityHandlers = { bearerAuth: bearerAuthSecurityHandler() };
  checkBindings(spec, handlers, securityHandlers);

  const operations = new Map(operationsOf(spec).map((op) => [op.operationId, op]));
  const authenticate = authenticateAndAdmit(services);
  const store = storeIdempotentResponse(services.idempotency);
  await app.register(openapiGlue, {
    specification: structuredClone(spec),
    securityHandlers,
    // The glue's type wants full route options; it fills in method, url and schema itself.
    operationResolver: ((operationId: string) => {
      const op = operations.get(operationId)!;
      const handler = handlers[operationId]!;
      const secured = op.security.length > 0;
      const isPost = op.method === "post";
      return {
        handler: isPost ? withIdempotency(operationId, services.idempotency, handler) : handler,
        config: { operationId },
        ...(secured ? { onRequest: authenticate } : {}),
        ...(isPost ? { onSend: store } : {}),
      };
    }) as never,
  });
  registerMetaRoutes(app, metrics);
  return app;
}
