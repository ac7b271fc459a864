import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/domain/environments.js";
import type { RequestLogRow, RequestLogsRepository } from "../../src/db/repositories/request-logs.js";
import { ManualClock } from "../../src/domain/clock.js";
import { RequestLogService, type AnsweredRequest, type RequestLogOptions } from "../../src/services/request-logs.js";

const principal = { workspaceId: "ws_1", environment: "live", credential: { kind: "api_key", id: "key_1" } } as unknown as Principal;

const entry = (i: number, error: string | null = null): AnsweredRequest => ({
  id: `req_${String(i).padStart(8, "0")}`,
  method: "GET",
  path: "/v1/messages",
  operation: "listMessages",
  status: error === null ? 200 : 422,
  error_code: error === null ? null : "validation_failed",
  error,
  duration_ms: 1,
  ip_address: "192.0.2.1",
  user_agent: "acme/1.0",
  idempotency_key: null,
  idempotent_replayed: false,
  created_at: 0,
});

/** A repository whose inserts hang until released, recording what it was given. */
class HangingRepository {
  readonly batches: RequestLogRow[][] = [];
  private pending: Array<() => void> = [];
  running = 0;
  maxRunning = 0;
  insert(batch: RequestLogRow[]): Promise<void> {
    this.batches.push(batch);
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    return new Promise<void>((resolve) => {
      this.pending.push(() => {
        this.running--;
        resolve();
      });
    });
  }
  /** Lets every insert started so far finish. */
  release(): void {
    for (const finish of this.pending.splice(0)) finish();
  }
  get written(): RequestLogRow[] {
    return this.batches.flat();
  }
}

/** Writes only when told (flush) or 1,000 wait: the timer is far off. */
const serviceOver = (repository: HangingRepository, options: Partial<RequestLogOptions> = {}): RequestLogService =>
  new RequestLogService(repository as unknown as RequestLogsRepository, new ManualClock(), { retentionDays: 7, flushMs: 60_000, ...options });
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/** Flushes, letting every insert through, until nothing waits. */
async function writeAll(service: RequestLogService, repository: HangingRepository): Promise<void> {
  let done = false;
  const flushed = service.flush().then(() => (done = true));
  while (!done) {
    repository.release();
    await tick();
  }
  await flushed;
}

describe("RequestLogService", () => {
  it("runs one write at a time: while an insert hangs, more entries start no more writes and flush() answers the running one", async () => {
    const repository = new HangingRepository();
    const service = serviceOver(repository);
    for (let i = 0; i < 5_000; i++) service.record(principal, entry(i));
    const first = service.flush();
    expect(service.flush()).toBe(first);
    await tick();
    expect(repository.batches).toHaveLength(1);

    // Released, the running write takes what waits, in order, 1,000 at a time, one insert at a time.
    for (let round = 0; round < 10 && repository.written.length < 5_000; round++) {
      repository.release();
      await tick();
    }
    repository.release();
    await first;
    expect(repository.maxRunning).toBe(1);
    expect(repository.batches.map((batch) => batch.length)).toEqual([1000, 1000, 1000, 1000, 1000]);
    expect(repository.written.map((row) => row.id)).toEqual(Array.from({ length: 5_000 }, (_, i) => entry(i).id));
  });

  it("holds at most maxBuffered entries while the database hangs, dropping the oldest", async () => {
    const repository = new HangingRepository();
    const service = serviceOver(repository, { maxBuffered: 2_000 });
    for (let i = 0; i < 20_000; i++) service.record(principal, entry(i));
    await writeAll(service, repository);
    // The first batch was taken as the database hung; what followed it is the newest 2,000 at most.
    const later = repository.batches.slice(1).flat();
    expect(later.length).toBeLessThanOrEqual(2_000);
    expect(later.length).toBeGreaterThan(1_000);
    expect(later.at(-1)!.id).toBe(entry(19_999).id);
  });

  it("holds at most maxBufferedBytes of entries too: large failures do not make the entry cap gigabytes", async () => {
    const repository = new HangingRepository();
    const problem = JSON.stringify({ detail: "x".repeat(8_000) });
    const service = serviceOver(repository, { maxBuffered: 50_000, maxBufferedBytes: 1_000_000 });
    for (let i = 0; i < 2_000; i++) service.record(principal, entry(i, problem));
    await writeAll(service, repository);
    const later = repository.written;
    const bytes = later.reduce((sum, row) => sum + (row.error?.length ?? 0), 0);
    expect(bytes).toBeLessThanOrEqual(1_000_000);
    expect(later.length).toBeGreaterThan(50);
    expect(later.at(-1)!.id).toBe(entry(1_999).id);
  });

  it("reports lost entries at most once per interval, with how many, and counts every one", async () => {
    const repository = new HangingRepository();
    const reports: number[] = [];
    let counted = 0;
    const service = serviceOver(repository, { maxBuffered: 100, lossReportMs: 50, onLost: (_error, entries) => reports.push(entries), countLost: (entries) => (counted += entries) });
    for (let i = 0; i < 20_000; i++) service.record(principal, entry(i));
    expect(reports.length).toBe(1); // the first loss at once
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(reports.length).toBe(2); // the rest, summed, once the interval is over
    const taken = repository.written.length;
    expect(reports[0]! + reports[1]!).toBe(counted);
    // Every entry was taken by the first write, is waiting, or was counted lost.
    expect(taken + counted).toBeLessThanOrEqual(20_000);
    expect(taken + counted).toBeGreaterThanOrEqual(20_000 - 100);
  });

  it("gives up on a write that takes longer than writeTimeoutMs, reporting its entries lost, so a flush (as at shutdown) ends", async () => {
    const repository = new HangingRepository();
    const lost: Array<[string, number]> = [];
    const service = serviceOver(repository, { writeTimeoutMs: 30, onLost: (error, entries) => lost.push([error.message, entries]) });
    for (let i = 0; i < 10; i++) service.record(principal, entry(i));
    await service.flush();
    expect(lost).toEqual([[expect.stringContaining("30 ms"), 10]]);
    // The next write is not held up by the abandoned one.
    service.record(principal, entry(10));
    const next = service.flush();
    await tick();
    expect(repository.batches).toHaveLength(2);
    repository.release();
    await next;
  });
});
