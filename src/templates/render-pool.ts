import { Worker } from "node:worker_threads";
import type { FieldProblem, ReferencedVariables, RenderLimits, TemplateSources } from "./liquid.js";
import { WorkerProgress, type RenderedSources, type RenderOptions, type RenderRequest, type RenderResponse, type WorkerReady } from "./render-protocol.js";

export interface RenderPoolSettings {
  /** Worker threads; each renders one template at a time. */
  size: number;
  /** Hard limit per job once a worker starts it: past it the worker is terminated and replaced. */
  timeoutMs: number;
  /** Heap of each worker: a template that allocates past it kills its worker, not the server. */
  workerHeapMb: number;
  /** Largest variables a render takes, in bytes of UTF-8 JSON (default MAX_VARIABLES_BYTES). */
  maxVariablesBytes?: number;
  limits: RenderLimits;
}

/**
 * The largest variables a render is given, in bytes of UTF-8 JSON (docs/templates.md#limits).
 * A worker unpacks them into its heap before it renders: 9 MB of `[{},{},…]` is three million
 * objects, past a 128 MiB heap, and takes the worker down before any limit of the render applies.
 */
export const MAX_VARIABLES_BYTES = 1_048_576;

export type RenderOutcome =
  | { ok: true; rendered: RenderedSources }
  | { ok: false; phase: "syntax" | "render"; problems: FieldProblem[] }
  // The variables are larger than maxVariablesBytes: nothing was rendered.
  | { ok: false; phase: "variables"; bytes: number; limit: number };

/** A check of sources: the syntax errors of each field, and the variables each field that parses reads. */
export interface SourceCheck {
  problems: FieldProblem[];
  referenced: Partial<ReferencedVariables>;
}

interface Job {
  request: RenderRequest;
  /**
   * Was aboard a worker that died with others aboard, so it may be what killed it: it runs alone
   * from then on, and fails only if it takes a worker down by itself.
   */
  alone: boolean;
  resolve(response: RenderResponse): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  /** The job the worker is running, since when, and in which field: written by the worker. */
  progress: WorkerProgress;
  /** Loaded and able to take jobs (a worker takes a few hundred ms to start). */
  ready: boolean;
  /** Jobs given to the worker, in the order it runs them: the first is the one running. */
  jobs: Job[];
  /** Holds a job that runs alone (Job.alone): the worker takes no other until it is done. */
  alone: boolean;
  /** Requests of `jobs` not yet posted: posted together once the current task's microtasks have run. */
  unsent: RenderRequest[];
  timer: NodeJS.Timeout | null;
}

/**
 * Jobs given ahead to one worker. Those given in one task are posted in one message, and
 * answered in one message per batch: waking the other thread costs more than a render itself
 * (bench/templates.ts). Kept small, since the jobs behind a runaway template wait for its hard
 * timeout (and then go to another worker).
 */
const PIPELINE_DEPTH = 16;

const ENTRY = new URL("./render-worker-entry.mjs", import.meta.url);

/**
 * Renders templates on worker threads (docs/templates.md#limits), so a runaway template can stall
 * a worker but never the event loop that answers requests. liquidjs' own limits stop most of
 * them early; the hard timeout here stops the rest by terminating the worker. Workers start on
 * demand and are replaced the same way, so a process that never renders starts none.
 */
export class RenderPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 0;
  private closed = false;

  constructor(private readonly settings: RenderPoolSettings) {}

  /** Syntax errors of each field (none when all parse), and the variables the fields read. */
  async check(sources: TemplateSources): Promise<SourceCheck> {
    const response = await this.run({ kind: "check", key: null, sources, variables: {}, deriveText: false, layout: null });
    return response.ok ? { problems: [], referenced: response.referenced ?? {} } : { problems: response.problems, referenced: {} };
  }

  /** Renders a version (cached by `key` in the worker) with the variables, in its layout if it has one. */
  async render(key: string, sources: TemplateSources, variables: Record<string, unknown>, options: RenderOptions): Promise<RenderOutcome> {
    const bytes = jsonBytes(variables);
    const limit = this.settings.maxVariablesBytes ?? MAX_VARIABLES_BYTES;
    if (bytes !== null && bytes > limit) return { ok: false, phase: "variables", bytes, limit };
    const response = await this.run({ kind: "render", key, sources, variables, ...options });
    if (!response.ok) return { ok: false, phase: response.phase, problems: response.problems };
    return { ok: true, rendered: response.rendered ?? { subject: "", html: "", text: null } };
  }

  async close(): Promise<void> {
    this.closed = true;
    const closed = new Error("the template render pool is closed");
    for (const job of this.queue.splice(0)) job.reject(closed);
    await Promise.all(
      this.slots.splice(0).map((slot) => {
        for (const job of slot.jobs.splice(0)) job.reject(closed);
        return this.retire(slot);
      }),
    );
  }

  private run(request: Omit<RenderRequest, "id">): Promise<RenderResponse> {
    if (this.closed) return Promise.reject(new Error("the template render pool is closed"));
    // Ids are shared with the worker as an Int32 (WorkerProgress).
    this.nextId = this.nextId >= 0x7fffffff ? 1 : this.nextId + 1;
    const id = this.nextId;
    return new Promise<RenderResponse>((resolve, reject) => {
      this.queue.push({ request: { ...request, id }, alone: false, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      // A batch still forming in this task, else an idle worker, else the least busy with room:
      // jobs given together cost one wake-up of one thread. A job that runs alone needs an idle one.
      const alone = this.queue[0]!.alone;
      const ready = this.slots.filter((s) => s.ready && !s.alone && s.jobs.length < (alone ? 1 : PIPELINE_DEPTH));
      const slot =
        ready.find((s) => s.unsent.length > 0) ?? ready.find((s) => s.jobs.length === 0) ?? ready.reduce<Slot | undefined>((best, s) => (!best || s.jobs.length < best.jobs.length ? s : best), undefined);
      if (!slot || (slot.jobs.length > 0 && this.slots.length < this.settings.size)) {
        // Start another worker while there is work waiting and room in the pool.
        const starting = this.slots.filter((s) => !s.ready).length;
        if (this.slots.length < this.settings.size && starting === 0) this.spawn();
        if (!slot) return;
      }
      const job = this.queue.shift()!;
      slot.jobs.push(job);
      slot.alone = job.alone;
      if (slot.jobs.length === 1) this.watch(slot, this.settings.timeoutMs);
      if (slot.unsent.push(job.request) === 1) queueMicrotask(() => this.post(slot));
    }
  }

  private post(slot: Slot): void {
    if (slot.unsent.length === 0 || !this.slots.includes(slot)) return;
    const requests = slot.unsent.splice(0);
    try {
      slot.worker.postMessage(requests);
    } catch {
      // Cloning a request for the worker can throw (variables nested past the stack; the HTTP
      // layer refuses such bodies, but not every caller is HTTP). Thrown here, in a microtask, it
      // would end the process: post one by one, and answer the ones that cannot go as failures.
      for (const request of requests) {
        try {
          slot.worker.postMessage([request]);
        } catch (error) {
          this.unsendable(slot, request.id, error instanceof Error ? error.message : String(error));
        }
      }
    }
  }

  /** A job whose request could not be given to the worker: a render problem of its own, not the worker's. */
  private unsendable(slot: Slot, id: number, reason: string): void {
    const index = slot.jobs.findIndex((job) => job.request.id === id);
    if (index === -1) return;
    const [job] = slot.jobs.splice(index, 1);
    job!.resolve({ id, ok: false, phase: "render", problems: [{ field: "html", line: null, message: `its variables could not be handed to the renderer (${reason})` }] });
    if (slot.jobs.length === 0) this.idle(slot);
  }

  /** The slot's worker has answered every job given to it. */
  private idle(slot: Slot): void {
    slot.alone = false;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
  }

  /**
   * Checks, `inMs` from now, whether the job the worker is running has passed its hard timeout,
   * counted from when the worker started that very job (WorkerProgress), so jobs queued behind
   * it never spend their time limit waiting.
   */
  private watch(slot: Slot, inMs: number): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = setTimeout(() => {
      slot.timer = null;
      if (slot.jobs.length === 0) return;
      const running = slot.jobs.some((job) => job.request.id === slot.progress.jobId);
      // Not started yet (the batch is still on its way): its clock has not started either.
      if (!running) return this.watch(slot, this.settings.timeoutMs);
      const left = slot.progress.startedAt + this.settings.timeoutMs - Date.now();
      if (left > 0) return this.watch(slot, left);
      const checking = slot.jobs.find((job) => job.request.id === slot.progress.jobId)?.request.kind === "check";
      // A check parses and analyses a version being saved: nothing of it runs, so only its size and shape can take that long.
      const message = checking ? `is too complex to check within ${this.settings.timeoutMs} ms: use fewer tags and outputs, or fewer characters` : `took longer than ${this.settings.timeoutMs} ms to render`;
      this.fail(slot, message, "timeout");
    }, inMs);
  }

  private spawn(): Slot {
    const progress = new WorkerProgress();
    const worker = new Worker(ENTRY, {
      workerData: { limits: this.settings.limits, progress: progress.buffer },
      resourceLimits: { maxOldGenerationSizeMb: this.settings.workerHeapMb },
      stdout: false,
      stderr: false,
    });
    // An idle pool does not keep the process alive; close() ends the workers of a runtime.
    worker.unref();
    const slot: Slot = { worker, progress, ready: false, jobs: [], alone: false, unsent: [], timer: null };
    worker.on("message", (message: RenderResponse[] | WorkerReady) => {
      if (!Array.isArray(message)) {
        slot.ready = true;
        this.dispatch();
        return;
      }
      for (const response of message) {
        const index = slot.jobs.findIndex((job) => job.request.id === response.id);
        if (index === -1) continue;
        const [job] = slot.jobs.splice(index, 1);
        job!.resolve(response);
      }
      if (slot.jobs.length === 0) this.idle(slot);
      this.dispatch();
    });
    // A worker that dies (out of its heap, or a bug) fails the job that killed it as a render failure and is replaced.
    worker.on("error", (error) => this.fail(slot, `could not be rendered: ${error.message}`, "died"));
    worker.on("exit", () => this.fail(slot, "could not be rendered: the render worker stopped", "died"));
    this.slots.push(slot);
    return slot;
  }

  /**
   * Ends the slot's worker, and answers the job that brought it down with a render problem (naming
   * the field it was in, when it had started); the slot's other jobs go back to the front of the
   * queue for another worker (rendering has no side effects, so one whose answer died with the
   * worker runs again). A job past its hard timeout is known by its own clock. A worker that died
   * with several jobs aboard names none for sure: the one running may be starved by the others'
   * variables, and one whose variables it was unpacking has not started. So each of them runs
   * alone from then on, and the one that takes a worker down by itself fails; the others render.
   */
  private fail(slot: Slot, message: string, cause: "timeout" | "died"): void {
    if (!this.slots.includes(slot)) return;
    this.slots.splice(this.slots.indexOf(slot), 1);
    const jobs = slot.jobs.splice(0);
    const culprit = jobs.length === 1 ? jobs[0] : cause === "timeout" ? jobs.find((job) => job.request.id === slot.progress.jobId) : undefined;
    const started = culprit !== undefined && culprit.request.id === slot.progress.jobId;
    const field = (started ? slot.progress.field : undefined) ?? "html";
    const waiting = jobs.filter((job) => job !== culprit);
    if (culprit === undefined) for (const job of waiting) job.alone = true;
    void this.retire(slot);
    if (!slot.ready) {
      // A worker that cannot even start is a deployment problem, not a template's: every waiting job fails.
      for (const job of this.queue.splice(0)) job.reject(new Error(`a template render worker did not start: ${message}`));
      return;
    }
    this.queue.unshift(...waiting);
    if (culprit) culprit.resolve({ id: culprit.request.id, ok: false, phase: "render", problems: [{ field, line: null, message }] });
    if (!this.closed) this.dispatch();
  }

  private async retire(slot: Slot): Promise<void> {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.worker.removeAllListeners();
    // A terminated worker may still emit an error while it unwinds; nobody is listening for it.
    slot.worker.on("error", () => {});
    await slot.worker.terminate();
  }
}

/** Bytes of the value as UTF-8 JSON; null when it has no JSON form (nested past the stack, a cycle, a BigInt). */
function jsonBytes(value: unknown): number | null {
  try {
    return Buffer.byteLength(JSON.stringify(value) ?? "", "utf8");
  } catch {
    // Not from an HTTP body then (JSON, its depth bounded there): posting it answers what fails.
    return null;
  }
}
