import type { FastifyRequest } from "fastify";
import type { Principal } from "../domain/environments.js";
import { LIMITS } from "../domain/limits.js";

/** What handlers read off a request, in one place for every handler module. */
export const principalOf = (req: FastifyRequest): Principal => {
  if (!req.principal) throw new Error("secured operation reached without a principal"); // the glue's security handler prevents this
  return req.principal;
};

export const pageOf = (query: { limit?: number; after?: string }) => ({ limit: query.limit ?? LIMITS.pageSizeDefault, after: query.after });

/** A `status` filter as a range: `422` is itself, `4xx` is 400-499 (the contract's pattern allows nothing else). */
export const statusRange = (value: string | undefined): { min: number; max: number } | undefined => {
  if (value === undefined) return undefined;
  const exact = value.endsWith("xx") ? null : Number(value);
  return exact === null ? { min: Number(value[0]) * 100, max: Number(value[0]) * 100 + 99 } : { min: exact, max: exact };
};
