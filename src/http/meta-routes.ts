import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { FastifyInstance } from "fastify";
import type { Metrics } from "../metrics.js";
import { problem, sendProblem } from "./problems.js";
import { loadSpec, SPEC_PATH } from "./spec.js";

const REFERENCE_PATH = fileURLToPath(new URL("../../build/reference.html", import.meta.url));
const REDOCLY = fileURLToPath(new URL("../../node_modules/.bin/redocly", import.meta.url));

/** Routes outside the contract: the contract itself, its rendered reference, and metrics. */
export function registerMetaRoutes(app: FastifyInstance, metrics: Metrics): void {
  const specJson = JSON.stringify(loadSpec());
  app.get("/v1/openapi.json", { config: { operationId: "getOpenApi" } }, async (_req, reply) => reply.type("application/json").send(specJson));

  let reference: Promise<string> | null = null;
  app.get("/docs", { config: { operationId: "getDocs" } }, async (req, reply) => {
    reference ??= buildReference().catch((err: unknown) => {
      reference = null;
      throw err;
    });
    try {
      return reply.type("text/html; charset=utf-8").send(await reference);
    } catch (err) {
      req.log.error({ err }, "could not build the API reference");
      return sendProblem(reply, problem(503, "service_unavailable", "Reference unavailable", "The API reference is not built; run `make docs` on this installation.", req.id));
    }
  });

  app.get("/metrics", { config: { operationId: "getPrometheusMetrics" } }, async (_req, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()));
}

/** The Redoc page built by `make docs`, or built now with Redocly (offline: --inlineBundle). */
async function buildReference(): Promise<string> {
  if (!existsSync(REFERENCE_PATH)) {
    await promisify(execFile)(REDOCLY, ["build-docs", SPEC_PATH, "--inlineBundle", "-o", REFERENCE_PATH], { timeout: 60_000 });
  }
  return readFileSync(REFERENCE_PATH, "utf8");
}
