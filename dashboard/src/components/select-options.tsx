/** A select's options: first the empty value ("None", "All statuses"), then the choices. */
export function SelectOptions({ empty, options }: { empty: string; options: ReadonlyArray<{ value: string; label: string }> }) {
  return (
    <>
      <option value="">{empty}</option>
      {options.map((option) => (
        <option key={option.value} value={option.value}>
          {option.label}
        </option>
      ))}
    </>
  );
}
