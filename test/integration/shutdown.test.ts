import { spawnSync } from "node:child_process";
import { request as httpRequest, type ClientRequest, type IncomingMessage } from "node:http";
import { connect } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SETTINGS } from "../../src/config.js";
import { openDatabase } from "../../src/db/connection.js";
import { SmtpPool } from "../../src/delivery/transports/smtp-pool.js";
import { databases } from "../helpers/databases.js";
import { headersOf, startLiveHarness, type LiveHarness } from "../helpers/live-delivery.js";
import { apiBase, bootstrapped, killServer, LAUNCHER, ROOT, startServer, waitForLog, withTimeout, type Server } from "../helpers/server-process.js";
import { aMessage } from "../helpers/test-app.js";

/** A POST whose body is sent in two parts, so it can be held in flight. */
function slowPost(url: string, key: string, body: string): { req: ClientRequest; response: Promise<{ status: number; body: string }>; finish(): void } {
  const bytes = Buffer.from(body);
  const half = Math.floor(bytes.length / 2);
  const req = httpRequest(url, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": bytes.length } });
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on("response", (res: IncomingMessage) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on("error", reject);
    });
    req.on("error", reject);
  });
  req.write(bytes.subarray(0, half));
  return { req, response, finish: () => req.end(bytes.subarray(half)) };
}

/** A raw SMTP client on loopback: `next()` is the server's next complete reply, `send()` a command's. */
function smtpClient(port: number): { next(): Promise<string>; send(command: string): Promise<string>; write(data: string): void; closed: Promise<void> } {
  const socket = connect(port, "127.0.0.1");
  const replies: string[] = [];
  const waiters: Array<() => void> = [];
  let partial = "";
  let read = 0;
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    partial += chunk;
    // A reply ends with the line whose code is followed by a space (RFC 5321 §4.2.1).
    for (let end = /^\d{3} .*\r\n/m.exec(partial); end; end = /^\d{3} .*\r\n/m.exec(partial)) {
      replies.push(partial.slice(0, end.index + end[0].length));
      partial = partial.slice(end.index + end[0].length);
    }
    for (const wake of waiters.splice(0)) wake();
  });
  socket.on("error", () => {}); // the server may reset it at exit
  const next = async () => {
    while (read >= replies.length) await withTimeout(new Promise<void>((resolve) => waiters.push(resolve)), 10_000, "an SMTP reply");
    return replies[read++]!;
  };
  return {
    next,
    send: (command) => {
      socket.write(`${command}\r\n`);
      return next();
    },
    write: (data) => socket.write(data),
    closed: new Promise<void>((resolve) => socket.once("close", () => resolve())),
  };
}

/** Polls `check` until it holds, or fails after `ms` saying what was awaited. */
async function eventually(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Node's heap_size_limit in MiB under --max-old-space-size=MB (the old generation plus the young one), or by default. */
function heapLimitFor(oldSpaceMb?: number): number {
  const flags = oldSpaceMb === undefined ? [] : [`--max-old-space-size=${oldSpaceMb}`];
  const probe = spawnSync(process.execPath, [...flags, "-p", "Math.round(require('v8').getHeapStatistics().heap_size_limit / 2 ** 20)"], { encoding: "utf8" });
  return Number(probe.stdout.trim());
}

/** The server and the database of the running test: after it, the server is killed if it still runs, and the database dropped. */
let server: Server | null = null;
let drop: (() => Promise<void>) | null = null;
afterEach(async () => {
  if (server) await killServer(server);
  server = null;
  await drop?.();
  drop = null;
});

describe.each(databases)("graceful shutdown ($name)", (database) => {

  describe("serve", () => {
    it("finishes the request in flight on SIGTERM, stops taking new ones, keeps what it accepted and exits 0", { timeout: 120_000 }, async () => {
      const db = await database.create();
      drop = db.drop;
      const { env, sandboxKey } = await bootstrapped(database, db, { SHUTDOWN_GRACE_MS: "15000" });
      const keys = { sandbox_key: sandboxKey };
      expect(keys.sandbox_key).toMatch(/^svc_test_/);

      server = startServer(env);
      const base = await apiBase(server);
      const running = await waitForLog(server, (r) => r.msg === "mailroom is running", 10_000);
      expect(running.heap_limit_mb).toBe(heapLimitFor(Number(SETTINGS.heapLimitMb.default)));
      expect((await fetch(`${base}/ready`)).status).toBe(200);

      // One message accepted before the signal.
      const before = await fetch(`${base}/v1/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${keys.sandbox_key}`, "content-type": "application/json" },
        body: JSON.stringify(aMessage({ subject: "Before the signal" })),
      });
      expect(before.status).toBe(202);
      const firstId = ((await before.json()) as { id: string }).id;

      // One request in flight: headers and half its body are in when the signal arrives.
      const inFlight = slowPost(`${base}/v1/messages`, keys.sandbox_key, JSON.stringify(aMessage({ subject: "In flight" })));
      const isPostMessage = (r: Record<string, unknown>) => r.msg === "incoming request" && (r.req as { method?: string; url?: string } | undefined)?.url === "/v1/messages";
      await waitForLog(server, () => server!.records.filter(isPostMessage).length >= 2, 10_000);
      server.child.kill("SIGTERM");
      await waitForLog(server, (r) => typeof r.msg === "string" && r.msg.startsWith("shutting down"), 10_000);

      // New work is turned away: either readiness answers 503 or the listener is gone.
      const probe = await withTimeout(
        fetch(`${base}/ready`).then(
          (res) => ({ status: res.status }),
          (error: unknown) => ({ error: String((error as { cause?: { code?: string } }).cause?.code ?? error) }),
        ),
        10_000,
        "the readiness probe",
      );
      if ("status" in probe) expect(probe.status).toBe(503);
      else expect(probe.error).toMatch(/ECONNREFUSED|ECONNRESET|EPIPE|socket|closed/i);

      inFlight.finish();
      const answer = await withTimeout(inFlight.response, 15_000, "the in-flight request");
      expect(answer.status, answer.body).toBe(202);
      const secondId = (JSON.parse(answer.body) as { id: string }).id;

      const exit = await withTimeout(server.exited, 30_000, "the server's exit");
      expect(exit, server.stdout + server.stderr).toEqual({ code: 0, signal: null });
      // The order the server saw: the request began, shutdown began, the request completed, stop.
      const inFlightId = server.records.filter(isPostMessage)[1]!.reqId;
      const at = (match: (r: Record<string, unknown>) => boolean) => server!.records.findIndex(match);
      const began = at((r) => r.msg === "incoming request" && r.reqId === inFlightId);
      const draining = at((r) => typeof r.msg === "string" && r.msg.startsWith("shutting down"));
      const completed = at((r) => r.msg === "request completed" && r.reqId === inFlightId);
      const stopped = at((r) => r.msg === "stopped");
      expect([began, draining, completed, stopped].every((i) => i >= 0), server.stdout).toBe(true);
      expect(began).toBeLessThan(draining);
      expect(draining).toBeLessThan(completed);
      expect(completed).toBeLessThan(stopped);

      // Both accepted messages are durable.
      const check = openDatabase(db.url);
      try {
        const rows = (await check.knex("messages").whereIn("id", [firstId, secondId]).select("id", "subject")) as Array<{ id: string; subject: string }>;
        expect(rows.map((r) => r.subject).sort()).toEqual(["Before the signal", "In flight"]);
      } finally {
        await check.close();
      }
    });

    it("closes an idle inbound SMTP session with 421 and exits 0 well within the grace, keeping what it accepted", { timeout: 120_000 }, async () => {
      const db = await database.create();
      drop = db.drop;
      const { env, sandboxKey } = await bootstrapped(database, db, { SHUTDOWN_GRACE_MS: "10000" });
      server = startServer(env);
      const base = await apiBase(server);
      const running = await waitForLog(server, (r) => r.msg === "mailroom is running", 10_000);
      const smtpPort = Number(/:(\d+)$/.exec(String(running.smtp))![1]);
      const idle = smtpClient(smtpPort);
      expect(await idle.next()).toMatch(/^220 /);

      // Accepted just before the signal: its request-log entry still waits in memory then.
      const accepted = await fetch(`${base}/v1/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${sandboxKey}`, "content-type": "application/json" },
        body: JSON.stringify(aMessage({ subject: "Accepted before the signal" })),
      });
      expect(accepted.status).toBe(202);
      const messageId = ((await accepted.json()) as { id: string }).id;

      const signalledAt = Date.now();
      server.child.kill("SIGTERM");
      const exit = await withTimeout(server.exited, 30_000, "the server's exit");
      const tookMs = Date.now() - signalledAt;
      expect(exit, server.stdout + server.stderr).toEqual({ code: 0, signal: null });
      expect(tookMs).toBeLessThan(9_000); // the grace is 10 s: it did not wait for it (below too)
      expect(server.records.some((r) => r.msg === "shutdown grace period over")).toBe(false);
      expect(await idle.next()).toMatch(/^421 /);
      await withTimeout(idle.closed, 5_000, "the idle SMTP session's close");

      const check = openDatabase(db.url);
      try {
        expect(await check.knex("messages").where({ id: messageId }).first("subject")).toEqual({ subject: "Accepted before the signal" });
        const logged = (await check.knex("request_logs").where({ method: "POST", path: "/v1/messages" }).count({ n: "*" }).first()) as { n: number | string };
        expect(Number(logged.n)).toBe(1);
      } finally {
        await check.close();
      }
    });
  });

  describe("inbound SMTP server", () => {
    it("lets a message whose data is arriving finish and answers it, then closes its session with 421; an idle one at once", { timeout: 60_000 }, async () => {
      const h = await startLiveHarness(database, { env: () => ({ INBOUND_SMTP_PORT: "0", SHUTDOWN_GRACE_MS: "6000" }) });
      try {
        const smtp = await h.t.runtime.startSmtp();
        const id = await h.send({ to: "ada@example.net", track_replies: true });
        await h.t.drain();
        const replyTo = /<([^>]+)>/.exec(headersOf(h.sink.accepted[0]!.raw).find(([name]) => name.toLowerCase() === "reply-to")![1])![1]!;

        const idle = smtpClient(smtp.port);
        const busy = smtpClient(smtp.port);
        expect(await idle.next()).toMatch(/^220 /);
        expect(await busy.next()).toMatch(/^220 /);
        expect(await busy.send("EHLO mail.example.net")).toMatch(/^250 /m);
        expect(await busy.send("MAIL FROM:<ada@example.net>")).toMatch(/^250 /);
        expect(await busy.send(`RCPT TO:<${replyTo}>`)).toMatch(/^250 /);
        expect(await busy.send("DATA")).toMatch(/^354 /);
        busy.write(`From: ada@example.net\r\nTo: ${replyTo}\r\nSubject: Re: Your receipt\r\nMessage-ID: <reply-1@mail.example.net>\r\n`);

        const stopped = h.t.runtime.stop();
        expect(await idle.next()).toMatch(/^421 /);
        await withTimeout(idle.closed, 2_000, "the idle session's close");

        busy.write("Date: Sat, 21 Nov 2026 10:12:00 +0000\r\n\r\nThanks, got it.\r\n.\r\n");
        expect(await busy.next()).toMatch(/^250 /);
        expect(await busy.next()).toMatch(/^421 /);
        await withTimeout(busy.closed, 2_000, "the busy session's close");
        await withTimeout(stopped, 3_000, "the runtime's stop"); // half the grace at most
        expect((await h.events(id)).map((e) => e.type)).toContain("message.replied");
      } finally {
        await h.close();
      }
    });
  });

  describe("delivery worker", () => {
    it("gives back at once the jobs it has not handed off, and finishes and records the one in hand-off", { timeout: 60_000 }, async () => {
      // One SMTP slot: the first message's hand-off holds it while the others wait their turn.
      const h = await startLiveHarness(database, { env: () => ({ DELIVERY_CONCURRENCY: "1" }) });
      const { firstRcpt, answer } = holdFirstRcpt(h.sink);
      try {
        const ids = new Map<string, string>();
        for (const to of ["ada@example.net", "bob@example.net", "cy@example.net"]) ids.set(to, await h.send({ to }));
        const { knex } = h.t.runtime.db;
        const jobs = async () => (await knex("jobs").select("message_id", "locked_by")) as Array<{ message_id: string; locked_by: string | null }>;

        h.t.runtime.worker.start();
        const handedOff = ids.get(await withTimeout(firstRcpt, 10_000, "the first RCPT"))!;
        const waiting = [...ids.values()].filter((id) => id !== handedOff);
        await eventually(async () => (await jobs()).filter((job) => job.locked_by !== null).length === 3, 5_000, "every job claimed");
        const stopped = h.t.runtime.worker.stop();

        // While the MX still holds the first one, the others are back in the queue, unleased.
        await eventually(async () => (await jobs()).filter((job) => waiting.includes(job.message_id)).every((job) => job.locked_by === null), 5_000, "the waiting jobs given back");
        expect((await jobs()).find((job) => job.message_id === handedOff)?.locked_by).not.toBeNull();

        answer();
        await withTimeout(stopped, 10_000, "the worker's stop");
        expect((await h.message(handedOff)).status).toBe("delivered");
        expect((await jobs()).map((job) => job.message_id).sort()).toEqual([...waiting].sort());
        for (const id of waiting) {
          expect((await h.message(id)).status).toBe("queued");
          expect((await h.events(id)).map((e) => e.type)).toEqual(["message.queued"]);
        }
        expect(h.sink.accepted.map((mail) => mail.rcptTo)).toEqual([[[...ids].find(([, id]) => id === handedOff)![0]]]);
      } finally {
        answer();
        await h.close();
      }
    });

    it("gives back a job still waiting for a connection to a busy destination, never sending it, and finishes the one whose transaction began", { timeout: 60_000 }, async () => {
      // One connection to example.net: the first message's transaction holds it while the MX
      // waits to answer its RCPT (for less than the command timeout), and the second waits in
      // the pool for that connection.
      const h = await startLiveHarness(database, { env: () => ({ SMTP_MAX_CONNECTIONS_PER_DESTINATION: "1", SMTP_COMMAND_TIMEOUT_MS: "60000" }) });
      const sends = vi.spyOn(SmtpPool.prototype, "send");
      const { firstRcpt, answer } = holdFirstRcpt(h.sink);
      try {
        const ids = new Map<string, string>();
        for (const to of ["ada@example.net", "bob@example.net"]) ids.set(to, await h.send({ to }));
        const { knex } = h.t.runtime.db;
        const jobs = async () => (await knex("jobs").select("message_id", "locked_by")) as Array<{ message_id: string; locked_by: string | null }>;

        h.t.runtime.worker.start();
        const begunTo = await withTimeout(firstRcpt, 10_000, "the first RCPT");
        const begun = ids.get(begunTo)!;
        const waiting = [...ids.values()].find((id) => id !== begun)!;
        // The live transport's pool, as its first send found it.
        const pool = sends.mock.contexts[0] as SmtpPool;
        await eventually(async () => pool.stats().waiting === 1, 10_000, "the second send waiting for the connection");
        const stopped = h.t.runtime.worker.stop();

        // While the MX still holds the first one, the one waiting for its connection is back in the queue.
        await eventually(async () => (await jobs()).find((job) => job.message_id === waiting)?.locked_by === null, 5_000, "the waiting job given back");
        expect((await jobs()).find((job) => job.message_id === begun)?.locked_by).not.toBeNull();

        answer();
        await withTimeout(stopped, 10_000, "the worker's stop");
        expect((await h.message(begun)).status).toBe("delivered");
        expect((await h.message(waiting)).status).toBe("queued");
        expect((await h.events(waiting)).map((e) => e.type)).toEqual(["message.queued"]);
        expect((await jobs()).map((job) => job.message_id)).toEqual([waiting]);
        // Its turn came after the stop: the connection went back to the pool unused, and nothing was sent.
        expect(h.sink.messages.map((mail) => mail.rcptTo)).toEqual([[begunTo]]);
        expect(pool.stats()).toMatchObject({ open: 1, idle: 1, waiting: 0 });
      } finally {
        answer();
        sends.mockRestore();
        await h.close();
      }
    });
  });
});

describe("bin/mailroom-server", () => {

  /** The heap limit a worker started by the launcher with `env` reports, and whether it warned about it. */
  const startedHeap = async (env: NodeJS.ProcessEnv, command?: string[]) => {
    const db = await databases[0]!.create();
    drop = db.drop;
    server = startServer({ ...process.env, DATABASE_URL: db.url, DATA_DIR: db.dataDir, LOG_LEVEL: "info", NODE_OPTIONS: "", ...env }, ["worker"], command);
    const running = await waitForLog(server, (r) => r.msg === "mailroom is running", 60_000);
    return { heapLimitMb: running.heap_limit_mb, warned: server.records.some((r) => String(r.msg).includes("without the heap limit")) };
  };

  // Padded as src/config.ts takes it: Number(" 512 ") is 512.
  it.each(["512", " 512 "])("starts Node with the heap limit HEAP_LIMIT_MB (%j) gives", { timeout: 60_000 }, async (limit) => {
    expect(await startedHeap({ HEAP_LIMIT_MB: limit })).toEqual({ heapLimitMb: heapLimitFor(512), warned: false });
  });

  it("leaves Node's own limit with HEAP_LIMIT_MB=0", { timeout: 60_000 }, async () => {
    expect(await startedHeap({ HEAP_LIMIT_MB: "0" })).toEqual({ heapLimitMb: heapLimitFor(), warned: false });
  });

  // V8 takes a flag's words joined by dashes or by underscores.
  it.each(["--max-old-space-size=300", "--max_old_space_size=300"])("lets %s in NODE_OPTIONS win", { timeout: 60_000 }, async (flag) => {
    expect(await startedHeap({ HEAP_LIMIT_MB: "512", NODE_OPTIONS: flag })).toEqual({ heapLimitMb: heapLimitFor(300), warned: false });
  });

  it("is what the server asks for: started another way, it says the limit is missing", { timeout: 60_000 }, async () => {
    expect(await startedHeap({}, [process.execPath, "--import", "tsx", "src/main.ts"])).toEqual({ heapLimitMb: heapLimitFor(), warned: true });
  });

  it.each(["--max-old-space-size=300", "--max_old_space_size=300"])("does not say the limit is missing when started another way with %s", { timeout: 60_000 }, async (flag) => {
    expect(await startedHeap({}, [process.execPath, flag, "--import", "tsx", "src/main.ts"])).toEqual({ heapLimitMb: heapLimitFor(300), warned: false });
  });

  // As src/config.ts reads every setting: a compose file's `HEAP_LIMIT_MB=${HEAP_LIMIT_MB}` gives
  // a blank value when the operator set none.
  it.each(["", "  "])("takes a blank HEAP_LIMIT_MB (%j) as unset: the default limit", { timeout: 60_000 }, async (blank) => {
    expect(await startedHeap({ HEAP_LIMIT_MB: blank })).toEqual({ heapLimitMb: heapLimitFor(Number(SETTINGS.heapLimitMb.default)), warned: false });
  });

  it("refuses a HEAP_LIMIT_MB that is not a number of MiB, before starting anything", () => {
    const run = spawnSync(LAUNCHER, ["serve"], { cwd: ROOT, env: { ...process.env, HEAP_LIMIT_MB: "1g" }, encoding: "utf8" });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/HEAP_LIMIT_MB must be a whole number of MiB, not "1g"/);
  });
});

/**
 * Makes the sink hold every RCPT until answer() (a slow MX): firstRcpt is the first address the
 * sink was given, once a transaction is under way.
 */
function holdFirstRcpt(sink: LiveHarness["sink"]): { firstRcpt: Promise<string>; answer: () => void } {
  let answer = () => {};
  const slowMx = new Promise<void>((resolve) => (answer = resolve));
  const firstRcpt = new Promise<string>((resolve) =>
    sink.onRcpt((address) => {
      resolve(address);
      return slowMx.then(() => undefined);
    }),
  );
  return { firstRcpt, answer };
}
