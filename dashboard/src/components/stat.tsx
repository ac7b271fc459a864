/** One key figure of a `<dl className="stats">`: its label, its value, and a note under it. */
export function Stat({ label, value, note }: { label: string; value: string; note?: string }) {
  return (
    <div className="stat">
      <dt>{label}</dt>
      <dd>
        <span className="stat__value">{value}</span>
        {note && <span className="stat__note">{note}</span>}
      </dd>
    </div>
  );
}
