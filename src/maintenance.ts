import type { ClockBound } from "./clock-skew.js";
import type { Runtime } from "./runtime.js";
import type { DomainCheckOutcome } from "./services/domains.js";

export interface MaintenanceLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** How often a worker process runs the maintenance round. */
export const MAINTENANCE_INTERVAL_MS = 5 * 60 * 1000;

export interface Maintenance {
  /** No round starts after it, and the one running ends after the step under way. */
  stop(): void;
  /** The round running, or the last one: shutdown waits for it before the database closes. */
  readonly round: Promise<void>;
}

/**
 * The worker role's housekeeping, every few minutes: measures the clock against the database
 * server's (src/clock-skew.ts), prunes expired idempotency records (and answers past their content retention),
 * rate-limit windows, sessions, access tokens, old webhook attempts and request log entries,
 * checks the sending domains whose automatic check is due, and removes the content of messages
 * past their workspace's retention (for up to ROUND_BUDGET_MS a round). Any number of workers may run it at once: pruning and removal are idempotent,
 * and each domain check is claimed by one of them.
 */
export function startMaintenance(runtime: Runtime, log: MaintenanceLog, options: { clockBounds?: readonly ClockBound[] } = {}): Maintenance {
  let stopped = false;
  let running = false;
  let round = Promise.resolve();
  const stopping = () => stopped;
  // Rounds never reject: each step logs its own failure.
  const begin = (work: () => Promise<void>) => {
    running = true;
    round = work().finally(() => (running = false));
  };
  // The first round skips the clock: src/main.ts has just checked it.
  begin(() => runMaintenance(runtime, log, stopping));
  const timer = setInterval(() => {
    // A round slower than the interval (a locked table, a long retention sweep) is not queued
    // behind: queued rounds would pile up, and a shutdown would wait for all of them.
    if (stopped) return;
    if (running) return log.warn({}, "maintenance: the previous round is still running; this one is skipped");
    begin(async () => {
      await reportClockSkew(runtime, log, options.clockBounds);
      await runMaintenance(runtime, log, stopping);
    });
  }, MAINTENANCE_INTERVAL_MS);
  timer.unref();
  return {
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
    get round() {
      return round;
    },
  };
}

/**
 * Logs a clock that drifted from the database server's since the worker started (which refuses
 * to start on one too far off), at every round until it is fixed: src/clock-skew.ts.
 */
export async function reportClockSkew(runtime: Runtime, log: MaintenanceLog, bounds?: readonly ClockBound[]): Promise<void> {
  try {
    const clock = await runtime.checkClock(bounds);
    if (clock.verdict !== "ok") log[clock.verdict === "too_far" ? "error" : "warn"]({ clock_skew_ms: Math.round(clock.skewMs!) }, clock.message);
  } catch (err) {
    log.error({ err }, "could not read the database server's clock");
  }
}

/**
 * One round; logs its failures instead of throwing, so the next round still comes. Each step is
 * on its own: one that fails (a table locked, a migration behind) does not skip the others. The
 * domain checks come before content removal, whose time per round is bounded but may be long.
 * Once `stopping()` holds, the steps left are skipped: a shutdown waits for the one under way only.
 */
export async function runMaintenance(runtime: Runtime, log: MaintenanceLog, stopping: () => boolean = () => false): Promise<void> {
  const { services } = runtime;
  const step = async (name: string, work: () => Promise<unknown>) => {
    if (stopping()) return;
    try {
      await work();
    } catch (err) {
      log.error({ err }, `maintenance: ${name} failed`);
    }
  };
  await step("pruning idempotency records", () => services.idempotency.prune());
  await step("removing idempotent answers past their content retention", () => services.idempotency.removeExpiredAnswers());
  await step("pruning rate-limit windows", () => services.rateLimiter.prune());
  await step("pruning sessions and access tokens", () => services.sessions.prune());
  await step("pruning webhook attempts", () => services.webhooks.prune());
  await step("pruning request log entries", () => services.requestLogs.prune());
  await step("automatic domain checks", async () => {
    for (let outcomes = await services.domains.recheckDue(); outcomes.length > 0 && !stopping(); outcomes = await services.domains.recheckDue()) {
      for (const outcome of outcomes) logDomainCheck(outcome, log);
    }
  });
  await step("content retention", async () => {
    const removed = await services.retention.removeExpiredContent();
    if (removed.messages + removed.replies > 0 || !removed.finished) {
      log.info(
        removed,
        removed.finished
          ? "content retention: removed the content of messages and replies past their workspace's content_retention_days"
          : "content retention: removed the content of messages and replies past their workspace's content_retention_days; the rest is left to the next round",
      );
    }
  });
}

/** A domain whose status changed is worth a line (a warning when it went towards failure); an unchanged one is not. */
function logDomainCheck(outcome: DomainCheckOutcome, log: MaintenanceLog): void {
  const fields = { workspace_id: outcome.workspaceId, domain_id: outcome.domainId, domain: outcome.name, from: outcome.from, to: outcome.to, missing: outcome.missing ?? undefined };
  if (outcome.missing === null) log.info(fields, "automatic domain check: DNS did not answer; tried again within the hour");
  else if (outcome.to === "temporary_failure" && outcome.from !== "temporary_failure") log.warn(fields, "a verified domain's DNS records are missing: live mail still goes out during the grace period (DOMAIN_GRACE_HOURS)");
  else if (outcome.to === "failed") log.warn(fields, "a domain's DNS records stayed missing through the grace period: live mail from it is refused until it is verified again");
  else if (outcome.to !== outcome.from) log.info(fields, "a domain's DNS records are back: verified again");
}
