import { useState } from "react";
import type { SuppressionBatchItem } from "mailroom";
import { useApi } from "../../api/api-context";
import { useAction } from "../../api/use-request";
import { ActionButton } from "../../components/action-button";
import { Card } from "../../components/card";
import { ErrorState } from "../../components/error-state";
import { Field } from "../../components/field";
import { ENVIRONMENT_LABELS } from "../../lib/environment";
import { formatCount } from "../../lib/format";
import { readForm } from "../../lib/forms";
import { importChunks, importOutcome, readAddressList, type ImportOutcome } from "../../lib/suppression-import";
import { isAddableReason, type AddableReason } from "../../lib/suppressions";
import { ReasonSelect } from "./reason-select";

function ImportResult({ outcome }: { outcome: ImportOutcome }) {
  const { total, answered, added, alreadySuppressed, refused } = outcome;
  return (
    <div className={`notice suppression-import__result ${refused.length > 0 ? "notice--warning" : "notice--success"}`} role="status" data-testid="import-result">
      <p>
        {answered < total && `Stopped after ${formatCount(answered)} of ${formatCount(total)} addresses: `}
        {formatCount(added)} added, {formatCount(alreadySuppressed)} already suppressed, {formatCount(refused.length)} refused.
      </p>
      {refused.length > 0 && (
        <ul className="suppression-import__refused" aria-label="Refused addresses">
          {refused.map((address) => (
            <li key={address.line} data-testid="import-refused">
              Line {address.line}: <strong>{address.email || "(empty)"}</strong>: {address.problem}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/**
 * Suppress many addresses at once (createSuppressionBatch): pasted one per line or as a CSV
 * export, sent 1,000 per call, one call after the other, with each refused address shown at its
 * line. An address already suppressed is answered as such, so importing the same text again adds
 * nothing twice.
 */
export function ImportSuppressionsCard({ onImported }: { onImported: () => void }) {
  const api = useApi();
  const [invalid, setInvalid] = useState<string | null>(null);
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null);
  const [outcome, setOutcome] = useState<ImportOutcome | null>(null);
  const importList = useAction(async (text: string, reason: AddableReason) => {
    setOutcome(null);
    const list = readAddressList(text, reason);
    setInvalid(list.ok ? null : list.error);
    if (!list.ok) return;
    const batches: SuppressionBatchItem[][] = [];
    let done = 0;
    try {
      for (const chunk of importChunks(list.rows)) {
        setProgress({ done, total: list.rows.length });
        const batch = await api.call((mr) => mr.suppressions.createBatch({ suppressions: chunk.map((row) => row.body) }));
        batches.push(batch.data);
        done += chunk.length;
      }
    } finally {
      // What was answered before a failure is stored: say so, and show it in the list.
      setProgress(null);
      if (batches.length > 0) {
        setOutcome(importOutcome(list.rows, batches));
        onImported();
      }
    }
  });

  return (
    <Card title="Import addresses">
      <form
        className="form"
        onSubmit={(event) => {
          const form = readForm(event);
          const reason = form.text("reason");
          void importList.run(form.raw("addresses"), isAddableReason(reason) ? reason : "manual");
        }}
      >
        <p className="muted">
          Adds many addresses to the {ENVIRONMENT_LABELS[api.environment].toLowerCase()} list at once, for example the list exported from another
          provider. Addresses already on the list stay as they are.
        </p>
        <Field
          label="Addresses"
          hint={
            <>
              One per line (lines starting with <code>#</code> are left out), or a CSV export with its header row: a column named{" "}
              <code>email</code>, and optionally <code>reason</code> and <code>detail</code>.
            </>
          }
        >
          <textarea name="addresses" rows={8} required spellCheck={false} className="suppression-import__addresses" placeholder={"ada@example.com\ngrace@example.com"} />
        </Field>
        <Field label="Reason" hint="For the addresses that give none.">
          <ReasonSelect className="suppression-import__reason" />
        </Field>
        {invalid !== null && (
          <p className="notice notice--warning" role="alert" data-testid="import-invalid">
            {invalid} Nothing was imported.
          </p>
        )}
        {progress !== null && (
          <p className="notice notice--progress" role="status" data-testid="import-progress">
            <span className="spinner" aria-hidden="true" />
            Importing… {formatCount(progress.done)} / {formatCount(progress.total)} addresses
          </p>
        )}
        {importList.error !== undefined && <ErrorState error={importList.error} title="Could not import the addresses" compact />}
        {outcome !== null && <ImportResult outcome={outcome} />}
        <div className="form__actions">
          <ActionButton label="Import" pendingLabel="Importing…" pending={importList.pending} />
        </div>
      </form>
    </Card>
  );
}
