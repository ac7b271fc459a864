import type { FastifyReply, FastifyRequest } from "fastify";
import type { AuditedOperation } from "../domain/audit.js";
import type { AuditLogService } from "../services/audit-log.js";

/**
 * What a handler knows of its change that the request does not say: the fields it changed, or
 * none at all (a PATCH giving the values the resource has). Absent: the request's fields.
 */
const changedFields = new WeakMap<FastifyRequest, readonly string[]>();

/** The audit event of this request names these fields; none: it changed nothing, and is not recorded. */
export function auditChangedFields(req: FastifyRequest, fields: readonly string[]): void {
  changedFields.set(req, fields);
}

/**
 * The body's fields as the caller gave them, before validation fills in the contract's defaults
 * (`enabled`, `publish`, …), which the caller did not ask for.
 */
const givenFields = new WeakMap<FastifyRequest, readonly string[]>();

/** preValidation for an audited operation that takes a body: notes the fields it was given. */
export async function noteGivenFields(req: FastifyRequest): Promise<void> {
  givenFields.set(req, fieldsOf(req.body));
}

/** This request succeeded without changing anything (e.g. publishing what is published): no audit event. */
export function auditNothingChanged(req: FastifyRequest): void {
  changedFields.set(req, []);
}

/**
 * preSerialization for an audited operation: once its handler has succeeded, records the change
 * (docs/audit-log.md) before the answer leaves, so a client that saw the 2xx can find the change
 * in the log. A replayed idempotent answer is sent as stored bytes, which skip this hook: a
 * change is recorded once, however often its answer is replayed.
 */
export function recordAuditedChange(operation: AuditedOperation, auditLog: AuditLogService) {
  return async function audit(req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    if (reply.statusCode >= 300 || !req.principal) return payload;
    const fields = changedFields.get(req) ?? givenFields.get(req) ?? [];
    // A success that changed nothing is no change to record: the log would show a phantom one.
    if (changedFields.has(req) && fields.length === 0) return payload;
    try {
      await auditLog.record(req.principal, { operation, targetId: targetIdOf(req, payload), fields: [...fields], ipAddress: req.ip ?? null, requestId: req.id });
    } catch (err) {
      // The change itself is committed; failing the answer would invite a retry that repeats it.
      req.log.error({ err, operation }, "could not record the audit event");
    }
    return payload;
  };
}

/**
 * What was changed: the answer's id (a create's new object), else the path's id (a member's user
 * id, a secret's endpoint), else the user id of the member answered (leaving names no one in its path).
 */
function targetIdOf(req: FastifyRequest, payload: unknown): string | null {
  const answered = (payload as { id?: unknown } | null)?.id;
  if (typeof answered === "string") return answered;
  const addressed = Object.values((req.params ?? {}) as Record<string, unknown>).find((value) => typeof value === "string");
  if (typeof addressed === "string") return addressed;
  const member = (payload as { user_id?: unknown } | null)?.user_id;
  return typeof member === "string" ? member : null;
}

/** The request body's top-level field names: what the caller asked to change, never the values. */
function fieldsOf(body: unknown): string[] {
  return body !== null && typeof body === "object" && !Array.isArray(body) ? Object.keys(body).sort() : [];
}
