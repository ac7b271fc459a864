import type { ReactNode } from "react";

interface TableProps {
  /** Names the table for screen readers when no heading does. */
  caption?: string;
  /** Column headings, in order. */
  columns: string[];
  /** A last column of row buttons, named for screen readers only. */
  actions?: boolean;
  /** Rows are being replaced (a reload, another page). */
  busy?: boolean;
  className?: string;
  /** The rows (`<tr>`s). */
  children: ReactNode;
}

/** A data table with its header row. */
export function Table({ caption, columns, actions = false, busy = false, className = "table", children }: TableProps) {
  return (
    <table className={className}>
      {caption && <caption className="visually-hidden">{caption}</caption>}
      <thead>
        <tr>
          {columns.map((column) => (
            <th scope="col" key={column}>
              {column}
            </th>
          ))}
          {actions && (
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          )}
        </tr>
      </thead>
      <tbody aria-busy={busy || undefined}>{children}</tbody>
    </table>
  );
}
