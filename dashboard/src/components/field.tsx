import { cloneElement, useId, type ReactElement, type ReactNode } from "react";

interface FieldProps {
  label: string;
  hint?: ReactNode;
  /** One form control (input, select, textarea). */
  children: ReactElement<{ id?: string; "aria-describedby"?: string }>;
}

/**
 * A form control with its visible label, tied by id rather than by wrapping: a wrapping label
 * would add the control's own text (a select's chosen option) to its accessible name, and tests
 * find controls by that name. The hint describes the control without becoming part of its name.
 */
export function Field({ label, hint, children }: FieldProps) {
  const id = useId();
  const hintId = `${id}-hint`;
  return (
    <div className="field">
      <label htmlFor={id} className="field__label">
        {label}
      </label>
      {cloneElement(children, { id, ...(hint ? { "aria-describedby": hintId } : {}) })}
      {hint && (
        <span id={hintId} className="field__hint">
          {hint}
        </span>
      )}
    </div>
  );
}
