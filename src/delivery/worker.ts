import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import type { Clock } from "../domain/clock.js";
import type { Environment } from "../domain/environments.js";
import type { GroupCommit } from "../db/group-commit.js";
import type { JobRow, JobsRepository } from "../db/repositories/jobs.js";
import type { MessageChange, MessagesRepository } from "../db/repositories/messages.js";
import type { Metrics } from "../metrics.js";
import { attemptDelivery } from "./pipeline.js";
import type { Transport } from "./transports/transport.js";

export interface WorkerSettings {
  batchSize: number;
  pollMs: number;
  leaseSeconds: number;
  sandboxDeferSeconds: number;
}

interface Logger {
  error(obj: object, msg: string): void;
}

/**
 * Claims due delivery jobs, runs each message through the pipeline and commits the outcomes.
 * Jobs are leased: a worker that dies mid-batch leaves its jobs to be reclaimed when the lease
 * ends, so delivery is at-least-once (and the stable Message-ID lets receivers deduplicate).
 */
export class DeliveryWorker {
  readonly id = `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;

  constructor(
    private readonly jobs: JobsRepository,
    private readonly messages: MessagesRepository,
    private readonly groupCommit: GroupCommit,
    private readonly transports: Partial<Record<Environment, Transport>>,
    private readonly settings: WorkerSettings,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    private readonly log: Logger,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Finishes the batch in hand, then stops. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
  }

  /** New work may be due (an in-process accept): skip the rest of the poll interval. */
  notify(): void {
    this.wake?.();
  }

  /** Claims and processes one batch; returns how many jobs it claimed. */
  async tick(): Promise<number> {
    const now = this.clock.now();
    const environments = Object.keys(this.transports) as Environment[];
    const jobs = await this.jobs.claim({ now, limit: this.settings.batchSize, leaseUntil: now + this.settings.leaseSeconds * 1000, workerId: this.id, environments });
    const changes = await Promise.all(groupByScope(jobs).map((group) => this.processGroup(group)));
    await Promise.all(changes.flat().map((change) => this.groupCommit.submit(this.messages.changeWriter, change)));
    return jobs.length;
  }

  private async processGroup(jobs: JobRow[]): Promise<MessageChange[]> {
    const scope = { workspaceId: jobs[0]!.workspace_id, environment: jobs[0]!.environment as Environment };
    const transport = this.transports[scope.environment]!;
    const records = await this.messages.findMany(scope, jobs.map((j) => j.message_id));
    const changes: MessageChange[] = [];
    for (const record of records) {
      try {
        const change = await attemptDelivery(record, { transport, now: this.clock.now(), retryDelayMs: this.settings.sandboxDeferSeconds * 1000, claimedBy: this.id });
        changes.push(change);
        this.metrics.jobs.inc({ outcome: change.job.action === "reschedule" ? "retry" : "done" });
        for (const r of change.recipients) this.metrics.recipients.inc({ environment: scope.environment, outcome: r.status });
      } catch (error) {
        // A bug, not a mail outcome: keep the job leased so it is retried after the lease.
        this.metrics.jobs.inc({ outcome: "error" });
        this.log.error({ err: error, message_id: record.id }, "delivery pipeline failed");
      }
    }
    return changes;
  }

  private async run(): Promise<void> {
    while (this.running) {
      let claimed = 0;
      try {
        claimed = await this.tick();
      } catch (error) {
        this.log.error({ err: error }, "worker tick failed");
      }
      if (claimed === 0 && this.running) await this.sleep(this.settings.pollMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = null;
        done();
      };
    });
  }
}

function groupByScope(jobs: JobRow[]): JobRow[][] {
  const groups = new Map<string, JobRow[]>();
  for (const job of jobs) {
    const key = `${job.workspace_id}\u0000${job.environment}`;
    groups.set(key, [...(groups.get(key) ?? []), job]);
  }
  return [...groups.values()];
}
