import type { Domain, DomainRecord } from "mailroom";

export type DomainRecordStatus = DomainRecord["status"];

/** Said on every domain page: the environment switch does not apply to domains. */
export const DOMAINS_SCOPE_NOTE = "Domains belong to the workspace: live and sandbox mail both use them, whichever environment is shown.";

/** What each record is for, in words (the contract's DomainRecord.purpose). */
export const RECORD_PURPOSES: Record<DomainRecord["purpose"], { label: string; why: string }> = {
  return_path: { label: "Return path", why: "Routes bounces back to Mailroom (the envelope sender's domain)." },
  spf: { label: "SPF", why: "Allows this server to send for the return-path domain." },
  dkim: { label: "DKIM", why: "Publishes a key that receivers check each message's signature with." },
  dmarc: { label: "DMARC", why: "Tells receivers what to do with mail that fails SPF and DKIM (p=none to start with)." },
};

export const RECORD_STATUS_LABELS: Record<DomainRecordStatus, string> = {
  pending: "Not checked yet",
  verified: "Verified",
  missing: "Missing",
  mismatch: "Mismatch",
};

/** Required records found at the last verification, of all required records. */
export function requiredProgress(domain: Domain): { verified: number; required: number } {
  const required = domain.records.filter((record) => record.required);
  return { verified: required.filter((record) => record.status === "verified").length, required: required.length };
}
