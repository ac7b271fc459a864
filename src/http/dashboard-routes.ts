import { existsSync } from "node:fs";
import { relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

/** Where `make build` puts the dashboard (dashboard/dist), relative to this file. */
export const DASHBOARD_DIST = fileURLToPath(new URL("../../dashboard/dist/", import.meta.url));

/**
 * The page's own policy: only its bundled code runs and only this origin is called. Remote
 * images are allowed at this level so that the email preview can show them when the user asks;
 * the preview's frame has its own, stricter policy (dashboard/src/components/email-preview).
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: http: https:",
  "frame-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join("; ");

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  // Invitation links carry a secret in the path: never send it onwards.
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
};

/** Paths that belong to the API and tools, never to the single-page app's routes. */
const NOT_DASHBOARD = /^\/(v1|auth|docs|metrics|health|ready)(\/|$)/;

/**
 * Whether `path` (absolute, as @fastify/static gives it) is one of the build's fingerprinted
 * assets: Vite puts them in `assets/` under the root, and they never change under the same name.
 * Decided on the path under the root: the install directory itself may contain `/assets/`.
 */
function isFingerprinted(root: string, path: string): boolean {
  // Outside the root, relative() starts with `..` (or is absolute: another Windows drive).
  const [first, ...rest] = relative(root, path).split(sep);
  return first === "assets" && rest.length > 0;
}

/**
 * Serves the built dashboard at `/` and its client-side routes (any other GET for HTML) as
 * index.html. Returns the fallback for the app's not-found handler, or null when `req` is not
 * the dashboard's.
 */
export function registerDashboard(app: FastifyInstance, root: string = DASHBOARD_DIST): (req: FastifyRequest, reply: FastifyReply) => FastifyReply | null {
  const built = existsSync(`${root}index.html`);
  if (built) {
    app.register(fastifyStatic, {
      root,
      prefix: "/",
      wildcard: false,
      cacheControl: false, // ours, below: send's default (max-age=0) would overwrite it
      // `/` goes through the fallback below, like every client-side route: HTML for browsers,
      // a problem document for API clients.
      index: false,
      setHeaders: (res, path) => {
        for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
        res.setHeader("cache-control", isFingerprinted(root, path) ? "public, max-age=31536000, immutable" : "no-cache");
      },
    });
  }
  return (req, reply) => {
    const path = req.url.split("?", 1)[0]!;
    if ((req.method !== "GET" && req.method !== "HEAD") || NOT_DASHBOARD.test(path) || !String(req.headers.accept ?? "").includes("text/html")) return null;
    if (!built) {
      return reply.code(503).type("text/plain; charset=utf-8").send("The dashboard has not been built: run `make build` (make run does it for you).");
    }
    reply.headers({ ...SECURITY_HEADERS, "cache-control": "no-cache" });
    return reply.sendFile("index.html");
  };
}
