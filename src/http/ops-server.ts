import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Metrics } from "../metrics.js";
import { problem } from "./problems.js";
import { isReady, NOT_READY_DETAIL, type Lifecycle } from "./readiness.js";

export interface OpsServerOptions {
  host: string;
  port: number;
  metrics: Metrics;
  lifecycle: Lifecycle;
  ping(): Promise<void>;
  newRequestId(): string;
  log: { error(obj: object, msg: string): void };
}

export interface OpsServer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * The operators' port (METRICS_PORT): `GET /metrics` for Prometheus, and `/health` and `/ready`
 * for an orchestrator's probes, answered as the API answers them. A process without the api role
 * (`--role worker`, `--role smtp`) serves no other HTTP, yet its counters (jobs and recipients by
 * outcome, webhook attempts) exist only in its memory; this is where they are scraped. Plain
 * node:http rather than the Fastify app, which a worker-only process does not build (a third of
 * its memory).
 */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const server = createServer((req, res) => {
    const requestId = options.newRequestId();
    res.setHeader("request-id", requestId);
    void answer(options, req, res, requestId).catch((error: unknown) => {
      // A scrape whose queue gauges could not be read (the database is down) fails as a whole.
      options.log.error({ err: error, path: req.url, reqId: requestId }, "operators' port request failed");
      if (!res.headersSent) send(res, 500, "application/problem+json", JSON.stringify(problem(500, "internal_error", "Internal error", `The request could not be answered. Quote request ${requestId} when you report it.`, requestId)));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host: options.host, port: options.port }, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

async function answer(options: OpsServerOptions, req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
  const path = new URL(req.url ?? "/", "http://ops.invalid").pathname;
  const route = ROUTES[path];
  if (route === undefined) {
    return send(res, 404, "application/problem+json", JSON.stringify(problem(404, "not_found", "Not found", `${path} is not served on the operators' port: it serves /metrics, /health and /ready.`, requestId)));
  }
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.setHeader("allow", "GET, HEAD");
    return send(res, 405, "application/problem+json", JSON.stringify(problem(405, "method_not_allowed", "Method not allowed", `${path} answers GET.`, requestId)));
  }
  await route(options, res, requestId);
}

const ROUTES: Record<string, (options: OpsServerOptions, res: ServerResponse, requestId: string) => Promise<void>> = {
  "/metrics": async ({ metrics }, res) => send(res, 200, metrics.registry.contentType, await metrics.registry.metrics()),
  "/health": async (_options, res) => send(res, 200, "application/json", JSON.stringify({ status: "ok" })),
  "/ready": async ({ lifecycle, ping }, res, requestId) => {
    if (await isReady(lifecycle, ping)) return send(res, 200, "application/json", JSON.stringify({ status: "ready" }));
    res.setHeader("retry-after", "1");
    send(res, 503, "application/problem+json", JSON.stringify(problem(503, "service_unavailable", "Service unavailable", NOT_READY_DETAIL, requestId)));
  },
};

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(body), "cache-control": "no-store" });
  res.end(res.req.method === "HEAD" ? undefined : body);
}
