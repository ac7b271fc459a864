import { DAY_MS, type Clock } from "../domain/clock.js";
import type { Principal } from "../domain/environments.js";
import { NotFoundError } from "../domain/errors.js";
import type { Page, PageRequest } from "../db/pagination.js";
import type { RequestLogFilters, RequestLogRow, RequestLogsRepository } from "../db/repositories/request-logs.js";
import { scopeOf } from "./api-keys.js";
import { removeInBatches } from "./in-batches.js";
import type { components } from "../../generated/v1.js";

type RequestLog = components["schemas"]["RequestLog"];

/** A request as the HTTP layer saw it, once answered. */
export type AnsweredRequest = Omit<RequestLogRow, "workspace_id" | "environment" | "credential_type" | "credential_id">;

export interface RequestLogOptions {
  /** How long an entry is kept; 0 keeps no log at all. */
  retentionDays: number;
  /** Entries wait at most this long in memory before they are written. */
  flushMs?: number;
  /** Entries held while the database cannot take them; past this, the oldest tenth is dropped. */
  maxBuffered?: number;
  /** The same cap in bytes (about: the entries' text), which a burst of large failures reaches first. */
  maxBufferedBytes?: number;
  /** A write that has not finished by then is given up on and its entries reported lost. */
  writeTimeoutMs?: number;
  /** Lost entries are reported at most once per this interval, summed. */
  lossReportMs?: number;
  /** Entries that will never be written: the database refused them, or too many waited. At most once per lossReportMs. */
  onLost?: (error: Error, entries: number) => void;
  /** Every loss as it happens (a metric's counter). */
  countLost?: (entries: number) => void;
}

/** Entries written at once; more waiting starts the next write at once. */
const FLUSH_BATCH = 1000;
/** Entries removed per statement when pruning; a round repeats until none are left. */
const PRUNE_BATCH = 5000;
/** What an entry costs besides its strings (numbers, flags, the row object), roughly. */
const ENTRY_OVERHEAD_BYTES = 200;

/** About what an entry holds in memory; its variable parts are strings the client chose. */
function sizeOf(row: RequestLogRow): number {
  let bytes = ENTRY_OVERHEAD_BYTES;
  for (const text of [row.id, row.path, row.operation, row.error_code, row.error, row.ip_address, row.user_agent, row.idempotency_key]) bytes += text?.length ?? 0;
  return bytes;
}

/**
 * The request log (docs/request-log.md): every authenticated /v1 request, for the people who
 * debug an integration. Entries are kept in memory and written together about once a second,
 * so a request costs no write of its own (a send is the hot path; its answer does not wait for
 * its log entry). The price: entries not yet written are lost if the process dies, and an entry
 * shows up in the list a moment after its answer. The log is a diagnostic, not a record (the
 * audit log is that), so both are acceptable.
 */
export class RequestLogService {
  private buffer: RequestLogRow[] = [];
  private bufferedBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  /** Set while a write runs: entries recorded meanwhile are taken by it, so writes never pile up. */
  private flushing = false;
  private writing: Promise<void> = Promise.resolve();
  private readonly flushMs: number;
  private readonly maxBuffered: number;
  private readonly maxBufferedBytes: number;
  private readonly writeTimeoutMs: number;
  private readonly lossReportMs: number;
  private lossTimer: NodeJS.Timeout | null = null;
  private unreported: { error: Error; entries: number } | null = null;

  constructor(
    private readonly logs: RequestLogsRepository,
    private readonly clock: Clock,
    private readonly options: RequestLogOptions,
  ) {
    this.flushMs = options.flushMs ?? 1000;
    this.maxBuffered = options.maxBuffered ?? 50_000;
    this.maxBufferedBytes = options.maxBufferedBytes ?? 16 * 1024 * 1024;
    this.writeTimeoutMs = options.writeTimeoutMs ?? 30_000;
    this.lossReportMs = options.lossReportMs ?? 60_000;
  }

  get enabled(): boolean {
    return this.options.retentionDays > 0;
  }

  record(principal: Principal, request: AnsweredRequest): void {
    if (!this.enabled) return;
    const { credential } = principal;
    const row: RequestLogRow = {
      ...request,
      workspace_id: principal.workspaceId,
      environment: principal.environment,
      credential_type: credential.kind === "api_key" ? "api_key" : "user",
      credential_id: credential.kind === "api_key" ? credential.id : credential.userId,
    };
    this.buffer.push(row);
    this.bufferedBytes += sizeOf(row);
    if (this.buffer.length > this.maxBuffered || this.bufferedBytes > this.maxBufferedBytes) this.dropOldest();
    if (this.buffer.length >= FLUSH_BATCH) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
  }

  /**
   * Writes what is waiting; resolves once it is stored (or given up on and reported). While a
   * write runs, that write: it takes what is recorded meanwhile too.
   */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.flushing && this.buffer.length > 0) {
      this.flushing = true;
      this.writing = this.drain();
    }
    return this.writing;
  }

  /** One write at a time, in order, until nothing waits. */
  private async drain(): Promise<void> {
    try {
      while (this.buffer.length > 0) {
        const batch = this.buffer.splice(0, FLUSH_BATCH);
        for (const row of batch) this.bufferedBytes -= sizeOf(row);
        try {
          await this.withinTimeout(this.logs.insert(batch));
        } catch (error) {
          this.lost(error instanceof Error ? error : new Error(String(error)), batch.length);
        }
      }
    } finally {
      // In the same synchronous step as the loop's last look at the buffer: an entry recorded
      // after it finds no write running and starts one (or its timer).
      this.flushing = false;
    }
  }

  /**
   * A write that hangs (a lock, a dead connection) would hold every later entry, and a shutdown's
   * last flush, for as long as it hangs. Given up on, it may still finish: its entries are then
   * stored, though reported lost.
   */
  private withinTimeout(write: Promise<void>): Promise<void> {
    let timeout: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timeout = setTimeout(() => reject(new Error(`a request log write did not finish within ${this.writeTimeoutMs} ms`)), this.writeTimeoutMs).unref();
    });
    return Promise.race([write, expired]).finally(() => clearTimeout(timeout));
  }

  /**
   * Past a cap, the oldest tenth goes at once: dropping one entry per request would shift the
   * whole buffer on every request while the database is away.
   */
  private dropOldest(): void {
    const keepEntries = Math.floor(this.maxBuffered * 0.9);
    const keepBytes = this.maxBufferedBytes * 0.9;
    let drop = Math.max(0, this.buffer.length - keepEntries);
    let bytes = this.bufferedBytes;
    for (let i = 0; i < drop; i++) bytes -= sizeOf(this.buffer[i]!);
    while (drop < this.buffer.length && bytes > keepBytes) bytes -= sizeOf(this.buffer[drop++]!);
    this.buffer.splice(0, drop);
    this.bufferedBytes = bytes;
    this.lost(new Error(`more than ${this.maxBuffered} request log entries, or ${this.maxBufferedBytes} bytes of them, waited to be written`), drop);
  }

  /** Counts every loss; reports the first at once, and what follows within lossReportMs summed, when it is over. */
  private lost(error: Error, entries: number): void {
    this.options.countLost?.(entries);
    if (this.lossTimer === null) {
      this.options.onLost?.(error, entries);
      this.startLossInterval();
      return;
    }
    this.unreported = { error, entries: (this.unreported?.entries ?? 0) + entries };
  }

  private startLossInterval(): void {
    this.lossTimer = setTimeout(() => {
      const pending = this.unreported;
      this.unreported = null;
      this.lossTimer = null;
      if (pending === null) return;
      this.options.onLost?.(pending.error, pending.entries);
      this.startLossInterval();
    }, this.lossReportMs).unref();
  }

  async list(principal: Principal, filters: RequestLogFilters, page: PageRequest): Promise<Page<RequestLog>> {
    return this.logs.list(scopeOf(principal), filters, page);
  }

  async get(principal: Principal, requestId: string): Promise<RequestLog> {
    const found = await this.logs.find(scopeOf(principal), requestId);
    if (!found) throw new NotFoundError("request log", requestId);
    return found;
  }

  /** Removes entries older than the retention (all of them when the log is off); returns how many. */
  async prune(): Promise<number> {
    const before = this.clock.now() - this.options.retentionDays * DAY_MS;
    return removeInBatches((limit) => this.logs.pruneBefore(before, limit), PRUNE_BATCH);
  }
}
