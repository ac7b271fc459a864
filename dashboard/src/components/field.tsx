import { cloneElement, useId, type ReactElement, type ReactNode } from "react";

interface FieldProps {
  label: string;
  hint?: ReactNode;
  /** What the server said is wrong with this field (a 422's problems at its pointer). */
  errors?: readonly string[];
  /** One form control (input, select, textarea). */
  children: ReactElement<{ id?: string; "aria-describedby"?: string; "aria-invalid"?: boolean }>;
}

/**
 * A form control with its visible label, tied by id rather than by wrapping: a wrapping label
 * would add the control's own text (a select's chosen option) to its accessible name, and tests
 * find controls by that name. The hint and any errors describe the control without becoming
 * part of its name.
 */
export function Field({ label, hint, errors = [], children }: FieldProps) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorsId = `${id}-errors`;
  const describedBy = [hint ? hintId : "", errors.length > 0 ? errorsId : ""].filter(Boolean).join(" ");
  return (
    <div className="field">
      <label htmlFor={id} className="field__label">
        {label}
      </label>
      {cloneElement(children, { id, ...(describedBy ? { "aria-describedby": describedBy } : {}), ...(errors.length > 0 ? { "aria-invalid": true } : {}) })}
      {hint && (
        <span id={hintId} className="field__hint">
          {hint}
        </span>
      )}
      {errors.length > 0 && (
        <ul id={errorsId} className="plain-list field__errors">
          {errors.map((error) => (
            <li key={error}>{error}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
