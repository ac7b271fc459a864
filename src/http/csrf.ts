import { randomBytes, timingSafeEqual } from "node:crypto";
import type { FastifyRequest } from "fastify";
import { DomainError } from "../domain/errors.js";
import { publicOrigin } from "./origin.js";
import type { DashboardCookies } from "./session-cookie.js";

/**
 * CSRF defence for the dashboard's cookie-authenticated routes (OWASP CSRF Prevention Cheat
 * Sheet), in layers: the session cookie is SameSite=Strict; a request the browser marks as
 * cross-site (Sec-Fetch-Site) or from another origin (Origin) is refused; and every
 * state-changing request must echo, in X-CSRF-Token, the random token of the HttpOnly CSRF
 * cookie (a double submit): a cross-site page can neither read the cookie nor the session
 * document that carries the token, and cannot send a custom header without a CORS preflight,
 * which this server never grants.
 */
export const CSRF_HEADER = "x-csrf-token";

export const newCsrfToken = (): string => randomBytes(32).toString("base64url");

export function checkCsrf(req: FastifyRequest, cookies: DashboardCookies, publicUrl: string | null): void {
  const fetchSite = req.headers["sec-fetch-site"];
  if (fetchSite !== undefined && fetchSite !== "same-origin") throw csrfFailed("The request came from another site.");
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== publicOrigin(req, publicUrl)) throw csrfFailed(`The request came from ${origin}, not from this dashboard.`);
  const sent = req.headers[CSRF_HEADER];
  const expected = cookies.read(req, "csrf");
  if (typeof sent !== "string" || expected === undefined || !sameToken(sent, expected)) {
    throw csrfFailed(`Send the csrf_token of GET /auth/session in the ${CSRF_HEADER} header.`);
  }
}

function sameToken(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

const csrfFailed = (detail: string) => new DomainError("forbidden", "csrf_failed", "Cross-site request refused", detail);
