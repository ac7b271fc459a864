import type { FastifyInstance, FastifyRequest } from "fastify";
import { timeOfId } from "../domain/ids.js";
import type { RequestLogService } from "../services/request-logs.js";
import { operationIdOf } from "./route-operation.js";

/** Reading the log is not logged: a page that polls it would otherwise fill it with itself. */
const UNLOGGED = new Set(["listRequestLogs", "getRequestLog"]);
/** A problem kept in an entry: past this, its field errors are cut to fit (a batch may fail hundreds). */
const MAX_PROBLEM_BYTES = 8 * 1024;
const MAX_PATH = 1024;
const MAX_USER_AGENT = 300;

/**
 * Hooks that give every authenticated /v1 request an entry in the request log
 * (docs/request-log.md) once it is answered, and every request of a known key refused for its
 * address. A request whose credential was not recognised has no workspace to be logged in, and
 * is not.
 */
export function registerRequestLog(app: FastifyInstance, requestLogs: RequestLogService): void {
  if (!requestLogs.enabled) return;
  // The problem answered, as it was sent; only onSend sees the serialized answer.
  const problems = new WeakMap<FastifyRequest, string>();
  app.addHook("onSend", async (req, reply, payload) => {
    if (reply.statusCode >= 400 && (req.principal ?? req.refusedPrincipal) && typeof payload === "string" && String(reply.getHeader("content-type")).startsWith("application/problem+json")) problems.set(req, payload);
    return payload;
  });
  app.addHook("onResponse", async (req, reply) => {
    const operation = operationIdOf(req.routeOptions.config) ?? null;
    // A known key refused for its caller's address is logged too: it is the first sign of a leaked key.
    const principal = req.principal ?? req.refusedPrincipal;
    if (!principal || (operation !== null && UNLOGGED.has(operation))) return;
    const problem = parseProblem(problems.get(req));
    const idempotencyKey = req.headers["idempotency-key"];
    requestLogs.record(principal, {
      id: req.id,
      method: req.method,
      path: req.url.split("?", 1)[0]!.slice(0, MAX_PATH),
      operation,
      status: reply.statusCode,
      error_code: typeof problem?.code === "string" ? problem.code : null,
      error: problem === null ? null : fittedProblem(problem),
      duration_ms: Math.round(reply.elapsedTime * 100) / 100,
      ip_address: req.ip ?? null,
      user_agent: req.headers["user-agent"]?.slice(0, MAX_USER_AGENT) ?? null,
      idempotency_key: typeof idempotencyKey === "string" ? idempotencyKey.slice(0, 255) : null,
      idempotent_replayed: reply.getHeader("idempotent-replayed") === "true",
      // The request id was made from the clock as the request arrived.
      created_at: timeOfId(req.id, "request") ?? Date.now(),
    });
  });
}

function parseProblem(text: string | undefined): Record<string, unknown> | null {
  if (text === undefined) return null;
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The problem as JSON text within MAX_PROBLEM_BYTES: its first field errors, as many as fit. */
export function fittedProblem(problem: Record<string, unknown>): string {
  const whole = JSON.stringify(problem);
  if (Buffer.byteLength(whole) <= MAX_PROBLEM_BYTES) return whole;
  const errors: unknown[] = Array.isArray(problem.errors) ? problem.errors : [];
  const kept: unknown[] = [];
  let size = Buffer.byteLength(JSON.stringify({ ...problem, errors: [] }));
  for (const error of errors) {
    size += Buffer.byteLength(JSON.stringify(error)) + 1; // and its comma
    if (size > MAX_PROBLEM_BYTES) break;
    kept.push(error);
  }
  const cut = JSON.stringify({ ...problem, errors: kept });
  // Without errors it is still too long (a detail of kilobytes): its identity alone.
  return Buffer.byteLength(cut) <= MAX_PROBLEM_BYTES ? cut : JSON.stringify({ type: problem.type, title: problem.title, status: problem.status, code: problem.code, request_id: problem.request_id });
}
