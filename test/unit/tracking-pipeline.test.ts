import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/domain/clock.js";
import { ByteBudget } from "../../src/delivery/byte-budget.js";
import { attemptDelivery, type Delivery, type PipelineContext } from "../../src/delivery/pipeline.js";
import type { MessageRecord, RecipientRecord } from "../../src/db/repositories/messages.js";
import type { TrackingLinks } from "../../src/tracking/links.js";

/**
 * The delivery pipeline's per-recipient renderings (docs/tracking.md#one-message-one-rendering-per-recipient):
 * each recipient's copy carries its own tokens, so a tracked message to 50 recipients is 50 copies.
 * They are rendered one at a time, and held within the worker's byte budget.
 */

const COPY = "x".repeat(1000);
const DELIVERED: Delivery = { outcome: "delivered", bounceType: null, smtpCode: 250, enhancedStatus: "2.0.0", response: "250 2.0.0 OK", remoteHost: null };

function aMessage(recipients: number): MessageRecord {
  const now = Date.now();
  return {
    id: "msg_01jd3k8m2q5v7w9x1y3z5a7b9c",
    scope: { workspaceId: "ws_01jd3k8m2q5v7w9x1y3z5a7b9c", environment: "sandbox" },
    status: "queued",
    from: "hello@acme.example",
    html: "<p>Hi</p>",
    text: null,
    mime: null,
    tracking: { opens: true, clicks: false, replies: false, unsubscribe: false },
    recipients: Array.from({ length: recipients }, (_, position): RecipientRecord => ({ id: position + 1, position, type: "to", email: `r${position}@example.com`, name: null, status: "queued", detail: null, attempts: 0, updated_at: now, opened_at: null, clicked_at: null, replied_at: null, complained_at: null, unsubscribed_at: null })),
  } as unknown as MessageRecord;
}

/** A pipeline whose rendering and hand-offs the test drives: each hand-off waits until the test ends it. */
function harness(budget: ByteBudget, failRendering: (position: number) => boolean = () => false) {
  const log: string[] = [];
  let rendering = 0;
  let mostAtOnce = 0;
  const handOffs = new Map<number, () => void>();
  const ctx = {
    now: Date.now(),
    clock: new ManualClock(Date.now()),
    claimedBy: "worker-1",
    identity: null,
    suppressions: new Map(),
    verp: {} as PipelineContext["verp"],
    tracking: { parts: (_message: MessageRecord, position: number) => ({ html: `<p>${position}</p>`, headers: {}, replyTo: null }) } as unknown as TrackingLinks,
    compose: async ({ tracked }) => {
      mostAtOnce = Math.max(mostAtOnce, ++rendering);
      log.push(`render ${tracked!.html}`);
      await new Promise((resolve) => setImmediate(resolve));
      rendering--;
      if (failRendering(Number(/\d+/.exec(tracked!.html ?? "")![0]))) throw new Error("compose thread exited");
      return { mime: COPY, text: null };
    },
    deliver: (recipient, _envelope, _mime, _message, begin) => {
      begin();
      log.push(`hand off ${recipient.position}`);
      return new Promise<Delivery>((resolve) => handOffs.set(recipient.position, () => resolve(DELIVERED)));
    },
    budget,
    log: { error: (_obj: object, msg: string) => log.push(`error ${msg}`) },
    retryDelayMs: () => 60_000,
    expiresAt: Date.now() + 3_600_000,
  } satisfies PipelineContext;
  return { ctx, log, handOffs, mostAtOnce: () => mostAtOnce };
}

const turns = async (n = 20) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe("attemptDelivery with a copy per recipient", () => {
  it("renders the copies one at a time, handing each off as it is ready", async () => {
    const budget = new ByteBudget(1_000_000);
    const { ctx, log, handOffs, mostAtOnce } = harness(budget);
    const attempt = attemptDelivery(aMessage(3), ctx);
    await turns();
    expect(mostAtOnce()).toBe(1);
    expect(log).toEqual(["render <p>0</p>", "hand off 0", "render <p>1</p>", "hand off 1", "render <p>2</p>", "hand off 2"]);
    for (const end of handOffs.values()) end();
    const { change, rendering } = await attempt;
    expect(change.recipients.map((r) => r.status)).toEqual(["delivered", "delivered", "delivered"]);
    expect(rendering?.mime).toBe(COPY);
    expect(budget.inHand).toBe(0);
  });

  it("holds copies beyond the first only while the byte budget has room, and renders the next when a hand-off gives one back", async () => {
    // Room for the message's own reservation and one more copy in flight.
    const budget = new ByteBudget(3000);
    const giveBack = await budget.take(1500);
    const { ctx, log, handOffs } = harness(budget);
    const attempt = attemptDelivery(aMessage(4), ctx);
    await turns();
    // The first copy goes under the message's own reservation, the second takes 1,000 bytes; the third waits.
    expect(log).toEqual(["render <p>0</p>", "hand off 0", "render <p>1</p>", "hand off 1"]);
    expect(budget.inHand).toBe(2500);
    handOffs.get(1)!();
    await turns();
    expect(log.slice(4)).toEqual(["render <p>2</p>", "hand off 2"]);
    handOffs.get(0)!();
    await turns();
    expect(log.slice(6)).toEqual(["render <p>3</p>", "hand off 3"]);
    handOffs.get(2)!();
    handOffs.get(3)!();
    const { change } = await attempt;
    // Outcomes are recorded in the recipients' order, whatever order the hand-offs ended in.
    expect(change.events.map((e) => e.recipient)).toEqual(["r0@example.com", "r1@example.com", "r2@example.com", "r3@example.com"]);
    expect(budget.inHand).toBe(1500);
    giveBack();
  });

  it("records the copies handed off when a later copy cannot be rendered, and defers the rest", async () => {
    const budget = new ByteBudget(1_000_000);
    const { ctx, log, handOffs } = harness(budget, (position) => position === 1);
    const attempt = attemptDelivery(aMessage(3), ctx);
    await turns();
    handOffs.get(0)!();
    const { change } = await attempt;
    // Recipient 0 was handed off: a retry of the whole attempt would send it twice.
    expect(log).toEqual(["render <p>0</p>", "hand off 0", "render <p>1</p>", "error could not render a recipient's copy; deferring the rest"]);
    expect(change.recipients.map((r) => r.status)).toEqual(["delivered", "deferred", "deferred"]);
    expect(change.events.map((e) => [e.recipient, e.type, e.data.enhanced_status])).toEqual([
      ["r0@example.com", "message.delivered", "2.0.0"],
      ["r1@example.com", "message.deferred", "4.3.0"],
      ["r2@example.com", "message.deferred", "4.3.0"],
    ]);
    expect(change.job).toEqual({ action: "reschedule", runAt: expect.any(Number) });
    expect(budget.inHand).toBe(0);
  });

  it("fails the whole attempt when the first copy cannot be rendered, nothing handed off", async () => {
    const { ctx, log } = harness(new ByteBudget(1_000_000), (position) => position === 0);
    await expect(attemptDelivery(aMessage(2), ctx)).rejects.toThrow("compose thread exited");
    expect(log).toEqual(["render <p>0</p>"]);
  });
});
