import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { composeMessage } from "../../src/delivery/compose.js";
import { attemptDelivery } from "../../src/delivery/pipeline.js";
import { simulateDelivery } from "../../src/delivery/transports/sandbox.js";
import { Verp } from "../../src/domain/verp.js";
import { TrackingLinks } from "../../src/tracking/links.js";
import { databases } from "../helpers/databases.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

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

    it("does not record an outcome twice when a worker finishes after its lease was taken over", async () => {
      const id = await sendOk(["ada@example.com", "grace@example.com"]);
      // A slow worker claims the job and gets as far as the hand-off...
      const now = t.clock.now();
      await t.runtime.repositories.jobs.claim({ now, limit: 10, leaseUntil: now + leaseMs(), workerId: "slow-worker", environments: ["sandbox"] });
      const [record] = await t.runtime.repositories.messages.findMany({ workspaceId: t.workspace.id, environment: "sandbox" }, [id]);
      const late = await attemptDelivery(record!, {
        now,
        claimedBy: "slow-worker",
        identity: null,
        suppressions: new Map(),
        verp: new Verp("ab".repeat(32)),
        tracking: new TrackingLinks(t.runtime.tracking, "http://localhost:3000", new Verp("ab".repeat(32))),
        compose: composeMessage,
        deliver: async (recipient, _envelope, _mime, message) => simulateDelivery(recipient, message),
        retryDelayMs: () => 30_000,
        expiresAt: now + 86_400_000,
      });

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

    it("delivers each message once however often the worker runs", async () => {
      const id = await sendOk(["ada@example.com", "grace@example.com"]);
      await Promise.all([t.drain(), t.drain(), t.drain()]);
      await t.drain();
      expect((await events(id)).map((e) => e.type)).toEqual(["message.queued", "message.delivered", "message.delivered"]);
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
