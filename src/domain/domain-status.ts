import type { components } from "../../generated/v1.js";

/**
 * A sending domain's health over time (docs/domains.md#automatic-checks). Every check of its
 * DNS records, by hand (verifyDomain) or by the worker on its own, goes through `afterCheck`:
 *
 * - pending -> verified when a check finds every required record by its own answers;
 * - verified -> temporary_failure when a check misses one, and back when they are all found;
 * - temporary_failure -> failed when they are still missing after the grace period (or when a
 *   check after it gets no answer at all: nothing then shows the records are back);
 * - failed -> verified when a check finds them all by its own answers (only verifyDomain checks
 *   a failed domain).
 *
 * A domain that was verified is not taken out of service by the first check that misses a
 * record: DNS migrations and provider mistakes are usually fixed within hours, and stopping
 * live mail at once would turn a hiccup into an outage. It keeps sending through a grace period
 * (Resend and useSend call this state `temporary_failure` too), and fails after it.
 */
export const DOMAIN_STATUSES = ["pending", "verified", "temporary_failure", "failed"] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];

// Fails to compile when this list and the contract's DomainStatus enum differ, either way.
type ContractStatus = components["schemas"]["DomainStatus"];
export const _sameStatusesAsContract: [Exclude<ContractStatus, DomainStatus> | Exclude<DomainStatus, ContractStatus>] extends [never] ? true : never = true;

export interface DomainHealth {
  status: DomainStatus;
  /** When a check first found a required record of this (once verified) domain missing. */
  failing_since: number | null;
}

export interface DomainCheckPolicy {
  /** A verified domain is looked up again this long after its last check; 0: never by itself. */
  recheckMs: number;
  /** How long a domain whose records went missing keeps sending before it fails. */
  graceMs: number;
}

/** How often a domain in its grace period is looked up again, at most: a fix shows within the hour. */
export const FAILING_RECHECK_MS = 60 * 60 * 1000;

/**
 * Whether live mail may be sent from the domain now: verified, or in the grace period of a
 * temporary failure. The grace period ends by the clock, not by a check: a domain whose checks
 * get no answer (its DNS down, no worker running them) must not keep sending past it.
 */
export function sendsLive(domain: DomainHealth, now: number, policy: DomainCheckPolicy): boolean {
  if (domain.status === "verified") return true;
  return domain.status === "temporary_failure" && domain.failing_since !== null && now < graceEndsAt(domain.failing_since, policy);
}

/** When the grace period of a domain failing since `failingSince` ends: live mail is sent until then. */
export function graceEndsAt(failingSince: number, policy: DomainCheckPolicy): number {
  return failingSince + policy.graceMs;
}

/** What a check found of a domain's required records. */
export interface CheckFindings {
  /** Every one verified, counting those whose lookup failed at their status from an earlier check. */
  requiredFound: boolean;
  /** Every one verified by this check's own answers. */
  freshlyVerified: boolean;
}

/** Where a check leaves the domain. */
export function afterCheck(previous: DomainHealth, findings: CheckFindings, now: number, policy: DomainCheckPolicy): DomainHealth {
  const outOfService = previous.status === "pending" || previous.status === "failed";
  // A status kept over a DNS hiccup keeps a domain in service, but never puts one into service:
  // what the earlier check saw may be gone.
  if (outOfService ? findings.freshlyVerified : findings.requiredFound) return { status: "verified", failing_since: null };
  // A domain never verified has nothing to fall from; a failed one waits for its records.
  if (outOfService) return { status: previous.status, failing_since: previous.failing_since };
  const failingSince = previous.failing_since ?? now;
  return { status: now >= graceEndsAt(failingSince, policy) ? "failed" : "temporary_failure", failing_since: failingSince };
}

/**
 * Where a check that got no answer at all leaves the domain; null: as it was, since the check
 * says nothing about the records. But a domain past its grace period fails: the check after the
 * grace would fail it unless its records were back, and nothing shows they are.
 */
export function afterUnansweredCheck(previous: DomainHealth, now: number, policy: DomainCheckPolicy): DomainHealth | null {
  if (previous.status !== "temporary_failure" || previous.failing_since === null) return null;
  return now >= graceEndsAt(previous.failing_since, policy) ? { status: "failed", failing_since: previous.failing_since } : null;
}

/**
 * When the worker looks the domain up again by itself: null for a pending or failed domain
 * (verifyDomain moves those) and when automatic checks are off.
 */
export function nextCheckAt(status: DomainStatus, now: number, policy: DomainCheckPolicy): number | null {
  if (policy.recheckMs === 0) return null;
  if (status === "verified") return now + policy.recheckMs;
  if (status === "temporary_failure") return now + Math.min(FAILING_RECHECK_MS, policy.recheckMs);
  return null;
}
