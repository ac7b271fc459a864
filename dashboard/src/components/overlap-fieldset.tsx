// How long a rotated secret's predecessor keeps working, so deployments can switch over: offered
// when an API key or a webhook endpoint's signing secret is rotated. Both contracts default to
// 24 hours and allow at most 7 days.
const OVERLAPS = [
  { seconds: 0, label: "None: the old secret stops now" },
  { seconds: 3600, label: "1 hour" },
  { seconds: 86_400, label: "24 hours" },
  { seconds: 604_800, label: "7 days" },
] as const;
const DEFAULT_OVERLAP = 86_400;

/** The overlap choice of a rotation, as the radio group `overlap_seconds` of its form. */
export function OverlapFieldset({ legend = "Keep the old secret working for" }: { legend?: string }) {
  return (
    <fieldset className="radio-group">
      <legend>{legend}</legend>
      {OVERLAPS.map((overlap) => (
        <label key={overlap.seconds} className="radio">
          <input type="radio" name="overlap_seconds" value={overlap.seconds} defaultChecked={overlap.seconds === DEFAULT_OVERLAP} />
          {overlap.label}
        </label>
      ))}
    </fieldset>
  );
}
