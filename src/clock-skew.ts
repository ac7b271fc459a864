import type { Clock } from "./domain/clock.js";

/*
 * Leases (delivery jobs, webhook deliveries) carry the clock of the worker that took them and are
 * judged expired by the clock of whichever worker looks next. With workers on several machines
 * (MySQL), a clock far enough ahead of the holder's sees a lease end while its job is still being
 * sent, takes it over, and the mail goes out twice. The database server is the one reference
 * every node shares: a node within e of it is within 2e of any other node.
 */

/** Beyond this a node's offset is worth a warning: NTP keeps clocks within milliseconds. */
export const CLOCK_SKEW_WARNING_MS = 2_000;

/**
 * The most offset from the database server's clock that leases tolerate. A holder renews its
 * leases every third of their length, so another node sees at least two thirds of one left, less
 * the offset between the two clocks: at most twice each one's offset from the database's.
 */
export function clockSkewLimitMs(leaseSeconds: readonly number[]): number {
  return (Math.min(...leaseSeconds) * 1000) / 3;
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

export async function checkClockSkew(clock: Clock, serverTime: () => Promise<number | null>, leaseSeconds: readonly number[]): Promise<ClockSkewCheck> {
  const skewMs = await measureClockSkew(clock, serverTime);
  if (skewMs === null || Math.abs(skewMs) <= CLOCK_SKEW_WARNING_MS) return { skewMs, verdict: "ok", message: "" };
  const limitMs = clockSkewLimitMs(leaseSeconds);
  const offset = `this machine's clock is ${(Math.abs(skewMs) / 1000).toFixed(1)} s ${skewMs > 0 ? "ahead of" : "behind"} the database server's`;
  const fix = "synchronise both with NTP (docs/scaling.md#clocks)";
  if (Math.abs(skewMs) <= limitMs) return { skewMs, verdict: "warning", message: `${offset}: ${fix}` };
  return {
    skewMs,
    verdict: "too_far",
    message: `${offset}, more than the ${(limitMs / 1000).toFixed(0)} s that job and webhook leases tolerate (a third of the shortest of JOB_LEASE_SECONDS and WEBHOOK_LEASE_SECONDS): workers could take over each other's jobs and send mail twice; ${fix}`,
  };
}

/** A worker does not start on a clock that would break leases (src/main.ts). */
export class ClockSkewError extends Error {
  override name = "ClockSkewError";
}
