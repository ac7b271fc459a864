import type { FastifyRequest } from "fastify";

/** Where people reach this server: PUBLIC_URL, or the origin the request was made to. */
export function publicOrigin(req: FastifyRequest, publicUrl: string | null): string {
  return publicUrl ?? `${req.protocol}://${req.host}`;
}
