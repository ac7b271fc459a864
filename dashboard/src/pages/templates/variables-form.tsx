import { useEffect, useId, useRef, useState } from "react";
import { defaultEdit, isVariableType, toRow, VARIABLE_TYPES, type VariableRow, type VariableType } from "../../lib/templates";

// A string's default is typed as it is; any other type's as JSON.
const DEFAULT_PLACEHOLDERS: Record<VariableType, string> = { string: "None", number: "JSON, e.g. 0", boolean: "true or false", object: "JSON, e.g. {}", array: "JSON, e.g. []" };
// A default of "" (set through the API), which an empty field cannot show otherwise; typing
// in the field and emptying it again means none.
const EMPTY_STRING_DEFAULT = 'Empty text ("")';

interface VariablesFormProps {
  rows: VariableRow[];
  onChange: (rows: VariableRow[]) => void;
  readOnly: boolean;
  /** The variables the saved content uses (the server's referenced_variables). */
  referenced: readonly string[];
}

/**
 * The variables a template declares, one row each: sending and rendering check the given values
 * against them. A row's controls are named after its position ("Variable 2 name"), since its
 * name field may be empty while it is being typed.
 */
export function VariablesForm({ rows, onChange, readOnly, referenced }: VariablesFormProps) {
  const change = (key: number, patch: Partial<VariableRow>) => onChange(rows.map((row) => (row.key === key ? { ...row, ...patch } : row)));
  // Declare takes its own button away (the variable is declared now): the keyboard's focus goes
  // to the row it added rather than falling to the page's <body>.
  const [declaredKey, setDeclaredKey] = useState<number | null>(null);
  const declaredName = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (declaredKey !== null) declaredName.current?.focus();
  }, [declaredKey]);
  const declare = (name: string) => {
    const row = toRow({ name, type: "string", required: false });
    setDeclaredKey(row.key);
    onChange([...rows, row]);
  };
  const reasonIds = useId();
  const declared = new Set(rows.map((row) => row.name.trim()));
  const undeclared = referenced.filter((name) => !declared.has(name));
  const unused = [...declared].filter((name) => name !== "" && !referenced.includes(name));
  return (
    <div className="variables">
      {undeclared.length > 0 && (
        <div className="notice variables__undeclared" role="note" data-testid="undeclared-variables">
          <p>
            The saved content uses {listOf(undeclared)} without declaring {undeclared.length === 1 ? "it" : "them"}. Sends may give{" "}
            {undeclared.length === 1 ? "it" : "them"} with any type, or leave {undeclared.length === 1 ? "it" : "them"} out; declare{" "}
            {undeclared.length === 1 ? "it" : "them"} to check the type, require a value or give a default.
          </p>
          {!readOnly && (
            <div className="variables__declare">
              {undeclared.map((name) => (
                <button key={name} type="button" className="button button--small" onClick={() => declare(name)}>
                  Declare {name}
                </button>
              ))}
            </div>
          )}
        </div>
      )}
      {unused.length > 0 && (
        <p className="muted card__padded" data-testid="unused-variables">
          Declared, not used by the saved content: {listOf(unused)}. Sends must still give {unused.length === 1 ? "it" : "them"} where required.
        </p>
      )}
      {rows.length === 0 ? (
        <p className="muted card__padded">No variables declared: sends may give the ones the content uses, with any type.</p>
      ) : (
        <table className="table variables__table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Required</th>
              <th scope="col">Default</th>
              <th scope="col">Description</th>
              {!readOnly && (
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {rows.map((row, index) => {
              const label = `Variable ${index + 1}`;
              // Why a required variable's Default is disabled: words under it, which it names with
              // aria-describedby (a placeholder or a tooltip says nothing to a screen reader or a touch).
              const requiredReasonId = `${reasonIds}-${row.key}`;
              return (
                <tr key={row.key} data-testid="variable-row">
                  <td>
                    <input
                      ref={row.key === declaredKey ? declaredName : undefined}
                      aria-label={`${label} name`}
                      value={row.name}
                      readOnly={readOnly}
                      required
                      maxLength={64}
                      pattern="[A-Za-z_][A-Za-z0-9_]*"
                      spellCheck={false}
                      className="mono"
                      onChange={(event) => change(row.key, { name: event.target.value })}
                    />
                  </td>
                  <td>
                    <select
                      aria-label={`${label} type`}
                      value={row.type}
                      disabled={readOnly}
                      onChange={(event) => {
                        if (isVariableType(event.target.value)) change(row.key, { type: event.target.value });
                      }}
                    >
                      {VARIABLE_TYPES.map((type) => (
                        <option key={type} value={type}>
                          {type}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td className="variables__required">
                    <input
                      type="checkbox"
                      aria-label={`${label} required`}
                      checked={row.required}
                      disabled={readOnly}
                      onChange={(event) => change(row.key, { required: event.target.checked })}
                    />
                  </td>
                  <td>
                    <input
                      aria-label={`${label} default`}
                      value={row.required ? "" : row.defaultText}
                      readOnly={readOnly}
                      disabled={row.required}
                      aria-describedby={row.required ? requiredReasonId : undefined}
                      placeholder={row.required ? undefined : row.type === "string" && row.emptyDefault ? EMPTY_STRING_DEFAULT : DEFAULT_PLACEHOLDERS[row.type]}
                      className={row.type === "string" ? undefined : "mono"}
                      onChange={(event) => change(row.key, defaultEdit(event.target.value))}
                    />
                    {row.required && (
                      <span id={requiredReasonId} className="field__hint variables__reason">
                        None: a required variable is given by every send.
                      </span>
                    )}
                  </td>
                  <td>
                    <input
                      aria-label={`${label} description`}
                      value={row.description}
                      readOnly={readOnly}
                      maxLength={500}
                      onChange={(event) => change(row.key, { description: event.target.value })}
                    />
                  </td>
                  {!readOnly && (
                    <td className="table__actions">
                      <button
                        type="button"
                        className="button button--small"
                        aria-label={`Remove ${row.name || label.toLowerCase()}`}
                        onClick={() => onChange(rows.filter((candidate) => candidate.key !== row.key))}
                      >
                        Remove
                      </button>
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {!readOnly && (
        <div className="card__padded">
          <button type="button" className="button button--small" onClick={() => onChange([...rows, toRow()])}>
            Add variable
          </button>
        </div>
      )}
    </div>
  );
}

/** Names in code type, joined as a sentence says them: `a`, `b` and `c`. */
function listOf(names: readonly string[]) {
  return names.map((name, index) => (
    <span key={name}>
      {index === 0 ? "" : index === names.length - 1 ? " and " : ", "}
      <code>{name}</code>
    </span>
  ));
}
