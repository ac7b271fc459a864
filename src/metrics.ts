import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { DOMAIN_STATUSES, type DomainStatus } from "./domain/domain-status.js";

/**
 * Prometheus metrics, one registry per process (tests build several apps in one process, so
 * nothing registers on prom-client's global registry).
 */
export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({ name: "mailroom_http_requests_total", help: "HTTP requests by operation and status.", labelNames: ["operation", "status"] as const, registers: [this.registry] });
  readonly httpDuration = new Histogram({
    name: "mailroom_http_request_duration_seconds",
    help: "HTTP request latency by operation.",
    labelNames: ["operation"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly jobs = new Counter({ name: "mailroom_jobs_total", help: "Delivery jobs processed, by outcome.", labelNames: ["outcome"] as const, registers: [this.registry] });
  readonly recipients = new Counter({ name: "mailroom_recipients_total", help: "Recipient delivery attempts by environment and outcome.", labelNames: ["environment", "outcome"] as const, registers: [this.registry] });

  /** What a sender waits for: retries and deferrals included, so a slow queue or a struggling MX shows here first. */
  readonly deliveryLatency = new Histogram({
    name: "mailroom_delivery_latency_seconds",
    help: "Per recipient delivered, from when its message was due (accepted, or its scheduled time) to the delivery, by environment.",
    labelNames: ["environment"] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600],
    registers: [this.registry],
  });
  readonly inboundMessages = new Counter({ name: "mailroom_inbound_messages_total", help: "Messages the inbound SMTP server was given (DATA), by its answer: accepted (250), refused (5xx) or deferred (4xx: the sender retries).", labelNames: ["outcome"] as const, registers: [this.registry] });
  readonly inboundRecipientsRefused = new Counter({ name: "mailroom_inbound_recipients_refused_total", help: "RCPT TO the inbound SMTP server refused, by reason: relay (not one of its domains), unknown_token, too_many, lookup_failed (4xx).", labelNames: ["reason"] as const, registers: [this.registry] });
  readonly submissionAuthentications = new Counter({ name: "mailroom_submission_authentications_total", help: "AUTH attempts on the SMTP submission server, by outcome: accepted, refused (a bad or disallowed key, or no TLS) or failed (an outage: 454).", labelNames: ["outcome"] as const, registers: [this.registry] });
  readonly submissionMessages = new Counter({ name: "mailroom_submission_messages_total", help: "Messages the SMTP submission server was given (MAIL FROM onwards), by its answer: accepted (250), refused (5xx) or deferred (4xx: the client retries).", labelNames: ["outcome"] as const, registers: [this.registry] });
  readonly requestLogEntriesLost = new Counter({ name: "mailroom_request_log_entries_lost_total", help: "Request log entries never written: the database refused or timed out their write, or too many waited (docs/request-log.md).", registers: [this.registry] });
  readonly webhookAttempts = new Counter({ name: "mailroom_webhook_attempts_total", help: "Webhook delivery attempts, by what followed: succeeded, retrying (another attempt is scheduled) or failed (no more attempts).", labelNames: ["outcome"] as const, registers: [this.registry] });

  /**
   * Gauges of a queue, read from the database at scrape time, so they are right on every node:
   * `<prefix>_depth`, `<prefix>_due` and `<prefix>_oldest_due_age_seconds`. One read serves the
   * three gauges of a scrape.
   */
  watchQueue(prefix: string, items: string, read: () => Promise<QueueStats>): void {
    let last: Promise<QueueStats> | null = null;
    const sample = () => (last ??= read().finally(() => setImmediate(() => (last = null))));
    new Gauge({ name: `${prefix}_depth`, help: `${items} waiting (due or scheduled).`, registers: [this.registry], collect: async function () { this.set((await sample()).depth); } });
    new Gauge({ name: `${prefix}_due`, help: `${items} due now.`, registers: [this.registry], collect: async function () { this.set((await sample()).due); } });
    new Gauge({ name: `${prefix}_oldest_due_age_seconds`, help: `How long the oldest of the ${items.toLowerCase()} due now has been due.`, registers: [this.registry], collect: async function () { this.set((await sample()).oldestDueAgeSeconds); } });
  }

  /**
   * `mailroom_clock_skew_seconds`, measured at scrape time: this process's clock minus the
   * database server's (src/clock-skew.ts); 0 on SQLite, which has no clock of its own.
   */
  watchClockSkew(measure: () => Promise<number | null>): void {
    new Gauge({
      name: "mailroom_clock_skew_seconds",
      help: "This process's clock minus the database server's (positive: ahead). Leases between workers tolerate a third of the shortest lease; alert well before.",
      registers: [this.registry],
      collect: async function () {
        this.set(((await measure()) ?? 0) / 1000);
      },
    });
  }

  /** `mailroom_domains{status}`, read from the database at scrape time: alert on temporary_failure above 0. */
  watchDomains(read: () => Promise<Partial<Record<DomainStatus, number>>>): void {
    new Gauge({
      name: "mailroom_domains",
      help: "Sending domains by status (temporary_failure: a verified domain's records went missing; failed: they stayed missing and live mail from it is refused).",
      labelNames: ["status"] as const,
      registers: [this.registry],
      collect: async function () {
        const counts = await read();
        for (const status of DOMAIN_STATUSES) this.set({ status }, counts[status] ?? 0);
      },
    });
  }
}

export interface QueueStats {
  depth: number;
  due: number;
  oldestDueAgeSeconds: number;
}
