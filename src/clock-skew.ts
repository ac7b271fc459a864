import type { Config } from "./config.js";
import type { Clock } from "./domain/clock.js";

/*
 * Leases (delivery jobs, webhook deliveries) carry the clock of the worker that took them and are
 * judged expired by the clock of whichever worker looks next. With workers on several machines
 * (MySQL), a clock far enough ahead of the holder's sees a lease end while its job is still being
 * sent, takes it over, and the mail goes out twice. Idempotency-Key locks (API nodes) work the
 * same way: a retry reaching a node whose clock runs ahead takes over a request still running.
 * The database server is the one reference every node shares: a node within e of it is within 2e
 * of any other node.
 */

/** Beyond this a node's offset is worth a warning: NTP keeps clocks within milliseconds. */
export const CLOCK_SKEW_WARNING_MS = 2_000;

/**
 * A claim that one node takes and another judges expired by its own clock, renewed by its holder
 * every third of its length: what a node's offset from the database server's clock must stay within.
 */
export interface ClockBound {
  /** What the claims are, for the operator: "job and webhook leases". */
  what: string;
  /** The settings that give their lengths, as the message names them. */
  settings: string;
  seconds: readonly number[];
  /** What an offset beyond the bound breaks. */
  risk: string;
}

/**
 * The claims a process with these roles takes or judges. A worker's: job and webhook leases. An
 * API node's: Idempotency-Key locks, which a retry takes over once the lock looks expired. The
 * smtp and submission roles hold none (the submission server's idempotency is a day-long window;
 * rate-limit windows only shift with a clock), so their offset is only warned about.
 */
export function clockBoundsFor(config: Pick<Config, "worker" | "webhooks" | "idempotency">, roles: ReadonlySet<string>): ClockBound[] {
  const bounds: ClockBound[] = [];
  if (roles.has("worker")) {
    bounds.push({
      what: "job and webhook leases",
      settings: "the shortest of JOB_LEASE_SECONDS and WEBHOOK_LEASE_SECONDS",
      seconds: [config.worker.leaseSeconds, config.webhooks.leaseSeconds],
      risk: "workers could take over each other's jobs and send mail twice",
    });
  }
  if (roles.has("api")) {
    bounds.push({
      what: "Idempotency-Key locks",
      settings: "IDEMPOTENCY_LOCK_SECONDS",
      seconds: [config.idempotency.lockSeconds],
      risk: "a retry could take over a request still running, and both could send",
    });
  }
  return bounds;
}

/**
 * The most offset from the database server's clock that claims of these lengths tolerate. A holder
 * renews every third of their length, so another node sees at least two thirds of one left, less
 * the offset between the two clocks: at most twice each one's offset from the database's.
 */
export function clockSkewLimitMs(seconds: readonly number[]): number {
  return (Math.min(...seconds) * 1000) / 3;
}

/**
 * This process's clock minus the database server's, in milliseconds, measured as NTP does:
 * against the midpoint of the query's round trip. Null where the database has no clock of its
 * own (SQLite), so there is no other machine to disagree with.
 */
export async function measureClockSkew(clock: Clock, serverTime: () => Promise<number | null>): Promise<number | null> {
  const sent = clock.now();
  const server = await serverTime();
  const received = clock.now();
  return server === null ? null : (sent + received) / 2 - server;
}

export interface ClockSkewCheck {
  skewMs: number | null;
  verdict: "ok" | "warning" | "too_far";
  /** One line for the operator; empty when ok. */
  message: string;
}

/**
 * Ok within the warning threshold, but never past the tightest bound: leases may be as short as
 * 5 s (a third: 1.7 s), under the threshold. Without a bound, an offset is only warned about.
 */
export async function checkClockSkew(clock: Clock, serverTime: () => Promise<number | null>, bounds: readonly ClockBound[]): Promise<ClockSkewCheck> {
  const skewMs = await measureClockSkew(clock, serverTime);
  const tightest = tightestBound(bounds);
  const limitMs = tightest === null ? Infinity : clockSkewLimitMs(tightest.seconds);
  if (skewMs === null || Math.abs(skewMs) <= Math.min(CLOCK_SKEW_WARNING_MS, limitMs)) return { skewMs, verdict: "ok", message: "" };
  const offset = `this machine's clock is ${(Math.abs(skewMs) / 1000).toFixed(1)} s ${skewMs > 0 ? "ahead of" : "behind"} the database server's`;
  const fix = "synchronise both with NTP (docs/scaling.md#clocks)";
  if (tightest === null || Math.abs(skewMs) <= limitMs) return { skewMs, verdict: "warning", message: `${offset}: ${fix}` };
  return {
    skewMs,
    verdict: "too_far",
    message: `${offset}, more than the ${seconds(limitMs)} s that ${tightest.what} tolerate (a third of ${tightest.settings}): ${tightest.risk}; ${fix}`,
  };
}

function tightestBound(bounds: readonly ClockBound[]): ClockBound | null {
  return bounds.reduce<ClockBound | null>((tightest, bound) => (tightest === null || clockSkewLimitMs(bound.seconds) < clockSkewLimitMs(tightest.seconds) ? bound : tightest), null);
}

/** Whole seconds, but tenths under ten: a 5 s lease tolerates 1.7 s, not "2". */
function seconds(ms: number): string {
  return (ms / 1000).toFixed(ms < 10_000 ? 1 : 0);
}

/** A process does not start on a clock that would break the claims its roles take (src/main.ts). */
export class ClockSkewError extends Error {
  override name = "ClockSkewError";
}
