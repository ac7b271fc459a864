import type { Runtime } from "./runtime.js";
import type { DomainCheckOutcome } from "./services/domains.js";

export interface MaintenanceLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** How often a worker process runs the maintenance round. */
export const MAINTENANCE_INTERVAL_MS = 5 * 60 * 1000;

/**
 * The worker role's housekeeping, every few minutes: measures the clock against the database
 * server's (src/clock-skew.ts), prunes expired idempotency records,
 * rate-limit windows, sessions, access tokens, old webhook attempts and request log entries,
 * removes the content of messages past their workspace's retention, and checks the sending
 * domains whose automatic check is due. Any number of workers may run it at once: pruning and removal are idempotent,
 * and each domain check is claimed by one of them.
 */
export function startMaintenance(runtime: Runtime, log: MaintenanceLog): { stop(): void; round: Promise<void> } {
  // The first round skips the clock: src/main.ts has just checked it.
  const next = () => reportClockSkew(runtime, log).then(() => runMaintenance(runtime, log));
  let round = runMaintenance(runtime, log);
  const timer = setInterval(() => {
    round = round.then(next); // one round at a time
  }, MAINTENANCE_INTERVAL_MS);
  timer.unref();
  return {
    stop: () => clearInterval(timer),
    get round() {
      return round;
    },
  };
}

/**
 * Logs a clock that drifted from the database server's since the worker started (which refuses
 * to start on one too far off), at every round until it is fixed: src/clock-skew.ts.
 */
export async function reportClockSkew(runtime: Runtime, log: MaintenanceLog): Promise<void> {
  try {
    const clock = await runtime.checkClock();
    if (clock.verdict !== "ok") log[clock.verdict === "too_far" ? "error" : "warn"]({ clock_skew_ms: Math.round(clock.skewMs!) }, clock.message);
  } catch (err) {
    log.error({ err }, "could not read the database server's clock");
  }
}

/** One round; logs its failures instead of throwing, so the next round still comes. */
export async function runMaintenance(runtime: Runtime, log: MaintenanceLog): Promise<void> {
  try {
    await runtime.services.idempotency.prune();
    await runtime.services.rateLimiter.prune();
    await runtime.services.sessions.prune();
    await runtime.services.webhooks.prune();
    await runtime.services.requestLogs.prune();
  } catch (err) {
    log.error({ err }, "maintenance failed");
  }
  try {
    const removed = await runtime.services.retention.removeExpiredContent();
    if (removed.messages + removed.replies > 0) log.info(removed, "content retention: removed the content of messages and replies past their workspace's content_retention_days");
  } catch (err) {
    log.error({ err }, "content retention failed");
  }
  try {
    for (let outcomes = await runtime.services.domains.recheckDue(); outcomes.length > 0; outcomes = await runtime.services.domains.recheckDue()) {
      for (const outcome of outcomes) logDomainCheck(outcome, log);
    }
  } catch (err) {
    log.error({ err }, "automatic domain checks failed");
  }
}

/** A domain whose status changed is worth a line (a warning when it went towards failure); an unchanged one is not. */
function logDomainCheck(outcome: DomainCheckOutcome, log: MaintenanceLog): void {
  const fields = { workspace_id: outcome.workspaceId, domain_id: outcome.domainId, domain: outcome.name, from: outcome.from, to: outcome.to, missing: outcome.missing ?? undefined };
  if (outcome.missing === null) log.info(fields, "automatic domain check: DNS did not answer; tried again within the hour");
  else if (outcome.to === "temporary_failure" && outcome.from !== "temporary_failure") log.warn(fields, "a verified domain's DNS records are missing: live mail still goes out during the grace period (DOMAIN_GRACE_HOURS)");
  else if (outcome.to === "failed") log.warn(fields, "a domain's DNS records stayed missing through the grace period: live mail from it is refused until it is verified again");
  else if (outcome.to !== outcome.from) log.info(fields, "a domain's DNS records are back: verified again");
}
