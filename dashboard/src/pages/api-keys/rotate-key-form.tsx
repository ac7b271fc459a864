import type { ApiKey, ApiKeyWithSecret } from "mailroom";
import { useApi } from "../../api/api-context";
import { useAction } from "../../api/use-request";
import { ActionButton, DialogActions } from "../../components/action-button";
import { ErrorState } from "../../components/error-state";
import { OverlapFieldset } from "../../components/overlap-fieldset";
import { readForm } from "../../lib/forms";
import { API_KEY_OVERLAP_MAX } from "../../lib/rotation-overlaps";

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
        <OverlapFieldset maxSeconds={API_KEY_OVERLAP_MAX} />
      </div>
      {rotate.error !== undefined && <ErrorState error={rotate.error} title="Could not rotate the key" compact />}
      <DialogActions onCancel={onCancel} pending={rotate.pending}>
        <ActionButton label="Rotate key" pendingLabel="Rotating…" pending={rotate.pending} />
      </DialogActions>
    </form>
  );
}
