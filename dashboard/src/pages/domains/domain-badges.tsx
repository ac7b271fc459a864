import type { Domain } from "mailroom";
import { RECORD_STATUS_LABELS, type DomainRecordStatus } from "../../lib/domains";

/** A domain's status: verified (live mail may use it) or pending. */
export function DomainStatusBadge({ status }: { status: Domain["status"] }) {
  return <span className={`badge badge--domain-${status}`}>{status}</span>;
}

/** A DNS record's status as of the last verification. */
export function RecordStatusBadge({ status }: { status: DomainRecordStatus }) {
  return <span className={`badge badge--record-${status}`}>{RECORD_STATUS_LABELS[status]}</span>;
}
