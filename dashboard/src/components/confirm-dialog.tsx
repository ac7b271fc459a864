import type { ReactNode } from "react";
import { useAction } from "../api/use-request";
import { ActionButton, DialogActions } from "./action-button";
import { Dialog } from "./dialog";
import { ErrorState } from "./error-state";

interface ConfirmDialogProps<Target> {
  /** What the action is about (a key, a member); the dialog is open while there is one. */
  target: Target | null;
  title: string;
  children: (target: Target) => ReactNode;
  /** The confirming button's name: the action itself ("Revoke key"), never a bare "OK". */
  confirmLabel: string;
  /** The dismissing button's name; change it when "Cancel" would be confused with the action. */
  dismissLabel?: string;
  onConfirm: (target: Target) => Promise<void>;
  onClose: () => void;
}

/** Asks before something that cannot be undone, runs it, and shows its error if it fails. */
export function ConfirmDialog<Target>({ target, title, children, confirmLabel, dismissLabel, onConfirm, onClose }: ConfirmDialogProps<Target>) {
  const action = useAction(async (confirmed: Target) => {
    await onConfirm(confirmed);
    onClose();
  });
  const close = () => {
    action.reset();
    onClose();
  };
  return (
    <Dialog open={target !== null} title={title} onClose={close}>
      {target !== null && <div className="dialog__body">{children(target)}</div>}
      {action.error !== undefined && <ErrorState error={action.error} compact />}
      <DialogActions onCancel={close} cancelLabel={dismissLabel} pending={action.pending}>
        <ActionButton
          label={confirmLabel}
          pendingLabel="Working…"
          pending={action.pending}
          variant="danger"
          onClick={() => {
            if (target !== null) void action.run(target);
          }}
        />
      </DialogActions>
    </Dialog>
  );
}
