import type { FastifyReply, FastifyRequest } from "fastify";
import { permits, type Permission, type Principal } from "../domain/environments.js";
import { PermissionDeniedError, RateLimitedError } from "../domain/errors.js";
import type { Services } from "../runtime.js";
import type { RateLimitState } from "../services/rate-limiter.js";

declare module "fastify" {
  interface FastifyRequest {
    principal?: Principal;
    rateLimit?: RateLimitState;
  }
}

/** The bearer token of an `Authorization` header, if it has that shape. */
export function bearerToken(req: FastifyRequest): string | undefined {
  const header = req.headers.authorization;
  if (typeof header !== "string") return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/** The least permission a secured operation's security requirements name (its scope). */
export function permissionNeeded(security: Array<Record<string, string[]>>): Permission {
  return (security[0]?.bearerAuth?.[0] ?? "full_access") as Permission;
}

/**
 * Runs at onRequest, before the body is read or validated: an unauthenticated, throttled or
 * under-privileged caller learns nothing about the operation's input rules and costs no parsing
 * (a sending_access key gets 403 from updateWorkspace whatever body it sends).
 */
export function authenticateAndAdmit(services: Services) {
  return (needed: Permission) =>
    async function authenticate(req: FastifyRequest, reply: FastifyReply): Promise<void> {
      const principal = await services.auth.authenticate(bearerToken(req));
      req.principal = principal;
      const state = await services.rateLimiter.hit(principal);
      req.rateLimit = state;
      reply.header("ratelimit-policy", `"default";q=${state.limit};w=${state.windowSeconds}`);
      reply.header("ratelimit", `"default";r=${state.remaining};t=${state.resetSeconds}`);
      if (!state.allowed) throw new RateLimitedError(state.resetSeconds);
      if (!permits(principal.permission, needed)) throw new PermissionDeniedError(needed, principal.permission);
    };
}

/**
 * fastify-openapi-glue's security handler for `bearerAuth`. Authentication and the permission
 * check already happened at onRequest; this repeats the scope check and fails closed if a route
 * somehow reached it unauthenticated.
 */
export function bearerAuthSecurityHandler() {
  return async function bearerAuth(req: FastifyRequest, _reply: FastifyReply, scopes: string[]): Promise<void> {
    const principal = req.principal;
    if (!principal) throw Object.assign(new Error("unauthenticated"), { statusCode: 401 });
    const needed = (scopes[0] ?? "full_access") as Permission;
    if (!permits(principal.permission, needed)) throw Object.assign(new PermissionDeniedError(needed, principal.permission), { statusCode: 403 });
  };
}
