import type { ReactNode } from "react";

interface ActionButtonProps {
  label: string;
  /** Shown instead of the label while the request runs ("Saving…"). */
  pendingLabel: string;
  pending: boolean;
  /** Plain for an action beside the page's main one. */
  variant?: "primary" | "danger" | "plain";
  /** Without one, the button submits its form. */
  onClick?: () => void;
}

/** The button that starts a request: disabled, and saying so, while the request runs. */
export function ActionButton({ label, pendingLabel, pending, variant = "primary", onClick }: ActionButtonProps) {
  return (
    <button type={onClick ? "button" : "submit"} className={variant === "plain" ? "button" : `button button--${variant}`} disabled={pending} onClick={onClick}>
      {pending ? pendingLabel : label}
    </button>
  );
}

/** A dialog's footer: a way out, then the dialog's action. */
export function DialogActions({
  onCancel,
  cancelLabel = "Cancel",
  pending,
  children,
}: {
  onCancel: () => void;
  cancelLabel?: string;
  pending: boolean;
  children: ReactNode;
}) {
  return (
    <div className="dialog__actions">
      <button type="button" className="button" onClick={onCancel} disabled={pending}>
        {cancelLabel}
      </button>
      {children}
    </div>
  );
}
