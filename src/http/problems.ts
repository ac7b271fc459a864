import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { isDatabaseUnavailable } from "../db/driver-errors.js";
import { DomainError, INVALID_CREDENTIAL_DETAIL, type FieldError } from "../domain/errors.js";
import { validationErrors } from "./validation.js";

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  request_id: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

const STATUS_BY_KIND: Record<DomainError["kind"], number> = {
  bad_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  unprocessable: 422,
  unsupported_media: 415,
  rate_limited: 429,
  gone: 410,
  unavailable: 503,
};

/** Fastify's own errors that are the client's doing, mapped to stable codes. */
const FASTIFY_ERRORS: Record<string, { status: number; code: string; title: string; detail: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: "invalid_json", title: "Malformed JSON", detail: "The request body is not valid JSON." },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: "invalid_json", title: "Malformed JSON", detail: "The request body is empty but its Content-Type says JSON." },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: "payload_too_large", title: "Payload too large", detail: "The request body is larger than this server accepts." },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, code: "unsupported_media_type", title: "Unsupported media type", detail: "Send the request body as application/json." },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: "invalid_request", title: "Invalid request", detail: "The Content-Length does not match the body." },
  FST_ERR_CTP_INVALID_TYPE: { status: 400, code: "invalid_request", title: "Invalid request", detail: "The Content-Type header is not valid." },
  FST_ERR_BAD_URL: { status: 400, code: "invalid_request", title: "Invalid request", detail: "The URL is not valid." },
  FST_ERR_MAX_PARAM_LENGTH: { status: 400, code: "invalid_request", title: "Invalid request", detail: "A path segment of the URL is longer than any id." },
};

export function problem(status: number, code: string, title: string, detail: string, requestId: string, extra: Record<string, unknown> = {}): Problem {
  return { type: `https://mailroom.dev/problems/${code}`, title, status, detail, code, request_id: requestId, ...extra };
}

/** The one place any error becomes an RFC 9457 answer. Unknown errors never leak. */
export function toProblem(error: unknown, req: FastifyRequest): { problem: Problem; retryAfter?: number } {
  if (isDatabaseUnavailable(error)) {
    return { problem: problem(503, "service_unavailable", "Service unavailable", "The database does not answer right now; nothing was stored. Retry shortly.", req.id), retryAfter: 1 };
  }
  const domain = unwrapSecurityError(error);
  if (domain instanceof DomainError) {
    const extra = { ...domain.extra.extensions, ...(domain.extra.errors ? { errors: domain.extra.errors } : {}) };
    const result: { problem: Problem; retryAfter?: number } = { problem: problem(STATUS_BY_KIND[domain.kind], domain.code, domain.title, domain.message, req.id, extra) };
    if (domain.extra.retryAfterSeconds !== undefined) result.retryAfter = domain.extra.retryAfterSeconds;
    return result;
  }
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const errors = validationErrors(fastifyError.validation, fastifyError.validationContext);
    const detail = errors.length === 1 ? `${errors[0]!.pointer || errors[0]!.location}: ${errors[0]!.message}` : `${errors.length} fields are invalid.`;
    return { problem: problem(422, "validation_failed", "Validation failed", detail, req.id, { errors }) };
  }
  const known = fastifyError.code ? FASTIFY_ERRORS[fastifyError.code] : undefined;
  if (known) return { problem: problem(known.status, known.code, known.title, known.detail, req.id) };
  // Any other client error Fastify raises is still the client's: keep its status, not a 500.
  if (fastifyError.code?.startsWith("FST_") && fastifyError.statusCode !== undefined && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500 && fastifyError.statusCode !== 401) {
    return { problem: problem(fastifyError.statusCode, "invalid_request", "Invalid request", "The request could not be processed as sent.", req.id) };
  }
  if (fastifyError.statusCode === 401) {
    return { problem: problem(401, "invalid_api_key", "Invalid API key", INVALID_CREDENTIAL_DETAIL, req.id) };
  }
  return { problem: problem(500, "internal_error", "Internal error", `Something went wrong on our side. Quote request ${req.id} when you report it.`, req.id) };
}

export function sendProblem(reply: FastifyReply, body: Problem, retryAfter?: number): FastifyReply {
  if (retryAfter !== undefined) reply.header("retry-after", String(retryAfter));
  if (body.status === 401) reply.header("www-authenticate", 'Bearer realm="mailroom"');
  return reply.code(body.status).type("application/problem+json").send(body);
}

/** fastify-openapi-glue wraps security failures; the first domain error inside is the answer. */
function unwrapSecurityError(error: unknown): unknown {
  const inner = (error as { errors?: unknown[] }).errors;
  if (Array.isArray(inner)) return inner.find((e) => e instanceof DomainError) ?? error;
  return error;
}
