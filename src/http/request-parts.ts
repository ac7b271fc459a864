import type { FastifyRequest } from "fastify";
import type { Principal } from "../domain/environments.js";
import { LIMITS } from "../domain/limits.js";

/** What handlers read off a request, in one place for every handler module. */
export const principalOf = (req: FastifyRequest): Principal => {
  if (!req.principal) throw new Error("secured operation reached without a principal"); // the glue's security handler prevents this
  return req.principal;
};

export const pageOf = (query: { limit?: number; after?: string }) => ({ limit: query.limit ?? LIMITS.pageSizeDefault, after: query.after });
