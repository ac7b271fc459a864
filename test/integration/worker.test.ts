import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { secretKeys } from "../../src/domain/secret-keys.js";
import { composeMessage, type Compose } from "../../src/delivery/compose.js";
import { ByteBudget } from "../../src/delivery/byte-budget.js";
import { attemptDelivery } from "../../src/delivery/pipeline.js";
import { DeliveryWorker, type Route, type WorkerDependencies } from "../../src/delivery/worker.js";
import { migrationSource } from "../../src/db/migrations/index.js";
import { simulateDelivery } from "../../src/delivery/transports/sandbox.js";
import { Verp } from "../../src/domain/verp.js";
import { TrackingLinks } from "../../src/tracking/links.js";
import { databases } from "../helpers/databases.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

/**
 * A delivery worker on the app's database whose sandbox route is `route` (a stand-in for the live
 * one, waits included); a failure it logs fails the test.
 */
function testWorker(
  t: TestApp,
  route: Route,
  { compose = composeMessage, maxBytesInHand = 64 * 1024 * 1024, keptSourceMaxBytes, ...deps }: { compose?: Compose; maxBytesInHand?: number; keptSourceMaxBytes?: number } & Partial<Pick<WorkerDependencies, "groupCommit" | "log" | "messages">> = {},
): DeliveryWorker {
  const verp = new Verp(secretKeys("ab".repeat(32)));
  return new DeliveryWorker(
    {
      jobs: t.runtime.repositories.jobs,
      messages: t.runtime.repositories.messages,
      suppressions: t.runtime.repositories.suppressions,
      groupCommit: t.runtime.repositories.groupCommit,
      identity: async () => null,
      verp,
      tracking: new TrackingLinks(t.runtime.tracking, "http://localhost:3000", verp),
      compose,
      routes: { sandbox: route },
      clock: t.clock,
      metrics: t.runtime.metrics,
      log: { error: (obj, msg) => expect.fail(`${msg}: ${JSON.stringify(obj)}`) },
      ...deps,
    },
    { batchSize: 50, pollMs: 10, leaseSeconds: 300, lifetimeMs: 86_400_000, maxInFlight: 100, maxBytesInHand, ...(keptSourceMaxBytes === undefined ? {} : { keptSourceMaxBytes }) },
  );
}

describe.each(databases)("delivery worker ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(database);
  });
  afterEach(async () => t.close());

  const sendOk = async (to: string | string[] = "ada@example.com") => {
    const res = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ to }) });
    expect(res.statusCode, res.body).toBe(202);
    return res.json().id as string;
  };
  const message = async (id: string) => (await t.call({ method: "GET", url: `/v1/messages/${id}` })).json();
  const events = async (id: string): Promise<Array<{ type: string; recipient: string | null }>> =>
    (await t.call({ method: "GET", url: `/v1/messages/${id}/events?limit=100` })).json().data;
  const jobCount = async () => Number(((await t.runtime.db.knex("jobs").count({ n: "*" }).first()) as { n: number | string }).n);
  const leaseMs = () => t.runtime.config.worker.leaseSeconds * 1000;

  /** A worker that claims jobs and dies before it commits anything. */
  const claimAndDie = async () => {
    const now = t.clock.now();
    return t.runtime.repositories.jobs.claim({ now, limit: 100, leaseUntil: now + leaseMs(), workerId: "dead-worker", environments: ["sandbox"] });
  };

  describe("processing", () => {
    it("a restart in the middle of processing loses nothing: leased jobs are reclaimed after the lease and delivered once", async () => {
      const ids = [await sendOk(["ada@example.com", "grace@example.com"]), await sendOk("bounced@simulator.test"), await sendOk("clicked@simulator.test")];
      const claimed = await claimAndDie();
      expect(claimed.map((j) => j.message_id).sort()).toEqual([...ids].sort());

      // While the dead worker's lease runs, nobody else may take its jobs.
      await t.drain();
      t.clock.advance(leaseMs() - 1000);
      await t.drain();
      for (const id of ids) expect((await message(id)).status).toBe("queued");
      expect(await jobCount()).toBe(3);

      t.clock.advance(1001);
      await t.drain();
      expect((await message(ids[0]!)).status).toBe("delivered");
      expect((await message(ids[1]!)).status).toBe("bounced");
      expect((await message(ids[2]!)).status).toBe("delivered");
      expect(await jobCount()).toBe(0);

      const outcomes = (await Promise.all(ids.map(events))).flat().filter((e) => ["message.delivered", "message.bounced"].includes(e.type));
      expect(outcomes.map((e) => e.recipient).sort()).toEqual(["ada@example.com", "bounced@simulator.test", "clicked@simulator.test", "grace@example.com"]);

      // Nothing is left to do, however long we wait.
      t.clock.advance(10 * leaseMs());
      await t.drain();
      expect((await Promise.all(ids.map(events))).flat()).toHaveLength(1 + 2 + 1 + 1 + 1 + 1 + 2);
    });

    /** A worker that claims the message's job as `workerId` and gets as far as the hand-off: its attempt, not yet recorded. */
    const slowAttempt = async (id: string, workerId: string) => {
      const now = t.clock.now();
      await t.runtime.repositories.jobs.claim({ now, limit: 10, leaseUntil: now + leaseMs(), workerId, environments: ["sandbox"] });
      const [record] = await t.runtime.repositories.messages.findMany({ workspaceId: t.workspace.id, environment: "sandbox" }, [id]);
      return attemptDelivery(record!, {
        now,
        clock: t.clock,
        claimedBy: workerId,
        identity: null,
        suppressions: new Map(),
        verp: new Verp(secretKeys("ab".repeat(32))),
        tracking: new TrackingLinks(t.runtime.tracking, "http://localhost:3000", new Verp(secretKeys("ab".repeat(32)))),
        compose: composeMessage,
        budget: new ByteBudget(64 * 1024 * 1024),
        log: { error: () => undefined },
        deliver: async (recipient, _envelope, _mime, message) => simulateDelivery(recipient, message),
        retryDelayMs: () => 30_000,
        expiresAt: now + 86_400_000,
      });
    };

    it("does not record an outcome twice when a worker finishes after its lease was taken over", async () => {
      const id = await sendOk(["ada@example.com", "grace@example.com"]);
      // A slow worker claims the job and gets as far as the hand-off...
      const { change: late } = await slowAttempt(id, "slow-worker");

      // ...its lease runs out, another worker delivers the message...
      t.clock.advance(leaseMs() + 1);
      await t.drain();
      const delivered = await message(id);
      expect(delivered.status).toBe("delivered");

      // ...and then the slow one tries to record what it did.
      await t.runtime.repositories.groupCommit.submit(t.runtime.repositories.messages.changeWriter, late);
      expect(await message(id)).toEqual(delivered);
      expect((await events(id)).map((e) => [e.type, e.recipient])).toEqual([
        ["message.queued", null],
        ["message.delivered", "ada@example.com"],
        ["message.delivered", "grace@example.com"],
      ]);
    });

    it("does not keep the source of an attempt whose lease was taken over", async () => {
      const id = await sendOk();
      const { change, rendering } = await slowAttempt(id, "slow-worker");
      expect(rendering).not.toBeNull();
      // Its lease runs out and another worker claims the job (and is still sending it)...
      t.clock.advance(leaseMs() + 1);
      expect(await claimAndDie()).toHaveLength(1);
      // ...when the slow one records its outcome with its small source.
      await t.runtime.repositories.groupCommit.submit(t.runtime.repositories.messages.changeWriter, { ...change, rendering: rendering! });
      expect(await message(id)).toMatchObject({ status: "queued", mime: null });
      expect((await events(id)).map((e) => e.type)).toEqual(["message.queued"]);
    });

    it("delivers each message once however often the worker runs", async () => {
      const id = await sendOk(["ada@example.com", "grace@example.com"]);
      await Promise.all([t.drain(), t.drain(), t.drain()]);
      await t.drain();
      expect((await events(id)).map((e) => e.type)).toEqual(["message.queued", "message.delivered", "message.delivered"]);
    });

  });

  describe("recording outcomes", () => {
    it("tries again to record an attempt's outcomes when their commit fails, so the message is not sent twice", async () => {
      const res = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage() });
      const id = res.json().id as string;
      const real = t.runtime.repositories.groupCommit;
      let failures = 1;
      const flaky = {
        submit: (writer: Parameters<typeof real.submit>[0], item: unknown) => {
          if (writer === t.runtime.repositories.messages.changeWriter && failures-- > 0) return Promise.reject(new Error("connection lost"));
          return real.submit(writer, item as never);
        },
      } as typeof real;
      const logged: string[] = [];
      let handedOff = 0;
      const worker = testWorker(
        t,
        {
          deliver: async (recipient, _envelope, _mime, message, begin) => {
            begin();
            handedOff++;
            return simulateDelivery(recipient, message);
          },
          retryDelayMs: () => 30_000,
        },
        { groupCommit: flaky, log: { error: (_obj, msg) => logged.push(msg) } },
      );
      await worker.tick();
      expect(logged).toEqual(["could not record delivery outcomes; trying again"]);
      expect(handedOff).toBe(1);
      expect((await t.call({ method: "GET", url: `/v1/messages/${id}` })).json().status).toBe("delivered");
      expect(await t.runtime.db.knex("jobs").where({ message_id: id }).count({ n: "*" }).first()).toMatchObject({ n: 0 });
    });

    /** A worker whose hand-offs are counted, and whose logged failures are collected instead of failing the test. */
    const countingWorker = (deps: Partial<Pick<WorkerDependencies, "messages">> & { keptSourceMaxBytes?: number } = {}) => {
      const seen = { handedOff: 0, logged: [] as string[] };
      const worker = testWorker(
        t,
        {
          deliver: async (recipient, _envelope, _mime, message, begin) => {
            begin();
            seen.handedOff++;
            return simulateDelivery(recipient, message);
          },
          retryDelayMs: () => 30_000,
        },
        { log: { error: (_obj, msg) => seen.logged.push(msg) }, ...deps },
      );
      return { worker, seen };
    };

    it("records the outcome of a message whose MIME is too large to keep and does not send it again", async () => {
      // 6 MiB of prose html and no text: well within the accept limit, but its source (the html
      // quoted-printable, the text derived from it, encoded too) with that text besides is about
      // 19 MiB as a statement carries it: past MariaDB's max_allowed_packet, which failed the
      // outcome's commit, and the message was sent again at every lease.
      const paragraph = `<p>${"Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. ".repeat(3)}</p>\n`;
      const html = paragraph.repeat(Math.ceil((6 * 1024 * 1024) / paragraph.length));
      const res = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ to: ["ada@example.com", "grace@example.com"], html }) });
      expect(res.statusCode, res.body).toBe(202);
      const id = res.json().id as string;

      const { worker, seen } = countingWorker();
      await worker.tick();
      t.clock.advance(leaseMs() + 1);
      await worker.tick();

      expect(seen.logged).toEqual([]);
      expect(seen.handedOff).toBe(2);
      const sent = await message(id);
      expect(sent.status).toBe("delivered");
      expect((await events(id)).map((e) => e.type)).toEqual(["message.queued", "message.delivered", "message.delivered"]);
      expect(await jobCount()).toBe(0);
      // The source is not kept; the text derived from the html is.
      expect(sent.mime).toBeNull();
      expect(sent.content_removed_at).toBeNull();
      expect(sent.text).toMatch(/^Lorem ipsum dolor sit amet/);
    });

    it("keeps the source only within its budget, and only the derived text when the source does not fit", async () => {
      const kept = await sendOk();
      const res = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ html: "<p>Hello</p>", attachments: [{ filename: "a.bin", content: Buffer.alloc(30_000, 1).toString("base64") }] }) });
      expect(res.statusCode, res.body).toBe(202);
      const textOnly = res.json().id as string;
      const { worker, seen } = countingWorker({ keptSourceMaxBytes: 20_000 });
      await worker.tick();
      t.clock.advance(leaseMs() + 1);
      await worker.tick();
      expect(seen.logged).toEqual([]);
      expect(seen.handedOff).toBe(2);
      expect((await message(kept)).mime).toMatch(/^Subject: Welcome\r$/m);
      expect(await message(textOnly)).toMatchObject({ status: "delivered", mime: null, text: "Hello" });
    });

    /** The messages repository, whose writes of sources kept apart from the outcomes (renderingWriter) all fail. */
    const failingRenderings = () => {
      const real = t.runtime.repositories.messages;
      return Object.assign(Object.create(real) as typeof real, {
        renderingWriter: { name: real.renderingWriter.name, write: () => Promise.reject(new Error("Connection lost: The server closed the connection.")) },
      });
    };

    it("logs a source it could not keep and neither records the outcome again nor sends the message again", async () => {
      // 1.5 MiB of prose html: its source is past LIMITS.inlineSourceMaxBytes, so it is kept apart.
      const paragraph = `<p>${"Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. ".repeat(3)}</p>\n`;
      const res = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ html: paragraph.repeat(Math.ceil((1.5 * 1024 * 1024) / paragraph.length)) }) });
      expect(res.statusCode, res.body).toBe(202);
      const id = res.json().id as string;
      const { worker, seen } = countingWorker({ messages: failingRenderings() });
      await worker.tick();
      t.clock.advance(leaseMs() + 1);
      await worker.tick();
      expect(seen.logged).toEqual(["could not keep a delivered message's rendered source"]);
      expect(seen.handedOff).toBe(1);
      expect(await message(id)).toMatchObject({ status: "delivered", mime: null });
      expect(await jobCount()).toBe(0);
    });

    it("keeps a small message's source with its outcomes, in the same write, not apart from them", async () => {
      const id = await sendOk();
      // Keeping sources apart fails: a small one does not go that way, so nothing is logged.
      const { worker, seen } = countingWorker({ messages: failingRenderings() });
      await worker.tick();
      t.clock.advance(leaseMs() + 1);
      await worker.tick();
      expect(seen.logged).toEqual([]);
      expect(seen.handedOff).toBe(1);
      const sent = await message(id);
      expect(sent).toMatchObject({ status: "delivered", text: "Hello Ada", content_removed_at: null });
      expect(sent.mime).toMatch(/^Subject: Welcome\r$/m);
      expect(await jobCount()).toBe(0);
    });

    it("does not put back the source of a message whose content the retention removed while it was being sent", async () => {
      const id = await sendOk();
      const worker = testWorker(t, {
        deliver: async (recipient, _envelope, _mime, record, begin) => {
          begin();
          // What removeContent writes (it picks settled messages only: this stands for any write
          // of it that lands between the attempt's load and its outcome).
          await t.runtime.db.knex("messages").where({ id }).update({ html: null, text: null, mime: null, content_removed_at: t.clock.now() });
          return simulateDelivery(recipient, record);
        },
        retryDelayMs: () => 30_000,
      });
      await worker.tick();
      expect(await message(id)).toMatchObject({ status: "delivered", html: null, text: null, mime: null, content_removed_at: new Date(t.clock.now()).toISOString() });
      expect(await jobCount()).toBe(0);
    });

    it("does not replace a source kept while the attempt was being sent with the attempt's own rendering", async () => {
      const id = await sendOk();
      const first = "Subject: Welcome\r\nMessage-ID: <first@acme.example>\r\n\r\nHello Ada\r\n";
      const { messages, groupCommit } = t.runtime.repositories;
      const worker = testWorker(t, {
        deliver: async (recipient, _envelope, _mime, record, begin) => {
          begin();
          // An earlier attempt's rendering, kept meanwhile (its worker's lease ran out mid-send).
          expect(await groupCommit.submit(messages.renderingWriter, { scope: record.scope, id, rendering: { mime: first, text: null }, maxBytes: 1024 })).toBe("kept");
          return simulateDelivery(recipient, record);
        },
        retryDelayMs: () => 30_000,
      });
      await worker.tick();
      expect(await message(id)).toMatchObject({ status: "delivered", mime: first });
      expect(await jobCount()).toBe(0);
    });

    it("derives a bounded text part from html whose text would be far longer than its markup", async () => {
      // html-to-text writes each <hr> (4 characters) as 78 dashes and a line break: 400 KB of
      // them made 8 MB of text, sent to every recipient and stored with the message.
      const html = "<hr>".repeat(100_000);
      const res = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ html }) });
      expect(res.statusCode, res.body).toBe(202);
      const id = res.json().id as string;
      await t.drain();
      const sent = await message(id);
      expect(sent.status).toBe("delivered");
      expect(sent.text.length).toBeLessThanOrEqual(html.length);
      expect(sent.text).toMatch(/^-{78}\n/);
      expect(sent.text.endsWith("\n\n[...]\n")).toBe(true);
      expect(sent.mime.length).toBeLessThan(3 * html.length);
    });
  });

  describe("deadline", () => {
    const MINUTE = 60 * 1000;
    /** A worker on this app's database whose sandbox hand-off is `deliver`: a stand-in for the live route, waits included. */
    const routedWorker = (deliver: Route["deliver"]) => testWorker(t, { deliver, retryDelayMs: () => 5 * MINUTE });

    it("fails with 4.4.7, sending nothing, a message whose deadline passed while it waited for its turn to be handed off", async () => {
      const res = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ expires_at: new Date(t.clock.now() + 10 * MINUTE).toISOString() }) });
      expect(res.statusCode, res.body).toBe(202);
      const id = res.json().id as string;
      let handedOff = 0;
      const worker = routedWorker(async (recipient, _envelope, _mime, record, begin) => {
        t.clock.advance(11 * MINUTE); // the destination's connections were busy until after expires_at
        begin();
        handedOff++;
        return simulateDelivery(recipient, record);
      });
      while ((await worker.tick()) > 0);
      expect(handedOff).toBe(0);
      expect((await message(id)).status).toBe("failed");
      const failed = (await t.call({ method: "GET", url: `/v1/messages/${id}/events` })).json().data.at(-1);
      expect(failed).toMatchObject({ type: "message.failed", recipient: "ada@example.com", data: { enhanced_status: "4.4.7" } });
      expect(await jobCount()).toBe(0);
    });

    it("schedules a deferred recipient's retry from when its attempt ended, not from when it began", async () => {
      const id = await sendOk();
      const worker = routedWorker(async (_recipient, _envelope, _mime, _record, begin) => {
        begin();
        t.clock.advance(20 * MINUTE); // a slow transaction
        return { outcome: "deferred", bounceType: null, smtpCode: 451, enhancedStatus: "4.7.1", response: "451 4.7.1 Try again later", remoteHost: "mx.example.com[192.0.2.1]" };
      });
      await worker.tick();
      const ended = t.clock.now();
      const deferred = (await t.call({ method: "GET", url: `/v1/messages/${id}/events` })).json().data.find((e: { type: string }) => e.type === "message.deferred");
      expect(deferred.data.next_attempt_at).toBe(new Date(ended + 5 * MINUTE).toISOString());
      const job = (await t.runtime.db.knex("jobs").where({ message_id: id }).first("run_at")) as { run_at: number | string };
      expect(Number(job.run_at)).toBe(ended + 5 * MINUTE);
    });
  });

  describe("byte budget (DELIVERY_MAX_BYTES_IN_HAND)", () => {
    /**
     * A worker on this app's database whose hand-off takes a while, recording the content bytes
     * of the messages it has in hand (from the start of composing to the end of the hand-off).
     */
    const budgetedWorker = (maxBytesInHand: number, sizeOf: (messageId: string) => number) => {
      const seen = { inHand: 0, peak: 0, peakMessages: 0, messages: 0, delivered: 0 };
      const byMessage = new Map<string, number>();
      const compose: Compose = async (request) => {
        const bytes = sizeOf(request.message.id);
        byMessage.set(request.message.id, bytes);
        seen.inHand += bytes;
        seen.messages++;
        seen.peak = Math.max(seen.peak, seen.inHand);
        seen.peakMessages = Math.max(seen.peakMessages, seen.messages);
        return composeMessage(request);
      };
      const worker = testWorker(
        t,
        {
          deliver: async (recipient, _envelope, _mime, message) => {
            await new Promise((resolve) => setTimeout(resolve, 30));
            seen.inHand -= byMessage.get(message.id)!;
            seen.messages--;
            seen.delivered++;
            return simulateDelivery(recipient, message);
          },
          retryDelayMs: () => 30_000,
        },
        { compose, maxBytesInHand },
      );
      return { worker, seen };
    };
    const jobSizes = async () => {
      const rows = (await t.runtime.db.knex("jobs").select("message_id", "content_bytes")) as Array<{ message_id: string; content_bytes: number | string }>;
      return new Map(rows.map((r) => [r.message_id, Number(r.content_bytes)]));
    };

    it("holds no more messages than fit in the budget, and delivers every one", async () => {
      const html = `<p>${"x".repeat(200_000)}</p>`;
      const sent: string[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ to: `reader${i}@example.com`, html }) });
        expect(res.statusCode, res.body).toBe(202);
        sent.push(res.json().id as string);
      }
      const sizes = await jobSizes();
      const size = sizes.get(sent[0]!)!;
      // The job weighs the content as stored: at least the html (the subject and any text add to it).
      expect(size).toBeGreaterThanOrEqual(html.length);

      // Room for three of them at once (the six are the same size).
      const { worker, seen } = budgetedWorker(3 * size + 10_000, (id) => sizes.get(id)!);
      while ((await worker.tick()) > 0);
      expect(seen.delivered).toBe(6);
      expect(seen.peak).toBeLessThanOrEqual(3 * size + 10_000);
      expect(seen.peak).toBeGreaterThanOrEqual(3 * size); // three at once: the budget is used, not just obeyed
      for (const id of sent) expect((await message(id)).status).toBe("delivered");
    });

    it("weighs jobs queued before the upgrade that added sizes as the accept path weighs new ones", async () => {
      await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ html: `<p>${"z".repeat(5_000)}</p>`, text: "Plain words", attachments: [{ filename: "a.txt", content: Buffer.from("attached").toString("base64") }] }) });
      const atAccept = await jobSizes();
      const { knex } = t.runtime.db;
      await knex.migrate.down({ migrationSource, name: "008-job-sizes" });
      expect(await knex.schema.hasColumn("jobs", "content_bytes")).toBe(false);
      await knex.migrate.latest({ migrationSource });
      expect(await jobSizes()).toEqual(atAccept);
    });

    it("delivers a message larger than the whole budget, alone", async () => {
      const small = [await sendOk("ada@example.com"), await sendOk("grace@example.com")];
      const res = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ to: "big@example.com", html: `<p>${"y".repeat(300_000)}</p>` }) });
      expect(res.statusCode, res.body).toBe(202);
      const big = res.json().id as string;
      const sizes = await jobSizes();

      const { worker, seen } = budgetedWorker(100_000, (id) => sizes.get(id)!);
      while ((await worker.tick()) > 0);
      expect(seen.delivered).toBe(3);
      // While the large one was in hand nothing else was: the most bytes ever held is its own size.
      expect(seen.peak).toBe(sizes.get(big));
      for (const id of [...small, big]) expect((await message(id)).status).toBe("delivered");
    });
  });

  describe("durability", () => {
    it("keeps accepted messages and their jobs across a restart, and the next process delivers them", async () => {
      const queued = await sendOk(["ada@example.com", "bounced@simulator.test"]);
      const scheduledRes = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage({ scheduled_at: new Date(t.clock.now() + 3600_000).toISOString() }) });
      expect(scheduledRes.statusCode).toBe(202);
      const scheduled = scheduledRes.json().id as string;
      const before = { queued: await message(queued), scheduled: await message(scheduled) };
      const oldRuntime = t.runtime;

      await t.restart();
      expect(t.runtime).not.toBe(oldRuntime);

      expect(await message(queued)).toEqual(before.queued);
      expect(await message(scheduled)).toEqual(before.scheduled);
      expect(await jobCount()).toBe(2);

      await t.drain();
      expect(await message(queued)).toMatchObject({ status: "delivered", recipients: [{ status: "delivered" }, { status: "bounced" }] });
      expect((await message(scheduled)).status).toBe("scheduled");

      t.clock.advance(3600_000);
      await t.drain();
      expect((await message(scheduled)).status).toBe("delivered");
      expect(await jobCount()).toBe(0);
    });

    it("reclaims in a new process the jobs a dead process had leased", async () => {
      const id = await sendOk();
      expect(await claimAndDie()).toHaveLength(1);
      await t.restart();
      await t.drain();
      expect((await message(id)).status).toBe("queued");
      t.clock.advance(leaseMs() + 1);
      await t.drain();
      expect((await message(id)).status).toBe("delivered");
      expect((await events(id)).filter((e) => e.type === "message.delivered")).toHaveLength(1);
    });
  });
});
