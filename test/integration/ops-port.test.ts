import { afterEach, describe, expect, it } from "vitest";
import { startOpsServer } from "../../src/http/ops-server.js";
import { Metrics } from "../../src/metrics.js";
import { databases } from "../helpers/databases.js";
import { apiBase, bootstrapped, killServer, startServer, waitForLog, type Server } from "../helpers/server-process.js";
import { aMessage } from "../helpers/test-app.js";

let servers: Server[] = [];
let drop: (() => Promise<void>) | null = null;
afterEach(async () => {
  await Promise.all(servers.map(killServer));
  servers = [];
  await drop?.();
  drop = null;
});

const metricValue = (body: string, series: string): number | null => {
  const line = body.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? null : Number(line.slice(series.length + 1));
};

describe.each(databases)("the operators' port, METRICS_PORT ($name)", (database) => {
  it("serves a worker-only process's counters on /metrics, and /health and /ready, and nothing else", { timeout: 120_000 }, async () => {
    const db = await database.create();
    drop = db.drop;
    const { env, sandboxKey: key } = await bootstrapped(database, db, { WORKER_POLL_MS: "50" });

    const worker = startServer({ ...env, METRICS_PORT: "0" }, ["worker"]);
    const api = startServer(env, ["api"]);
    servers = [worker, api];
    const running = await waitForLog(worker, (r) => r.msg === "mailroom is running", 60_000);
    const ops = String(running.metrics).replace(/\/metrics$/, "");
    expect(ops).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const base = await apiBase(api);

    expect(await (await fetch(`${ops}/health`)).json()).toEqual({ status: "ok" });
    const ready = await fetch(`${ops}/ready`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: "ready" }]);

    // The API process accepts; the worker process delivers, and only its port can tell.
    const accepted = await fetch(`${base}/v1/messages`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(aMessage({ to: "delivered@simulator.test" })) });
    expect(accepted.status).toBe(202);
    const scrape = async () => {
      const res = await fetch(`${ops}/metrics`);
      expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
      return res.text();
    };
    let body = await scrape();
    for (const deadline = Date.now() + 30_000; metricValue(body, 'mailroom_jobs_total{outcome="done"}') !== 1 && Date.now() < deadline; body = await scrape()) await new Promise((r) => setTimeout(r, 100));
    expect(metricValue(body, 'mailroom_jobs_total{outcome="done"}'), body).toBe(1);
    expect(metricValue(body, 'mailroom_recipients_total{environment="sandbox",outcome="delivered"}')).toBe(1);
    expect(metricValue(body, "mailroom_queue_depth")).toBe(0);
    expect(metricValue(body, "mailroom_webhook_queue_depth")).toBe(0);
    // The API's own /metrics counts its requests, not the worker's jobs.
    expect(await (await fetch(`${base}/metrics`)).text()).not.toMatch(/^mailroom_jobs_total\{/m);

    const wrongMethod = await fetch(`${ops}/metrics`, { method: "POST" });
    expect([wrongMethod.status, wrongMethod.headers.get("allow"), wrongMethod.headers.get("content-type")]).toEqual([405, "GET, HEAD", "application/problem+json"]);
    const elsewhere = await fetch(`${ops}/v1/messages`, { headers: { authorization: `Bearer ${key}` } });
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.json()).toMatchObject({ status: 404, code: "not_found" });
    expect(elsewhere.headers.get("request-id")).toMatch(/^req_/);

    // Shutting down, it says "not ready" until the port closes with the process.
    worker.child.kill("SIGTERM");
    await waitForLog(worker, (r) => typeof r.msg === "string" && r.msg.startsWith("shutting down"), 10_000);
    const draining = await fetch(`${ops}/ready`).then((res) => res.status, () => "closed");
    expect([503, "closed"]).toContain(draining);
    expect(await worker.exited).toEqual({ code: 0, signal: null });
  });
});

describe("startOpsServer", () => {
  it("answers 500 with its request id when the metrics cannot be read, 503 when the database does not answer, and HEAD without a body", async () => {
    const metrics = new Metrics();
    metrics.watchQueue("mailroom_queue", "Delivery jobs", async () => {
      throw new Error("the database does not answer");
    });
    const errors: Array<Record<string, unknown>> = [];
    let ids = 0;
    const ops = await startOpsServer({
      host: "127.0.0.1",
      port: 0,
      metrics,
      lifecycle: { ready: true },
      ping: async () => {
        throw new Error("the database does not answer");
      },
      newRequestId: () => `req_test${++ids}`,
      log: { error: (obj) => errors.push(obj as Record<string, unknown>) },
    });
    try {
      const scrape = await fetch(`http://127.0.0.1:${ops.port}/metrics`);
      const body = (await scrape.json()) as { status: number; code: string; request_id: string };
      expect([scrape.status, body.code, body.request_id]).toEqual([500, "internal_error", scrape.headers.get("request-id")]);
      expect(errors).toMatchObject([{ reqId: body.request_id, err: { message: "the database does not answer" } }]);

      const ready = await fetch(`http://127.0.0.1:${ops.port}/ready`);
      expect([ready.status, ready.headers.get("retry-after"), ((await ready.json()) as { code: string }).code]).toEqual([503, "1", "service_unavailable"]);

      const head = await fetch(`http://127.0.0.1:${ops.port}/health`, { method: "HEAD" });
      expect([head.status, await head.text()]).toEqual([200, ""]);
    } finally {
      await ops.close();
    }
  });
});
