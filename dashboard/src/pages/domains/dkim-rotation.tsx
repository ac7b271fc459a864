import { Fragment } from "react";
import type { Domain } from "mailroom";
import { formatDate, formatDateTime } from "../../lib/format";

// How long the old DKIM records stay published after the switch (docs/domains.md#rotating-dkim-keys):
// receivers check a signature on arrival, and deferred mail or a report can arrive days later.
const KEEP_OLD_RECORDS_MS = 7 * 24 * 60 * 60 * 1000;

/** Names in code, as a sentence lists them: `a`, `b` and `c`. */
function CodeList({ items }: { items: string[] }) {
  return items.map((item, index) => (
    <Fragment key={item}>
      {index > 0 && (index === items.length - 1 ? " and " : ", ")}
      <code className="wrap-anywhere">{item}</code>
    </Fragment>
  ));
}

const selectors = (keys: Domain["dkim"]) => keys.map((key) => key.selector);

/** What Rotate DKIM keys does, in its confirmation dialog. */
export function RotateDkimExplanation({ domain }: { domain: Domain }) {
  return (
    <>
      <p>
        New DKIM keys are made for <strong>{domain.name}</strong> under new selectors, each with a TXT record to publish. Mail keeps being signed
        with the current keys (<CodeList items={selectors(domain.dkim)} />) until the new records are published and a verification finds them all;
        then the new keys sign, and the current ones are deleted.
      </p>
      {domain.dkim_rotation !== null && (
        <p>
          A rotation started {formatDateTime(domain.dkim_rotation.started_at)} is already waiting: its keys (
          <CodeList items={selectors(domain.dkim_rotation.keys)} />) are replaced, and their records no longer count. Publish the new ones instead.
        </p>
      )}
      <p className="muted">Rotate at least every six months, and at once if a key may have leaked.</p>
    </>
  );
}

/**
 * A rotation waiting for its new records: which keys sign meanwhile and what to do. Shown
 * whenever the page is, since the server's own check may end it (or not yet) without anyone
 * pressing anything, and the records to publish are easy to miss at the end of the table.
 */
export function DkimRotationNotice({ domain, canManage }: { domain: Domain; canManage: boolean }) {
  const rotation = domain.dkim_rotation;
  if (rotation === null) return null;
  return (
    <p className="notice" role="note" data-testid="dkim-rotation-notice">
      <strong>A DKIM key rotation started {formatDateTime(rotation.started_at)} is waiting for its new records.</strong> The new keys (
      <CodeList items={selectors(rotation.keys)} />) sign nothing until a verification finds all their records; until then the current keys (
      <CodeList items={selectors(domain.dkim)} />) go on signing mail from {domain.name}. Publish the records marked New DKIM key below, then{" "}
      {canManage ? "press Verify" : "ask an admin or an owner to press Verify"}
      {domain.next_check_at && <> (the server&apos;s automatic check, next at {formatDateTime(domain.next_check_at)}, switches too once it finds them)</>}
      . After the switch, the old DKIM records can be removed from DNS a week later, once mail signed with the old keys is no longer on its way.
    </p>
  );
}

/**
 * What a Verify did to the rotation that was waiting before it (`before`): nothing to say when
 * there was none. After the switch the old records are gone from the domain, so this is the
 * last place that can name them for removal.
 */
export function RotationOutcome({ domain, before }: { domain: Domain; before: Domain }) {
  if (before.dkim_rotation === null) return null;
  if (domain.dkim_rotation !== null) {
    return <> The new DKIM keys take over once all their records are found; until then mail is still signed with the current keys.</>;
  }
  const oldRecords = before.records.filter((record) => record.purpose === "dkim").map((record) => record.name);
  const removableFrom = domain.last_checked_at && new Date(Date.parse(domain.last_checked_at) + KEEP_OLD_RECORDS_MS).toISOString();
  return (
    <>
      {" "}
      <strong>The new DKIM keys now sign {domain.name}&apos;s mail</strong> (<CodeList items={selectors(domain.dkim)} />
      ). The old DKIM records (<CodeList items={oldRecords} />) can be removed from DNS in a week{removableFrom && <>, from {formatDate(removableFrom)}</>}
      : until then, mail signed with the old keys may still be on its way.
    </>
  );
}
