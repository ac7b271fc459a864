/**
 * What a `getMetrics` answer costs (docs/metrics.md#how-it-is-computed-and-what-it-costs), beside
 * a plain count of the same events measured in the same run. `make bench`, or:
 *
 *   node_modules/.bin/tsx bench/metrics.ts
 *
 * Seeds an in-process Mailroom (SQLite under a temporary directory) with sandbox messages whose
 * simulated outcomes give every kind of event (deliveries, bounces, opens, clicks, complaints,
 * replies), in batches of 100 through the API, and lets the worker process them. Then, several
 * times each, alternating: `GET /v1/metrics` over the default week, the same with a tag filter,
 * hourly over the last day, and the baseline, `SELECT COUNT(*)` of the week's events of the
 * environment. There is no target: the figure says how far read-time metrics go.
 *
 * Environment:  BENCH_METRICS_MESSAGES (100000)  BENCH_METRICS_RUNS (7)
 *
 * Exit status 0 (this is a report); 1 if it could not run.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { buildApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { createRuntime } from "../src/runtime.js";
import { intEnv, onCleanup, runMain } from "./machine.js";

const MESSAGES = intEnv("BENCH_METRICS_MESSAGES", 100_000);
const RUNS = intEnv("BENCH_METRICS_RUNS", 7);
const BATCH = 100;
/** One recipient per message, cycling through the simulator's outcomes (docs/sandbox.md). */
const OUTCOMES = ["delivered", "delivered", "opened", "clicked", "bounced", "complained", "replied", "delivered"];

runMain(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "mailroom-bench-metrics-"));
  onCleanup(async () => rmSync(dataDir, { recursive: true, force: true }));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: "silent", RATE_LIMIT_REQUESTS: "1000000000", DELIVERY_COMPOSE_THREADS: "0" });
  const runtime = await createRuntime(config);
  const app = await buildApp({ runtime, lifecycle: { ready: true }, logger: false });
  await app.ready();
  onCleanup(async () => {
    await app.close();
    await runtime.close();
  });
  const { workspace_id: workspaceId, sandbox_key: key } = await runtime.services.workspace.bootstrap("Bench");
  const call = (url: string, payload?: object) =>
    app.inject({ method: payload ? "POST" : "GET", url, headers: { authorization: `Bearer ${key}` }, ...(payload ? { payload } : {}) });

  const seeding = performance.now();
  for (let sent = 0; sent < MESSAGES; sent += BATCH) {
    const messages = Array.from({ length: Math.min(BATCH, MESSAGES - sent) }, (_, i) => ({
      from: "Acme <hello@acme.example>",
      to: `${OUTCOMES[(sent + i) % OUTCOMES.length]}+${sent + i}@simulator.test`,
      subject: "Your receipt",
      html: '<p>Thanks. <a href="https://acme.example/orders">Your orders</a></p>',
      tags: (sent + i) % 4 === 0 ? ["receipt", "welcome"] : ["receipt"],
    }));
    const res = await call("/v1/messages/batch", { messages });
    if (res.statusCode !== 200) throw new Error(`createMessageBatch answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
    while ((await runtime.worker.tick()) > 0);
    if ((sent / BATCH) % 100 === 99) process.stdout.write(`\rseeding: ${sent + BATCH} of ${MESSAGES} messages`);
  }
  const knex = runtime.db.knex;
  const now = Date.now();
  const weekAgo = now - 7 * 86_400_000;
  const events = Number(((await knex("events").where({ workspace_id: workspaceId, environment: "sandbox" }).count({ n: "*" })) as Array<{ n: number }>)[0]!.n);
  console.log(`\rseeded ${MESSAGES} messages, ${events} events, in ${((performance.now() - seeding) / 1000).toFixed(0)} s`);

  const kinds: Record<string, () => Promise<unknown>> = {
    "plain COUNT(*) of the week's events (baseline)": () => knex("events").where({ workspace_id: workspaceId, environment: "sandbox" }).andWhere("created_at", ">=", weekAgo).andWhere("created_at", "<", now).count({ n: "*" }),
    "getMetrics, 7 days by day": () => expectOk(call("/v1/metrics")),
    "getMetrics, 7 days by day, tag=welcome": () => expectOk(call("/v1/metrics?tag=welcome")),
    "getMetrics, 24 hours by hour": () => expectOk(call("/v1/metrics?granularity=hour")),
  };
  const times = new Map<string, number[]>(Object.keys(kinds).map((name) => [name, []]));
  for (let run = 0; run < RUNS; run++) {
    for (const [name, query] of Object.entries(kinds)) {
      const started = performance.now();
      await query();
      times.get(name)!.push(performance.now() - started);
    }
  }
  const baseline = median(times.values().next().value!);
  console.log(`\nmedian of ${RUNS} runs over ${events} events (SQLite):`);
  for (const [name, ms] of times) console.log(`  ${name.padEnd(48)} ${median(ms).toFixed(1).padStart(8)} ms   ${(median(ms) / baseline).toFixed(1).padStart(5)} x baseline`);
});

async function expectOk(response: Promise<{ statusCode: number; body: string }>): Promise<void> {
  const res = await response;
  if (res.statusCode !== 200) throw new Error(`getMetrics answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
