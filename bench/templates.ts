/**
 * Template sends against plain sends through `POST /v1/messages`, in one run, against one server
 * (docs/performance.md#templates). `make bench`, or:
 *
 *   node_modules/.bin/tsx bench/templates.ts
 *
 * The server (SQLite, `--role api`, its own child process) gets a published template whose
 * rendered html is byte for byte the html of the plain message, so the two requests differ only
 * in how the content is made: given, or resolved, checked and rendered on the render pool. The
 * kinds alternate (plain, template, plain, template...) so a drift in the machine's load hits
 * both alike; the figure is the ratio of their accept rates (target >= 0.8).
 *
 * Environment:
 *   BENCH_CONNECTIONS (50)  BENCH_WARMUP_S (3)  BENCH_DURATION_S (8)  BENCH_ROUNDS (2)
 *   BENCH_QUIET_WAIT_S (8)  at most this long, before measuring, wait for the machine to be quiet
 *   BENCH_SERVER_NODE_ARGS  extra node flags for the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"
 *
 * Exit status 0 whether or not the target is met (this is a report); 1 if it could not run.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { CLK_TCK, bootstrapSandboxKey, intEnv, machineBusy, onCleanup, processTicks, runMain, SERVER_ENV, startServer, stop, waitForHttp, waitForQuiet, type Server } from "./machine.js";

const CONNECTIONS = intEnv("BENCH_CONNECTIONS", 50);
const WARMUP_S = intEnv("BENCH_WARMUP_S", 3);
const DURATION_S = intEnv("BENCH_DURATION_S", 8);
const ROUNDS = intEnv("BENCH_ROUNDS", 2);
const QUIET_WAIT_S = intEnv("BENCH_QUIET_WAIT_S", 8);
const TARGET_RATIO = 0.8;

// --- the two requests ---------------------------------------------------------------------------

const ITEMS = [
  { name: "Espresso beans, 1 kg", price: "12.50" },
  { name: "Ceramic pour-over dripper", price: "25.00" },
  { name: "Paper filters (100)", price: "37.50" },
  { name: "Burr grinder", price: "50.00" },
];
const VARIABLES = { first_name: "Ada", order_id: "A-10482", items: ITEMS };
const COMMON = {
  from: "Example Shop <orders@shop.example.com>",
  to: ["Ada Lovelace <ada@example.com>"],
  tags: ["transactional", "shipping"],
  metadata: { order_id: "A-10482", customer_id: "cus_81723", locale: "en-GB" },
};
const FOOTER = `<p>Questions? Reply to this email or write to support@shop.example.com.</p>`;

/** The template: ~1 KB of html with a loop over the order's items, as a shop would write it. */
const TEMPLATE = {
  slug: "order-shipped",
  name: "Order shipped",
  subject: "Your order #{{ order_id }} has shipped",
  html:
    `<!doctype html><html><body style="font-family:sans-serif"><h1>Your order #{{ order_id }} has shipped</h1>` +
    `<p>Hello {{ first_name }}, good news: your parcel left our warehouse this morning and should arrive within two working days.</p>` +
    `<table>{% for item in items %}<tr><td style="padding:4px 8px">{{ item.name }}</td><td style="padding:4px 8px;text-align:right">{{ item.price }} EUR</td></tr>{% endfor %}</table>` +
    `<p>Track it at <a href="https://shop.example.com/track/{{ order_id }}">shop.example.com/track/{{ order_id }}</a>.</p>${FOOTER}${FOOTER}</body></html>`,
  variables: [
    { name: "first_name", type: "string", required: true },
    { name: "order_id", type: "string", required: true },
    { name: "items", type: "array", required: true },
  ],
  publish: true,
};

/** What the template renders to with VARIABLES: the plain message carries exactly this. */
const PLAIN_HTML =
  `<!doctype html><html><body style="font-family:sans-serif"><h1>Your order #A-10482 has shipped</h1>` +
  `<p>Hello Ada, good news: your parcel left our warehouse this morning and should arrive within two working days.</p>` +
  `<table>${ITEMS.map((i) => `<tr><td style="padding:4px 8px">${i.name}</td><td style="padding:4px 8px;text-align:right">${i.price} EUR</td></tr>`).join("")}</table>` +
  `<p>Track it at <a href="https://shop.example.com/track/A-10482">shop.example.com/track/A-10482</a>.</p>${FOOTER}${FOOTER}</body></html>`;

const BODIES = {
  plain: JSON.stringify({ ...COMMON, subject: "Your order #A-10482 has shipped", html: PLAIN_HTML }),
  template: JSON.stringify({ ...COMMON, template: { slug: TEMPLATE.slug, variables: VARIABLES } }),
};
type Kind = keyof typeof BODIES;

// --- load ---------------------------------------------------------------------------------------

interface Run {
  kind: Kind;
  rate: number;
  accepted: number;
  other: number;
  p50: number;
  p99: number;
  serverCores: number;
  foreignCores: number;
}

async function load(server: Server, key: string, kind: Kind, seconds: number): Promise<Run> {
  const busy0 = machineBusy();
  const server0 = processTicks(server.child.pid);
  const self0 = process.cpuUsage();
  const started = performance.now();
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}/v1/messages`,
    method: "POST",
    connections: CONNECTIONS,
    pipelining: 1,
    duration: seconds,
    timeout: 10,
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: BODIES[kind],
  });
  const elapsed = (performance.now() - started) / 1000;
  const self = process.cpuUsage(self0);
  const cores = (ticks: number) => ticks / CLK_TCK / elapsed;
  const serverCores = cores(processTicks(server.child.pid) - server0);
  const loadgenCores = (self.user + self.system) / 1e6 / elapsed;
  const accepted = result.statusCodeStats["202"]?.count ?? 0;
  return {
    kind,
    rate: accepted / result.duration,
    accepted,
    other: result.non2xx + result.errors + result.timeouts,
    p50: result.latency.p50,
    p99: result.latency.p99,
    serverCores,
    foreignCores: Math.max(0, cores(machineBusy() - busy0) - serverCores - loadgenCores),
  };
}

async function api(server: Server, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`http://127.0.0.1:${server.port}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

// --- main ---------------------------------------------------------------------------------------

async function main(): Promise<number> {
  console.log(
    `bench/templates: ${CONNECTIONS} connections, ${WARMUP_S} s warm-up per kind, then ${ROUNDS} rounds of ${DURATION_S} s plain + ${DURATION_S} s template, ` +
      `SQLite --role api, node ${process.version}, ${cpus().length} CPUs`,
  );
  const dir = mkdtempSync(join(tmpdir(), "mailroom-bench-templates-"));
  onCleanup(async () => rmSync(dir, { recursive: true, force: true }));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: `sqlite:${join(dir, "mailroom.db")}`,
    DATA_DIR: dir,
    ...SERVER_ENV,
  };
  const key = await bootstrapSandboxKey(env);

  const server = await startServer(env, ["--role", "api"]);
  const runs: Run[] = [];
  try {
    await waitForHttp(server);
    const created = await api(server, key, "POST", "/v1/templates", TEMPLATE);
    if (created.status !== 201) throw new Error(`createTemplate answered ${created.status}: ${JSON.stringify(created.json)}`);
    // The comparison is only fair if both requests carry the same content.
    const rendered = await api(server, key, "POST", `/v1/templates/${TEMPLATE.slug}/render`, { variables: VARIABLES });
    if (rendered.json.html !== PLAIN_HTML) throw new Error(`the template does not render to the plain message's html:\n${String(rendered.json.html)}`);

    console.log(`machine before measuring: ${await waitForQuiet(QUIET_WAIT_S)}`);
    for (const kind of ["plain", "template"] as const) await load(server, key, kind, WARMUP_S);
    for (let round = 0; round < ROUNDS; round++) for (const kind of ["plain", "template"] as const) runs.push(await load(server, key, kind, DURATION_S));

    // Every template send stored the rendered content and its template version.
    const sample = await api(server, key, "GET", `/v1/messages?template=${TEMPLATE.slug}&limit=1`);
    const [latest] = sample.json.data as Array<{ id: string }>;
    const message = await api(server, key, "GET", `/v1/messages/${latest!.id}`);
    if (message.json.html !== PLAIN_HTML) throw new Error("a template send stored other html than the template renders to");
  } finally {
    await stop(server, "SIGTERM");
  }

  const f2 = (n: number) => n.toFixed(2);
  console.log(`\n| run | kind | accepted/s | p50 ms | p99 ms | non-202 | server cores | other processes (cores) |`);
  console.log(`| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |`);
  runs.forEach((run, i) => {
    const flag = run.foreignCores > 0.3 ? "  <-- contaminated" : "";
    console.log(`| ${i + 1} | ${run.kind} | ${Math.round(run.rate).toLocaleString("en")} | ${run.p50} | ${run.p99} | ${run.other} | ${f2(run.serverCores)} | ${f2(run.foreignCores)}${flag} |`);
  });
  const mean = (kind: Kind) => {
    const of = runs.filter((run) => run.kind === kind);
    return of.reduce((sum, run) => sum + run.rate, 0) / of.length;
  };
  const plain = mean("plain");
  const template = mean("template");
  const ratio = template / plain;
  const cpuPer = (kind: Kind) => {
    const of = runs.filter((run) => run.kind === kind);
    return (of.reduce((sum, run) => sum + run.serverCores * DURATION_S, 0) * 1e6) / Math.max(1, of.reduce((sum, run) => sum + run.accepted, 0));
  };
  console.log(`\nplain sends:    ${Math.round(plain).toLocaleString("en")} accepted/s (server CPU ${Math.round(cpuPer("plain"))} us per message, main thread and render workers together)`);
  console.log(`template sends: ${Math.round(template).toLocaleString("en")} accepted/s (server CPU ${Math.round(cpuPer("template"))} us per message)`);
  const failures = runs.reduce((sum, run) => sum + run.other, 0);
  console.log(`ratio template/plain: ${f2(ratio)} (target >= ${TARGET_RATIO}) -> ${ratio >= TARGET_RATIO && failures === 0 ? "TARGET MET" : `TARGET NOT MET${failures ? ` (${failures} non-202 answers)` : ""}`}`);
  return 0;
}

runMain(main);
