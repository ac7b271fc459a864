import type {} from "@fastify/cookie"; // its request.cookies / reply.setCookie typings
import type { FastifyReply, FastifyRequest } from "fastify";

/**
 * The dashboard's cookies. `__Host-` names (RFC 6265bis) bind a cookie to this exact origin:
 * Secure, Path=/, no Domain, so neither a sibling subdomain nor plain HTTP can plant or read
 * it. Browsers grant Secure cookies only on HTTPS and on loopback (a secure context), so plain
 * HTTP elsewhere falls back to unprefixed names without Secure (docs/dashboard.md).
 */
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** Whether browsers treat an origin as a secure context: HTTPS, or plain HTTP on loopback. */
export function isSecureOrigin(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  return protocol === "https:" || LOOPBACK.has(hostname);
}

export function isSecureContext(req: FastifyRequest, publicUrl: string | null): boolean {
  if (publicUrl) return isSecureOrigin(publicUrl);
  return req.protocol === "https" || LOOPBACK.has(req.hostname);
}

export type CookieKind = "session" | "csrf";

export class DashboardCookies {
  constructor(private readonly publicUrl: string | null) {}

  name(req: FastifyRequest, kind: CookieKind): string {
    return isSecureContext(req, this.publicUrl) ? `__Host-mailroom_${kind}` : `mailroom_${kind}`;
  }

  read(req: FastifyRequest, kind: CookieKind): string | undefined {
    const value = req.cookies[this.name(req, kind)];
    return value === undefined || value === "" ? undefined : value;
  }

  /** HttpOnly always: the page learns the CSRF token from GET /auth/session, not from the cookie. */
  write(req: FastifyRequest, reply: FastifyReply, kind: CookieKind, value: string, maxAgeSeconds?: number): void {
    reply.setCookie(this.name(req, kind), value, {
      httpOnly: true,
      secure: isSecureContext(req, this.publicUrl),
      sameSite: "strict",
      path: "/",
      ...(maxAgeSeconds === undefined ? {} : { maxAge: maxAgeSeconds }),
    });
  }

  clear(req: FastifyRequest, reply: FastifyReply, kind: CookieKind): void {
    reply.clearCookie(this.name(req, kind), { httpOnly: true, secure: isSecureContext(req, this.publicUrl), sameSite: "strict", path: "/" });
  }
}
