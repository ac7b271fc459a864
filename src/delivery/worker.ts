import { addressOf, domainOf } from "../domain/addresses.js";
import type { Clock } from "../domain/clock.js";
import type { Environment, Scope } from "../domain/environments.js";
import { LIMITS } from "../domain/limits.js";
import type { Verp } from "../domain/verp.js";
import type { TrackingLinks } from "../tracking/links.js";
import type { GroupCommit } from "../db/group-commit.js";
import type { JobRow, JobsRepository } from "../db/repositories/jobs.js";
import { renderingBytes, type MessageChange, type MessageRecord, type MessagesRepository, type RecipientRecord } from "../db/repositories/messages.js";
import type { SuppressionsRepository } from "../db/repositories/suppressions.js";
import type { Metrics } from "../metrics.js";
import { batchLoader } from "../db/batch-loader.js";
import { ByteBudget } from "./byte-budget.js";
import { ClaimLoop } from "./claim-loop.js";
import type { Compose } from "./compose.js";
import { attemptDelivery, type Attempt, type Delivery, type PipelineContext, type SendingIdentity } from "./pipeline.js";
import { deliveryDeadline } from "./retry-policy.js";
import type { Envelope } from "./transports/transport.js";
import { workerId } from "./worker-id.js";

export interface WorkerSettings {
  batchSize: number;
  pollMs: number;
  leaseSeconds: number;
  /** The longest a message is retried after it is due (DELIVERY_LIFETIME_SECONDS). */
  lifetimeMs: number;
  /** Messages a running worker works on at once; it claims more as they finish. */
  maxInFlight: number;
  /** Content bytes of the messages it holds at once (DELIVERY_MAX_BYTES_IN_HAND). */
  maxBytesInHand: number;
  /** The largest rendered source it keeps (MessagesRepository.renderingWriter; it bounds what is kept with the outcome too); LIMITS.keptSourceMaxBytes unless set. */
  keptSourceMaxBytes?: number;
}

type Suppressions = Awaited<ReturnType<SuppressionsRepository["findByEmails"]>>;

/** How one environment's mail leaves: the hand-off and the wait before a deferred retry. */
export interface Route {
  /**
   * Hands the message to one recipient. Calls `begin()` right before the hand-off really begins
   * (the live transport once it holds a connection to the destination, before MAIL FROM; the
   * sandbox at once), and not at all when the attempt ends without one (a DNS answer, no host
   * reachable). When begin() throws, nothing is handed off and deliver() rejects with its error.
   */
  deliver(recipient: RecipientRecord, envelope: Envelope, mime: Buffer, message: MessageRecord, begin: () => void): Promise<Delivery>;
  retryDelayMs(attempt: number): number;
}

/**
 * Where a held job is: `waiting` until its first hand-off begins (the budget, loading, rendering,
 * DNS, its turn for a connection to the destination and an SMTP transaction slot), `handedOff`
 * from then on, `withdrawn` when the worker stopped before that.
 */
type JobState = "waiting" | "handedOff" | "withdrawn";

/**
 * One claim of a job by this worker. A job given back and claimed again gets a new Hold, so that
 * a hand-off still pending from the first claim (a send queued in the SMTP pool) can never begin
 * under the second.
 */
interface Hold {
  job: JobRow;
  state: JobState;
}

/**
 * Unwinds the pipeline of a job withdrawn at its hand-off: the pipeline has no outcome for "not
 * attempted", and none may be recorded, as the job goes back to the queue untouched.
 */
class Withdrawn extends Error {}

export interface WorkerDependencies {
  jobs: JobsRepository;
  messages: MessagesRepository;
  suppressions: SuppressionsRepository;
  groupCommit: GroupCommit;
  /** The workspace's sending domain (DKIM keys, return path), or null when it has none. */
  identity(workspaceId: string, domain: string): Promise<SendingIdentity | null>;
  verp: Verp;
  /** Each recipient's tracking links (open image, click redirects, List-Unsubscribe, reply address). */
  tracking: TrackingLinks;
  /** Renders and DKIM-signs a message: on the compose threads, or on this event loop. */
  compose: Compose;
  /** The environments this worker delivers, each by its route (it claims only their jobs). */
  routes: Partial<Record<Environment, Route>>;
  clock: Clock;
  metrics: Metrics;
  log: { error(obj: object, msg: string): void };
}

/**
 * Claims due delivery jobs, runs each message through the pipeline and commits each outcome as
 * soon as it is known. Jobs are leased: a worker that dies mid-batch leaves its jobs to be
 * reclaimed when the lease ends, so delivery is at-least-once (and the stable Message-ID lets
 * receivers deduplicate). A running worker renews the leases of what it holds, so a slow SMTP
 * server cannot make a live worker's message look abandoned, and it claims more work as
 * messages finish rather than batch by batch, so one slow destination does not hold up the rest.
 * On stop it finishes the messages whose hand-off has begun (for live mail, whose first SMTP
 * transaction has) and gives the other jobs back.
 */
export class DeliveryWorker {
  readonly id = workerId();
  /** The jobs this worker holds and has not finished, by id. */
  private readonly held = new Map<number, Hold>();
  private readonly claims: ClaimLoop<Hold>;
  private readonly budget: ByteBudget;

  constructor(
    private readonly deps: WorkerDependencies,
    private readonly settings: WorkerSettings,
  ) {
    const leaseMs = settings.leaseSeconds * 1000;
    this.budget = new ByteBudget(settings.maxBytesInHand);
    this.claims = new ClaimLoop({
      claim: (limit) => this.claim(limit),
      work: (holds) => this.work(holds),
      held: () => this.held.size,
      renewLeases: () => deps.jobs.renewLeases(this.id, [...this.held.keys()], deps.clock.now() + leaseMs),
      giveBack: () => this.releaseWaiting(),
      capacity: settings.maxInFlight,
      batchSize: settings.batchSize,
      pollMs: settings.pollMs,
      leaseMs,
      log: deps.log,
      messages: { claimFailed: "worker claim failed", renewFailed: "could not renew job leases" },
    });
  }

  start(): void {
    this.claims.start();
  }

  /** Gives back the jobs whose hand-off has not begun, finishes the others, then stops. */
  async stop(): Promise<void> {
    await this.claims.stop();
  }

  /** New work may be due (an in-process accept): skip the rest of the poll interval. */
  notify(): void {
    this.claims.notify();
  }

  /** Claims and processes one batch; returns how many jobs it claimed. */
  async tick(): Promise<number> {
    const claimed = await this.claim(this.settings.batchSize);
    await this.work(claimed);
    return claimed.length;
  }

  private async claim(limit: number): Promise<Hold[]> {
    const now = this.deps.clock.now();
    const environments = Object.keys(this.deps.routes) as Environment[];
    const claimed = await this.deps.jobs.claim({ now, limit, leaseUntil: now + this.settings.leaseSeconds * 1000, workerId: this.id, environments });
    return claimed.map((job) => {
      const hold: Hold = { job, state: "waiting" };
      this.held.set(job.id, hold);
      return hold;
    });
  }

  /**
   * At stop: releases every job not handed off, withdrawn or still waiting (when a waiting one's
   * turn comes, mayGoOn() finds it gone). Should the release fail, they are claimed again when
   * their lease ends.
   */
  private async releaseWaiting(): Promise<void> {
    const ids = [...this.held.values()].filter((hold) => hold.state !== "handedOff").map((hold) => hold.job.id);
    for (const id of ids) this.held.delete(id);
    await this.deps.jobs.release(this.id, ids).catch((error: unknown) => this.deps.log.error({ err: error }, "could not release delivery jobs"));
  }

  /**
   * Whether a job may go on towards its hand-off: not once it was given back, nor from stop() on
   * when it has not been handed off yet (then it is withdrawn, and releaseWaiting() releases it).
   */
  private mayGoOn(hold: Hold): boolean {
    if (this.held.get(hold.job.id) !== hold) return false; // given back
    if (hold.state === "waiting" && this.claims.stopping) hold.state = "withdrawn";
    return hold.state !== "withdrawn";
  }

  /**
   * What the route calls right before one of the job's hand-offs begins: for live mail, when its
   * connection is in hand and MAIL FROM about to go, not while it waits for its turn. The first
   * marks the job handed off, so its other recipients follow even while the worker stops: a
   * message is sent to all of its recipients or to none. Decided synchronously, so a job is never
   * both given back and handed off; one given back or withdrawn throws Withdrawn instead, which
   * the route passes on, and which unwinds the job's pipeline with nothing sent. Then the
   * pipeline's own `beforeBegin` may refuse (the deadline passed while the send waited): that
   * recipient is not handed off and fails, an outcome recorded like any other.
   */
  private begin(hold: Hold, beforeBegin: () => void): void {
    if (!this.mayGoOn(hold)) throw new Withdrawn();
    beforeBegin();
    hold.state = "handedOff";
  }

  /** The pipeline's hand-off for one job's recipients: the route's, told when it begins. */
  private handOff(hold: Hold, route: Route): PipelineContext["deliver"] {
    return (recipient, envelope, mime, message, beforeBegin) => route.deliver(recipient, envelope, mime, message, () => this.begin(hold, beforeBegin));
  }

  private async work(holds: Hold[]): Promise<void> {
    await Promise.all(groupByScope(holds).map((group) => this.processGroup(group)));
  }

  /**
   * Works the jobs of one scope. Each job first takes its message's size from the byte budget,
   * then its message is loaded: the messages whose budget is granted in the same turn are loaded
   * together (one query for all of them when the budget has room, as it nearly always has).
   */
  private async processGroup(holds: Hold[]): Promise<void> {
    const { job: first } = holds[0]!;
    const scope: Scope = { workspaceId: first.workspace_id, environment: first.environment as Environment };
    const route = this.deps.routes[scope.environment]!;
    const load = batchLoader((ids: string[]) => this.load(scope, ids));
    await Promise.all(
      holds.map(async (hold) => {
        const { job } = hold;
        const giveBack = await this.budget.take(job.content_bytes);
        try {
          if (!this.mayGoOn(hold)) return;
          const loaded = await load(job.message_id);
          if (loaded) await this.process(hold, loaded.record, route, loaded.suppressions);
        } catch (error) {
          this.deps.log.error({ err: error, message_id: job.message_id }, "could not load a claimed message");
        } finally {
          giveBack();
          // A withdrawn job stays held until releaseWaiting() gives it back; one given back is
          // no longer this hold's.
          if (hold.state !== "withdrawn" && this.held.get(job.id) === hold) this.held.delete(job.id);
        }
      }),
    );
  }

  /** Claimed messages with the suppressions of their recipients, by message id. */
  private async load(scope: Scope, ids: string[]): Promise<Map<string, { record: MessageRecord; suppressions: Suppressions }>> {
    const records = await this.deps.messages.findMany(scope, ids);
    const suppressions = await this.deps.suppressions.findByEmails(scope, [...new Set(records.flatMap((r) => r.recipients.map((p) => p.email)))]);
    return new Map(records.map((record) => [record.id, { record, suppressions }]));
  }

  /**
   * Commits an attempt's outcomes, trying again a few times when the commit fails: the mail has
   * been handed off, and outcomes never recorded would have the message sent again, to every
   * recipient, once the lease ends. Trying again is safe even when a failed commit did go
   * through (its outcome unknown): the change applies only while this worker still holds the
   * job's lease, which that commit gave up.
   */
  private async record(change: MessageChange): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.deps.groupCommit.submit(this.deps.messages.changeWriter, change);
      } catch (error) {
        const wait = RECORD_RETRY_DELAYS_MS[attempt];
        if (wait === undefined) throw error;
        this.deps.log.error({ err: error, message_id: change.messageId, attempt: attempt + 1 }, "could not record delivery outcomes; trying again");
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  /**
   * Whether a rendering is small enough to be kept in the outcome's own UPDATE
   * (LIMITS.inlineSourceMaxBytes, and never past the kept-source budget), measured as
   * renderingWriter measures it. Larger ones are kept apart, after the outcome (keep()).
   */
  private fitsWithOutcome(rendering: NonNullable<Attempt["rendering"]>): boolean {
    const maxBytes = Math.min(LIMITS.inlineSourceMaxBytes, this.keptSourceMaxBytes());
    // A string's length never exceeds its UTF-8 bytes: a large source is not walked to learn that.
    if (rendering.mime.length > maxBytes) return false;
    const { mime, text } = renderingBytes(rendering);
    return mime + text <= maxBytes;
  }

  private keptSourceMaxBytes(): number {
    return this.settings.keptSourceMaxBytes ?? LIMITS.keptSourceMaxBytes;
  }

  /**
   * Keeps the message's first rendering when too large to go with the outcome, after its outcomes
   * are recorded and apart from them: the mail is out and its outcomes are safe whatever happens
   * here, so a source too large to keep is left out, and one that fails to store is logged and
   * never tried again (a retry of the attempt would send the mail again).
   */
  private async keep(record: MessageRecord, rendering: NonNullable<Attempt["rendering"]>): Promise<void> {
    try {
      await this.deps.groupCommit.submit(this.deps.messages.renderingWriter, { scope: record.scope, id: record.id, rendering, maxBytes: this.keptSourceMaxBytes() });
    } catch (error) {
      this.deps.log.error({ err: error, message_id: record.id }, "could not keep a delivered message's rendered source");
    }
  }

  private async process(hold: Hold, record: MessageRecord, route: Route, suppressions: Suppressions): Promise<void> {
    const { metrics, log } = this.deps;
    try {
      const now = this.deps.clock.now();
      const due = record.scheduled_at ?? record.created_at;
      // Never later than the lifetime after it is due: a message rescheduled earlier keeps an
      // expires_at set for its later time, and a lifetime lowered since applies to it too.
      const expiresAt = deliveryDeadline(due, this.settings.lifetimeMs / 1000, record.expires_at);
      // Past its deadline a message only fails (the pipeline's first step), so its domain is not
      // read: keys that cannot be opened (SECRET_KEY changed without SECRET_KEY_PREVIOUS) would
      // otherwise throw here at every lease, and keep the job from ever ending.
      const identity = now >= expiresAt ? null : await this.deps.identity(record.scope.workspaceId, domainOf(addressOf(record.from)));
      const { change, rendering } = await attemptDelivery(record, {
        now,
        clock: this.deps.clock,
        claimedBy: this.id,
        identity,
        suppressions,
        verp: this.deps.verp,
        tracking: this.deps.tracking,
        compose: this.deps.compose,
        budget: this.budget,
        log,
        deliver: this.handOff(hold, route),
        retryDelayMs: route.retryDelayMs,
        expiresAt,
      });
      // A small rendering rides in the outcome's own UPDATE (one write of the message row, not
      // two); a larger one is kept apart, once the outcome is safe.
      const inline = rendering !== null && this.fitsWithOutcome(rendering);
      await this.record(inline ? { ...change, rendering } : change);
      if (rendering && !inline) await this.keep(record, rendering);
      metrics.jobs.inc({ outcome: change.job.action === "reschedule" ? "retry" : "done" });
      const waitedSeconds = Math.max(0, this.deps.clock.now() - due) / 1000;
      for (const r of change.recipients) {
        metrics.recipients.inc({ environment: record.scope.environment, outcome: r.status });
        if (r.status === "delivered") metrics.deliveryLatency.observe({ environment: record.scope.environment }, waitedSeconds);
      }
    } catch (error) {
      if (error instanceof Withdrawn) return;
      // A bug, not a mail outcome: keep the job leased so it is retried after the lease.
      metrics.jobs.inc({ outcome: "error" });
      log.error({ err: error, message_id: record.id }, "delivery pipeline failed");
    }
  }
}

/**
 * The waits before a worker tries again to record outcomes whose commit failed (the database
 * unreachable for a moment, a deadlock that outlasted group commit's own retries): about 20 s in
 * all, within the lease, which the claim loop goes on renewing meanwhile.
 */
export const RECORD_RETRY_DELAYS_MS = [250, 1000, 4000, 15_000];

function groupByScope(holds: Hold[]): Hold[][] {
  const groups = new Map<string, Hold[]>();
  for (const hold of holds) {
    const key = `${hold.job.workspace_id}\u0000${hold.job.environment}`;
    groups.set(key, [...(groups.get(key) ?? []), hold]);
  }
  return [...groups.values()];
}
