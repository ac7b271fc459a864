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
  /** Entries held while the database cannot take them; past this, the oldest are dropped. */
  maxBuffered?: number;
  /** Entries that will never be written: the database refused them, or too many waited. */
  onLost?: (error: Error, entries: number) => void;
}

/** Entries written at once; more waiting starts the next write at once. */
const FLUSH_BATCH = 1000;
/** Entries removed per statement when pruning; a round repeats until none are left. */
const PRUNE_BATCH = 5000;

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
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();
  private readonly flushMs: number;
  private readonly maxBuffered: number;

  constructor(
    private readonly logs: RequestLogsRepository,
    private readonly clock: Clock,
    private readonly options: RequestLogOptions,
  ) {
    this.flushMs = options.flushMs ?? 1000;
    this.maxBuffered = options.maxBuffered ?? 50_000;
  }

  get enabled(): boolean {
    return this.options.retentionDays > 0;
  }

  record(principal: Principal, request: AnsweredRequest): void {
    if (!this.enabled) return;
    const { credential } = principal;
    this.buffer.push({
      ...request,
      workspace_id: principal.workspaceId,
      environment: principal.environment,
      credential_type: credential.kind === "api_key" ? "api_key" : "user",
      credential_id: credential.kind === "api_key" ? credential.id : credential.userId,
    });
    if (this.buffer.length > this.maxBuffered) {
      const dropped = this.buffer.splice(0, this.buffer.length - this.maxBuffered).length;
      this.options.onLost?.(new Error(`more than ${this.maxBuffered} request log entries waited to be written`), dropped);
    }
    if (this.buffer.length >= FLUSH_BATCH) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
  }

  /** Writes what is waiting; resolves once it is stored (or given up on and reported). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    // One write at a time, in order: entries recorded meanwhile go in the next one.
    this.writing = this.writing.then(async () => {
      while (this.buffer.length > 0) {
        const batch = this.buffer.splice(0, FLUSH_BATCH);
        try {
          await this.logs.insert(batch);
        } catch (error) {
          this.options.onLost?.(error instanceof Error ? error : new Error(String(error)), batch.length);
        }
      }
    });
    return this.writing;
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
