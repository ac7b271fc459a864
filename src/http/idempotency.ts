import type { FastifyReply, FastifyRequest } from "fastify";
import { actorOf, type Scope } from "../domain/environments.js";
import { IdempotencyService } from "../services/idempotency.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The claimed Idempotency-Key; `resumed` when taken over from an earlier attempt that never answered. */
    idempotency?: { scope: Scope; key: string; claimToken: string; resumed: boolean };
  }
}

/** Response headers that belong to the stored answer (the rest are per-response). */
const REPLAYED_HEADERS = ["content-type", "location"];

/**
 * The Idempotency-Key value: a bare token (Stripe style) or an RFC 8941 sf-string, as the IETF
 * draft specifies; null when absent. Its shape was validated against the contract's pattern
 * before the handler runs, so this only unquotes.
 */
function idempotencyKeyOf(req: FastifyRequest): string | null {
  const raw = req.headers["idempotency-key"];
  if (typeof raw !== "string") return null;
  const value = raw.trim();
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1).replace(/\\(["\\])/g, "$1") : value;
}

/**
 * Wraps a POST handler: claims the key before the handler runs, replays a finished answer, and
 * lets `storeIdempotentResponse` (onSend) record the final bytes.
 */
export function withIdempotency<R extends FastifyRequest>(operationId: string, service: IdempotencyService, handler: (req: R, reply: FastifyReply) => Promise<unknown>) {
  return async function idempotent(req: R, reply: FastifyReply): Promise<unknown> {
    const key = idempotencyKeyOf(req);
    if (key === null || !req.principal) return handler(req, reply);
    const scope = { workspaceId: req.principal.workspaceId, environment: req.principal.environment };
    const path = req.url.split("?", 1)[0]!;
    const claim = await service.claim(scope, key, IdempotencyService.fingerprint(operationId, path, req.body), actorOf(req.principal.credential));
    if (claim.kind === "replay") {
      const { status, headers, body } = claim.response;
      for (const [name, value] of Object.entries(headers)) reply.header(name, value);
      return reply.code(status).header("idempotent-replayed", "true").send(body);
    }
    req.idempotency = { scope, key, claimToken: claim.claimToken, resumed: claim.resumed };
    const letGo = service.holdLock(scope, key, claim.claimToken, (err) => req.log.error({ err }, "could not renew idempotency claim"));
    try {
      return await handler(req, reply);
    } finally {
      letGo();
    }
  };
}

/**
 * onSend: stores what is being sent for a claimed key, byte for byte, before it leaves. Answers
 * of 5xx, validation failures, the monthly quota's 429 and any answer asking for a retry
 * (Retry-After) are not stored: the claim is released so a retry runs again.
 */
export function storeIdempotentResponse(service: IdempotencyService) {
  return async function store(req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const claim = req.idempotency;
    if (!claim) return payload;
    req.idempotency = undefined;
    // Like Stripe: a request refused by validation (422) changed nothing, so it is not kept;
    // the client fixes the request (or the workspace's settings) and retries with the same key.
    // Nor is a 429 (the monthly quota; the rate limit answers before the claim), nor any answer
    // with Retry-After (a 409 domain_changed, a race lost): each changed nothing and tells the
    // client to retry, which must then run again, not replay the refusal.
    const retryLater = reply.statusCode === 429 || reply.getHeader("retry-after") !== undefined;
    if (reply.statusCode >= 500 || reply.statusCode === 422 || retryLater || typeof payload !== "string") {
      await service.release(claim.scope, claim.key, claim.claimToken).catch((err: unknown) => req.log.error({ err }, "could not release idempotency claim"));
      return payload;
    }
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const value = reply.getHeader(name);
      if (value !== undefined) headers[name] = String(value);
    }
    try {
      const kept = await service.complete(claim.scope, claim.key, claim.claimToken, { status: reply.statusCode, headers, body: payload });
      if (!kept) req.log.warn({ bytes: Buffer.byteLength(payload) }, "idempotent response too large to keep: a retry answers the stored messages as they are then");
    } catch (err) {
      // The work itself is durable; a retry after the lock expires finds the same message
      // through its unique Idempotency-Key, so failing to store the answer loses nothing.
      req.log.error({ err }, "could not store idempotent response");
    }
    return payload;
  };
}
