import { Fragment } from "react";
import type { DomainRecord } from "mailroom";
import { CopyButton } from "../../components/copy-button";
import { Table } from "../../components/table";
import { RECORD_PURPOSES, recordNeed } from "../../lib/domains";
import { RecordStatusBadge } from "./domain-badges";

/** A host name that wraps between its labels rather than inside them (the text itself is unchanged). */
function HostName({ name }: { name: string }) {
  const labels = name.split(".");
  return labels.map((label, index) => (
    <Fragment key={index}>
      {label}
      {index < labels.length - 1 && (
        <>
          .<wbr />
        </>
      )}
    </Fragment>
  ));
}

/** What the last check saw, next to the status: the point of `found` is fixing a mismatch. */
function Found({ record }: { record: DomainRecord }) {
  if (record.status === "missing") return <p className="record__found muted">Nothing is published at this name yet.</p>;
  if (record.status !== "mismatch") return null;
  return (
    <div className="record__found">
      <p className="muted">Found instead:</p>
      <ul className="plain-list">
        {record.found.map((value) => (
          <li key={value}>
            <code className="break">{value}</code>
          </li>
        ))}
      </ul>
    </div>
  );
}

/**
 * The records to publish, one row each, with their status as of the last verification (or
 * "Checking…" while a verification runs). Name and value have Copy buttons: a DKIM key is
 * hundreds of characters that nobody should retype.
 */
export function RecordsTable({ records, checking }: { records: DomainRecord[]; checking: boolean }) {
  return (
    <Table className="table records" columns={["Record", "Name", "Value", "Status"]} busy={checking}>
      {records.map((record) => {
        const purpose = RECORD_PURPOSES[record.purpose];
        return (
          <tr key={`${record.purpose}:${record.type}:${record.name}`} data-testid="dns-record-row">
            <td className="records__record">
              <p className="records__title">
                <strong data-testid="record-purpose">{purpose.label}</strong>{" "}
                <span className="records__type" data-testid="record-type">
                  {record.type}
                </span>
              </p>
              <p className="records__facts">
                <span className={record.required ? "records__required" : undefined} data-testid="record-need">
                  {recordNeed(record)}
                </span>
                {record.priority !== null && (
                  <>
                    {" · "}
                    Priority <span data-testid="record-priority">{record.priority}</span>
                  </>
                )}
              </p>
              <p className="records__why">{purpose.why}</p>
            </td>
            <td className="records__name">
              <div className="records__copyable">
                <code className="records__host" data-testid="record-name">
                  <HostName name={record.name} />
                </code>
                <CopyButton text={record.name} accessibleName="Copy name" />
              </div>
            </td>
            <td className="records__value">
              <div className="records__copyable">
                <code className="break" data-testid="record-value">
                  {record.value}
                </code>
                <CopyButton text={record.value} accessibleName="Copy value" />
              </div>
            </td>
            <td className="records__status" data-testid="record-status">
              {checking ? (
                <span className="records__checking">
                  <span className="spinner" aria-hidden="true" />
                  Checking…
                </span>
              ) : (
                <>
                  <RecordStatusBadge status={record.status} />
                  <Found record={record} />
                </>
              )}
            </td>
          </tr>
        );
      })}
    </Table>
  );
}
