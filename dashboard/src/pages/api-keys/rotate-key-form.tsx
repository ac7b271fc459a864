import type { ApiKey, ApiKeyWithSecret } from "mailroom";
import { useApi } from "../../api/api-context";
import { useAction } from "../../api/use-request";
import { ActionButton, DialogActions } from "../../components/action-button";
import { ErrorState } from "../../components/error-state";
import { readForm } from "../../lib/forms";

// How long a rotated key's old secret keeps working, so deployments can switch over; the
// contract's default is 24 hours.
const OVERLAPS = [
  { seconds: 0, label: "None: the old secret stops now" },
  { seconds: 3600, label: "1 hour" },
  { seconds: 86_400, label: "24 hours" },
  { seconds: 604_800, label: "7 days" },
] as const;
const DEFAULT_OVERLAP = 86_400;

/** rotateApiKey: a new secret, the old one overlapping for a chosen time. */
export function RotateKeyForm({ apiKey, onRotated, onCancel }: { apiKey: ApiKey; onRotated: (key: ApiKeyWithSecret) => void; onCancel: () => void }) {
  const api = useApi();
  const rotate = useAction(async (overlapSeconds: number) => {
    onRotated(await api.call((mr) => mr.apiKeys.rotate(apiKey.id, { overlap_seconds: overlapSeconds })));
  });
  return (
    <form onSubmit={(event) => void rotate.run(Number(readForm(event).text("overlap_seconds")))}>
      <div className="dialog__body">
        <p>
          <strong>{apiKey.name}</strong> gets a new secret. Update your applications with it before the old one stops working.
        </p>
        <fieldset className="radio-group">
          <legend>Keep the old secret working for</legend>
          {OVERLAPS.map((overlap) => (
            <label key={overlap.seconds} className="radio">
              <input type="radio" name="overlap_seconds" value={overlap.seconds} defaultChecked={overlap.seconds === DEFAULT_OVERLAP} />
              {overlap.label}
            </label>
          ))}
        </fieldset>
      </div>
      {rotate.error !== undefined && <ErrorState error={rotate.error} title="Could not rotate the key" compact />}
      <DialogActions onCancel={onCancel} pending={rotate.pending}>
        <ActionButton label="Rotate key" pendingLabel="Rotating…" pending={rotate.pending} />
      </DialogActions>
    </form>
  );
}
