import type { components } from "../../generated/v1.js";

/**
 * A sending domain's health over time (docs/domains.md#automatic-checks). Every check of its
 * DNS records, by hand (verifyDomain) or by the worker on its own, goes through `afterCheck`:
 *
 * - pending -> verified when every required record is found;
 * - verified -> temporary_failure when a check misses one, and back when they are all found;
 * - temporary_failure -> failed when they are still missing after the grace period;
 * - failed -> verified when a check finds them all (only verifyDomain checks a failed domain).
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

/** Whether live mail may be sent from a domain in this status. */
export function sendsLive(status: DomainStatus): boolean {
  return status === "verified" || status === "temporary_failure";
}

/** When the grace period of a domain failing since `failingSince` ends: live mail is sent until then. */
export function graceEndsAt(failingSince: number, policy: DomainCheckPolicy): number {
  return failingSince + policy.graceMs;
}

/** Where a check that found (or did not find) every required record leaves the domain. */
export function afterCheck(previous: DomainHealth, requiredFound: boolean, now: number, policy: DomainCheckPolicy): DomainHealth {
  if (requiredFound) return { status: "verified", failing_since: null };
  // A domain never verified has nothing to fall from; a failed one waits for its records.
  if (previous.status === "pending" || previous.status === "failed") return { status: previous.status, failing_since: previous.failing_since };
  const failingSince = previous.failing_since ?? now;
  return { status: now >= graceEndsAt(failingSince, policy) ? "failed" : "temporary_failure", failing_since: failingSince };
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
