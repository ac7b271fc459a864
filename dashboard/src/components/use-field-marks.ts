import { useCallback, useState } from "react";

export interface FieldMarks<Field extends string> {
  has: (field: Field) => boolean;
  mark: (field: Field) => void;
}

/**
 * The fields a person has marked by what they did in a form (touched, or changed since a
 * refusal), so that the form shows a field's problem when it is theirs to see: the template
 * page's Send a test shows a field's problem once the field has been touched; the API key forms
 * hide a refused field's problem once it has been changed. The marks are dropped whenever `since`
 * changes (another refusal: its problems are all new).
 */
export function useFieldMarks<Field extends string>(since?: unknown): FieldMarks<Field> {
  const [marks, setMarks] = useState<{ since: unknown; fields: ReadonlySet<Field> }>({ since, fields: new Set() });
  const fields = Object.is(marks.since, since) ? marks.fields : new Set<Field>();
  const mark = useCallback(
    (field: Field) =>
      setMarks((previous) => {
        const current = Object.is(previous.since, since) ? previous.fields : new Set<Field>();
        return current.has(field) && current === previous.fields ? previous : { since, fields: new Set(current).add(field) };
      }),
    [since],
  );
  return { has: (field) => fields.has(field), mark };
}
