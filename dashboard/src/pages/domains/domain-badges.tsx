import type { Domain } from "mailroom";
import { DOMAIN_STATUS_LABELS, RECORD_STATUS_LABELS, type DomainRecordStatus } from "../../lib/domains";

/** A domain's status: whether live mail may use it, and whether its records need attention. */
export function DomainStatusBadge({ status }: { status: Domain["status"] }) {
  return <span className={`badge badge--domain-${status}`}>{DOMAIN_STATUS_LABELS[status]}</span>;
}

/** A DNS record's status as of the last verification. */
export function RecordStatusBadge({ status }: { status: DomainRecordStatus }) {
  return <span className={`badge badge--record-${status}`}>{RECORD_STATUS_LABELS[status]}</span>;
}
