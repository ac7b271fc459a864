import { isVariableType, toRow, VARIABLE_TYPES, type VariableRow, type VariableType } from "../../lib/templates";

// A string's default is typed as it is; any other type's as JSON.
const DEFAULT_PLACEHOLDERS: Record<VariableType, string> = { string: "None", number: "JSON, e.g. 0", boolean: "true or false", object: "JSON, e.g. {}", array: "JSON, e.g. []" };

interface VariablesFormProps {
  rows: VariableRow[];
  onChange: (rows: VariableRow[]) => void;
  readOnly: boolean;
}

/**
 * The variables a template declares, one row each: sending and rendering check the given values
 * against them. A row's controls are named after its position ("Variable 2 name"), since its
 * name field may be empty while it is being typed.
 */
export function VariablesForm({ rows, onChange, readOnly }: VariablesFormProps) {
  const change = (key: number, patch: Partial<VariableRow>) => onChange(rows.map((row) => (row.key === key ? { ...row, ...patch } : row)));
  return (
    <div className="variables">
      {rows.length === 0 ? (
        <p className="muted card__padded">No variables declared: the template must not use any.</p>
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
              return (
                <tr key={row.key} data-testid="variable-row">
                  <td>
                    <input
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
                    {/* A required variable has no default: every send gives it. */}
                    <input
                      aria-label={`${label} default`}
                      value={row.required ? "" : row.defaultText}
                      readOnly={readOnly}
                      disabled={row.required}
                      placeholder={row.required ? "—" : DEFAULT_PLACEHOLDERS[row.type]}
                      className={row.type === "string" ? undefined : "mono"}
                      onChange={(event) => change(row.key, { defaultText: event.target.value })}
                    />
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
