import type { FastifyReply, FastifyRequest } from "fastify";
import { permits, type CredentialScope, type Principal } from "../domain/environments.js";
import { InsufficientRoleError, IpNotAllowedError, PermissionDeniedError, RateLimitedError, UserTokenRequiredError } from "../domain/errors.js";
import { roleAtLeast, type Role } from "../domain/roles.js";
import type { Services } from "../runtime.js";
import type { RateLimitState } from "../services/rate-limiter.js";
import { operationIdOf } from "./route-operation.js";

declare module "fastify" {
  interface FastifyRequest {
    principal?: Principal;
    /** The known credential whose request was refused before it became the principal (allowed_ips): for the request log only. */
    refusedPrincipal?: Principal;
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

/** What a secured operation's security requirement asks of the credential (its scope). */
export function scopeNeeded(security: Array<Record<string, string[]>>): CredentialScope {
  return (security[0]?.bearerAuth?.[0] ?? "full_access") as CredentialScope;
}

/** What an operation requires of its caller: the contract's scope and least member role. */
export interface Requirement {
  scope: CredentialScope;
  minRole: Role;
}

/**
 * Throws unless the principal may call an operation: an API key by its permission (never an
 * account operation), a user access token by its member's current role.
 */
export function admit(principal: Principal, { scope, minRole }: Requirement): void {
  const { credential } = principal;
  if (credential.kind === "user_token") {
    if (!roleAtLeast(credential.role, minRole)) throw new InsufficientRoleError(minRole, credential.role);
    return;
  }
  if (scope === "user") throw new UserTokenRequiredError();
  if (!permits(credential.permission, scope)) throw new PermissionDeniedError(scope, credential.permission);
}

/**
 * Runs at onRequest, before the body is read or validated: an unauthenticated, throttled or
 * under-privileged caller learns nothing about the operation's input rules and costs no parsing
 * (a sending_access key gets 403 from updateWorkspace whatever body it sends).
 */
export function authenticateAndAdmit(services: Services) {
  return (requirement: Requirement) =>
    async function authenticate(req: FastifyRequest, reply: FastifyReply): Promise<void> {
      let principal: Principal;
      try {
        principal = await services.auth.authenticate(bearerToken(req), req.ip);
      } catch (error) {
        if (error instanceof IpNotAllowedError) req.refusedPrincipal = error.refused;
        throw error;
      }
      req.principal = principal;
      const state = await services.rateLimiter.hit(principal, req.ip ?? null);
      req.rateLimit = state;
      reply.header("ratelimit-policy", `"default";q=${state.limit};w=${state.windowSeconds}`);
      reply.header("ratelimit", `"default";r=${state.remaining};t=${state.resetSeconds}`);
      if (!state.allowed) throw new RateLimitedError(state.resetSeconds);
      admit(principal, requirement);
    };
}

/**
 * fastify-openapi-glue's security handler for `bearerAuth`. Authentication and admission already
 * happened at onRequest; this admits again (defence in depth) and fails closed if a route somehow
 * reached it unauthenticated.
 */
export function bearerAuthSecurityHandler(requirements: ReadonlyMap<string, Requirement>) {
  return async function bearerAuth(req: FastifyRequest): Promise<void> {
    const operationId = operationIdOf(req.routeOptions.config);
    const requirement = operationId === undefined ? undefined : requirements.get(operationId);
    if (!req.principal || !requirement) throw Object.assign(new Error("unauthenticated"), { statusCode: 401 });
    try {
      admit(req.principal, requirement);
    } catch (error) {
      throw Object.assign(error as Error, { statusCode: 403 });
    }
  };
}
