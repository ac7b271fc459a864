import { DEFAULT_OVERLAP, overlapChoices } from "../lib/rotation-overlaps";

/**
 * The overlap choice of a rotation, as the radio group `overlap_seconds` of its form, up to
 * `maxSeconds`: the limit of the operation it is for (lib/rotation-overlaps.ts), which differs
 * between an API key and a webhook endpoint's signing secret.
 */
export function OverlapFieldset({ maxSeconds, legend = "Keep the old secret working for" }: { maxSeconds: number; legend?: string }) {
  return (
    <fieldset className="radio-group">
      <legend>{legend}</legend>
      {overlapChoices(maxSeconds).map((overlap) => (
        <label key={overlap.seconds} className="radio">
          <input type="radio" name="overlap_seconds" value={overlap.seconds} defaultChecked={overlap.seconds === DEFAULT_OVERLAP} />
          {overlap.label}
        </label>
      ))}
    </fieldset>
  );
}
