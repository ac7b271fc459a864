import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Services } from "../runtime.js";
import type { Visitor } from "../services/tracking.js";
import { escapeHtml } from "../tracking/html.js";
import { TRACKING_PATHS } from "../tracking/links.js";

/**
 * The links inside sent mail (docs/tracking.md): the open image, click redirects and one-click
 * unsubscribe. Public and outside the /v1 contract, like the dashboard's routes: the reader's
 * mail client calls them with no credentials, no cookies, and nothing but the signed token.
 * A token that does not verify is a plain 404, with no Location and nothing about why.
 */

// The smallest transparent GIF: 1x1, one colour, transparent.
const PIXEL = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");

const PAGE_HEADERS = {
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
};

/**
 * The token is the rest of the path (a wildcard, not a `:token` parameter): a click token holds
 * its URL and may be longer than the router's 1,000-character limit on parameters.
 */
type TokenParams = { "*": string };

export function registerTrackingRoutes(app: FastifyInstance, services: Pick<Services, "tracking">): void {
  const { tracking } = services;

  app.register(async (scope) => {
    // RFC 8058 §3.1: the one-click POST is application/x-www-form-urlencoded or
    // multipart/form-data, but the URL's signed token is what unsubscribes: the body only tells
    // the confirmation page's button (`via=page`) from a mailbox provider's POST. So a body of
    // any type or none is read as text, up to a limit far above any provider's few bytes (a 413
    // past it). The API's JSON-only parsers stay on /v1.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "string", bodyLimit: UNSUBSCRIBE_BODY_LIMIT_BYTES }, (_req, body, done) => done(null, body));

    scope.addHook("onRequest", async (_req, reply) => {
      // Nothing here may be cached: every fetch is an event, and the URLs carry secrets.
      reply.header("cache-control", "no-store, no-cache, must-revalidate, private");
      reply.header("referrer-policy", "no-referrer");
    });

    // Fastify answers HEAD with the GET handler (exposeHeadRoutes): a HEAD is recorded, flagged as a machine's.
    scope.get(`${TRACKING_PATHS.open}*`, label("tracking.open"), async (req: FastifyRequest<{ Params: TokenParams }>, reply) => {
      // Some clients want an image-looking URL: `<token>.gif` is accepted too.
      if (!(await tracking.open(req.params["*"].replace(/\.gif$/, ""), visitorOf(req)))) return notFound(reply);
      return reply.type("image/gif").header("expires", "0").send(PIXEL);
    });

    // The request's host (X-Forwarded-Host only from a TRUST_PROXY address, as Fastify reads it):
    // a click token is good only at the host its link named.
    scope.get(`${TRACKING_PATHS.click}*`, label("tracking.click"), async (req: FastifyRequest<{ Params: TokenParams }>, reply) => {
      const click = await tracking.click(req.params["*"], req.host, visitorOf(req));
      if (click === null) return notFound(reply);
      if (!click.sandbox) return reply.redirect(click.url, 302);
      // Anyone with a sandbox key can put any link in a message and read its token back from the
      // API: followed at once, that would be a redirect to anywhere on this host. The reader
      // sees where the link goes and follows it themselves; the click is recorded all the same.
      const href = escapeHtml(click.url);
      return page(reply, 200, "Leaving for another site", `<h1>This link leads to another site</h1><p>It was sent in a test (sandbox) message. Continue only if you trust it:</p><p><a href="${href}" rel="noreferrer noopener">${href}</a></p>`);
    });

    // A GET never unsubscribes: link scanners and prefetchers follow every link (RFC 8058 §1).
    scope.get(`${TRACKING_PATHS.unsubscribe}*`, label("tracking.unsubscribe_page"), async (req: FastifyRequest<{ Params: TokenParams }>, reply) => {
      if (!tracking.checkUnsubscribe(req.params["*"])) return notFound(reply);
      return page(reply, 200, "Unsubscribe", `<h1>Unsubscribe?</h1><p>You will no longer receive email from this sender at this address.</p><form method="post"><input type="hidden" name="via" value="page"><button type="submit">Unsubscribe</button></form>`);
    });

    const unsubscribeRoute = {
      ...label("tracking.unsubscribe"),
      // A token that does not verify is refused before any of the body is read: without one,
      // nobody can make this public route read a megabyte.
      onRequest: async (req: FastifyRequest<{ Params: TokenParams }>, reply: FastifyReply) => {
        if (!tracking.checkUnsubscribe(req.params["*"])) return notFound(reply.header("connection", "close"));
      },
    };
    scope.post(`${TRACKING_PATHS.unsubscribe}*`, unsubscribeRoute, async (req: FastifyRequest<{ Params: TokenParams; Body: unknown }>, reply) => {
      const body = typeof req.body === "string" ? req.body : "";
      const fromPage = /(^|&)via=page(&|$)/.test(body);
      if (!(await tracking.unsubscribe(req.params["*"], fromPage ? "page" : "one_click", visitorOf(req)))) return notFound(reply);
      if (fromPage) return page(reply, 200, "Unsubscribed", "<h1>You are unsubscribed</h1><p>This address will no longer receive email from this sender.</p>");
      return reply.type("text/plain; charset=utf-8").send("Unsubscribed\n");
    });
  });
}

/** The largest unsubscribe POST body read: our own page's form, and any provider's, are a few bytes. */
const UNSUBSCRIBE_BODY_LIMIT_BYTES = 1024 * 1024;

/** The `operation` label of the HTTP metrics (app.ts), which API routes take from their operationId. */
const label = (operation: string) => ({ config: { operationId: operation } });

function visitorOf(req: FastifyRequest): Visitor {
  const agent = req.headers["user-agent"];
  return { method: req.method, userAgent: typeof agent === "string" && agent !== "" ? agent.slice(0, 512) : null, ip: req.ip ?? null };
}

function notFound(reply: FastifyReply): FastifyReply {
  return reply.code(404).type("text/plain; charset=utf-8").send("Not found\n");
}

function page(reply: FastifyReply, status: number, title: string, body: string): FastifyReply {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${title}</title><style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;line-height:1.5}button{font:inherit;padding:.5rem 1.25rem;cursor:pointer}a{overflow-wrap:anywhere}</style></head><body>${body}</body></html>`;
  return reply.code(status).headers(PAGE_HEADERS).type("text/html; charset=utf-8").send(html);
}
