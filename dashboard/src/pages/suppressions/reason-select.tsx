import { ADDABLE_REASONS, reasonLabel } from "../../lib/suppressions";

/**
 * The `reason` a member may give an address (createSuppression's and the import's), manual by
 * default. Takes the id and description a Field gives its control.
 */
export function ReasonSelect(props: { id?: string; "aria-describedby"?: string; className?: string }) {
  return (
    <select name="reason" defaultValue="manual" {...props}>
      {ADDABLE_REASONS.map((reason) => (
        <option key={reason} value={reason}>
          {reasonLabel(reason)}
        </option>
      ))}
    </select>
  );
}
