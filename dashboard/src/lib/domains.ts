import type { Domain, DomainRecord } from "mailroom";

export type DomainRecordStatus = DomainRecord["status"];

/** Said on every domain page: the environment switch does not apply to domains. */
export const DOMAINS_SCOPE_NOTE = "Domains belong to the workspace: live and sandbox mail both use them, whichever environment is shown.";

/** What each record is for, in words (the contract's DomainRecord.purpose). */
export const RECORD_PURPOSES: Record<DomainRecord["purpose"], { label: string; why: string }> = {
  return_path: { label: "Return path", why: "Routes bounces back to Mailroom (the envelope sender's domain)." },
  spf: { label: "SPF", why: "Allows this server to send for the return-path domain." },
  dkim: { label: "DKIM", why: "Publishes a key that receivers check each message's signature with." },
  dkim_next: { label: "New DKIM key", why: "A new key of the rotation in progress: once every new key is found, the domain signs with them." },
  dmarc: { label: "DMARC", why: "Tells receivers what to do with mail that fails SPF and DKIM (p=none to start with)." },
  tracking: { label: "Tracking domain", why: "Points the tracking domain at Mailroom, so open images and tracked links use your own host name." },
};

/**
 * Whether a record is one the domain merely should have (DMARC, a tracking domain's CNAME).
 * `required: false` says only that the domain's status does not depend on the record: a
 * rotation's `dkim_next` record is not required in that sense, yet the rotation never ends
 * without it, so it is never "recommended" (nor counted among the records to publish "too").
 */
export function isRecommended(record: DomainRecord): boolean {
  return !record.required && record.purpose !== "dkim_next";
}

/** What the records table says of a record's need, beside its purpose. */
export function recordNeed(record: DomainRecord): string {
  if (record.required) return "Required";
  return isRecommended(record) ? "Recommended" : "For the key rotation";
}

/** A domain's open or click tracking default, as the settings form's select holds it. */
export type TrackingChoice = "workspace" | "on" | "off";

export const TRACKING_CHOICES: Array<{ value: TrackingChoice; label: string }> = [
  { value: "workspace", label: "Workspace default" },
  { value: "on", label: "On" },
  { value: "off", label: "Off" },
];

/** null (follow the workspace) or on/off, to the form's choice. */
export function trackingChoice(value: boolean | null): TrackingChoice {
  return value === null ? "workspace" : value ? "on" : "off";
}

/** The form's choice back to the contract's value (null: follow the workspace). */
export function trackingValue(choice: string): boolean | null {
  return choice === "on" ? true : choice === "off" ? false : null;
}

/** A domain's status in words (the contract's DomainStatus). */
export const DOMAIN_STATUS_LABELS: Record<Domain["status"], string> = {
  pending: "Pending",
  verified: "Verified",
  temporary_failure: "Records missing",
  failed: "Failed",
};

export function isDomainStatus(value: string | null): value is Domain["status"] {
  return value !== null && Object.keys(DOMAIN_STATUS_LABELS).includes(value);
}

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
