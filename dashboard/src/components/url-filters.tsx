import type { ReactNode } from "react";
import { useSearchParams } from "wouter";
import { readForm } from "../lib/forms";
import { Field } from "./field";
import { SelectOptions } from "./select-options";

interface UrlFiltersProps {
  /** The query string the fields were filled from (the page's `useSearchParams()`). */
  params: URLSearchParams;
  /** The fields' names, which are also their query parameters. */
  names: readonly string[];
  /** The fields, each named after its parameter and filled from `params`. */
  children: ReactNode;
}

/**
 * A list's filters, kept in the URL's query string so that a filtered view can be bookmarked and
 * shared: Apply writes the non-empty fields to it (and drops the rest), Clear empties it.
 */
export function UrlFilters({ params, names, children }: UrlFiltersProps) {
  const [, setParams] = useSearchParams();
  const active = names.some((name) => params.has(name));
  return (
    // Keyed by the query string: the fields show what the URL says after Back, or after anything
    // else changes it (the message log's search box).
    <form
      key={params.toString()}
      className="filters"
      aria-label="Filters"
      onSubmit={(event) => {
        const form = readForm(event);
        setParams(Object.fromEntries(names.map((name) => [name, form.text(name)]).filter(([, value]) => value !== "")));
      }}
    >
      {children}
      <div className="filters__actions">
        <button type="submit" className="button button--primary">
          Apply filters
        </button>
        {active && (
          <button type="button" className="button" onClick={() => setParams({})}>
            Clear filters
          </button>
        )}
      </div>
    </form>
  );
}

interface FilterSelectProps {
  /** The query parameter, and the select's name. */
  name: string;
  label: string;
  /** The first option, which filters nothing ("All statuses"). */
  anyLabel: string;
  options: ReadonlyArray<{ value: string; label: string }>;
  params: URLSearchParams;
}

/** One of UrlFilters' fields: pick one value of the parameter, or any. */
export function FilterSelect({ name, label, anyLabel, options, params }: FilterSelectProps) {
  return (
    <Field label={label}>
      <select name={name} defaultValue={params.get(name) ?? ""}>
        <SelectOptions empty={anyLabel} options={options} />
      </select>
    </Field>
  );
}
